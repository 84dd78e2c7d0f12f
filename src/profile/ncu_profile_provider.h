#pragma once
// ProfileProvider that runs Nsight Compute (through ProcessRunner, so tests script it with
// FakeProcessRunner) on the request's command and reads its CSV.
#include "common/process.h"
#include "profile/ncu_command.h"
#include "profile/profile_provider.h"

namespace cutegen {

class NcuProfileProvider final : public ProfileProvider {
 public:
  // `options.ncu` given: used as is (a missing program becomes status ncu_missing when it fails to
  // start); empty: located with locate_ncu().
  NcuProfileProvider(ProcessRunner& runner, NcuOptions options) : runner_(runner), options_(std::move(options)) {}
  Result<ProfileReport> profile(const ProfileRequest& request) override;

 private:
  ProcessRunner& runner_;
  NcuOptions options_;
};

// Reads one finished ncu run into a report (pure: the provider's decisions, tested on fixtures).
// `log` is the --log-file contents (empty when ncu wrote none).
// How far the profiled runner got, from its result file: one clause for a failed profile's message
// (read only to explain, never for a verdict).
std::string runner_progress(const std::filesystem::path& result_file);

ProfileReport report_from_ncu_run(const ProcessResult& process, const std::string& log, const ProfileRequest& request,
                                  const std::vector<std::string>& requested_metrics);

}  // namespace cutegen
