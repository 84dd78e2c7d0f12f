#pragma once
// The loop's ProfileSource backed by the profile stage: the judge writes a runner job that calls the
// evaluated kernel's library on freshly staged inputs of the problem, and the ProfileProvider (Nsight
// Compute, or a fake) profiles that command. Counters that cannot be read still give a text (the
// provider's timing-only summary); an Error means the tool itself failed.
#include <filesystem>
#include <optional>

#include "agent/profile_source.h"
#include "profile/profile_provider.h"
#include "run/judge.h"

namespace cutegen {

class NcuProfileSource final : public ProfileSource {
 public:
  struct Options {
    std::filesystem::path problem;          // the problem file, whose inputs the worker stages for the profile
    int calls = 2;                          // forward calls profiled per summary
    std::filesystem::path work_dir;         // one subdirectory per profile (ncu's log)
  };
  NcuProfileSource(Judge& judge, ProfileProvider& provider, Options options)
      : judge_(judge), provider_(provider), options_(std::move(options)) {}

  Result<std::string> summary(const std::string& kernel_source, const Evaluation& evaluation) override;

  // The full report of the last profile (kernels, metrics, signals), for the run store.
  const std::optional<ProfileReport>& last_report() const { return last_; }

 private:
  Judge& judge_;
  ProfileProvider& provider_;
  Options options_;
  int count_ = 0;
  std::optional<ProfileReport> last_;
};

}  // namespace cutegen
