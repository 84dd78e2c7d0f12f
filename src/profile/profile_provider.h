#pragma once
// The profiler as the rest of cutegen sees it. `NcuProfileProvider` (ncu_profile_provider.h) runs
// Nsight Compute on a command (the runner, calling the candidate); `FakeProfileProvider` answers
// from a script for tests of whatever consumes profiles.
//
// Counters that cannot be read (ERR_NVGPUCTRPERM), a missing ncu, a timeout or a run that profiled no
// kernel are not errors: the report says what happened and carries a timing-only summary, so a
// caller always has a text to put in the prompt. `Error` is reserved for cutegen failing to do its
// own job (an unwritable work directory).
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "profile/kernel_profile.h"
#include "profile/profile_summary.h"

namespace cutegen {

struct ProfileRequest {
  std::vector<std::string> target;      // the command to profile: cutegen-runner --job J --result R
  std::filesystem::path target_result;  // R: how far the runner got, to explain a failed profile
  std::filesystem::path work_dir;       // ncu's log goes here
  SummaryContext context;               // workload class, calls, the judge's timing and floor
};

enum class ProfileStatus {
  ok,                    // counters read, kernels profiled
  counters_unavailable,  // ERR_NVGPUCTRPERM: no permission for the GPU's performance counters
  ncu_missing,           // Nsight Compute not installed / not found
  no_kernels,            // ncu ran, but no kernel matched (none launched, or all filtered out)
  timeout,               // ncu did not finish in time
  failed,                // ncu or the profiled command failed; `message` says how
};
std::string to_string(ProfileStatus s);

struct ProfileReport {
  ProfileStatus status = ProfileStatus::ok;
  std::string message;                   // one line, empty when ok
  std::vector<KernelProfile> kernels;    // longest first
  std::vector<Signal> signals;
  std::vector<std::string> notes;        // about the profile itself (metrics ncu did not report, ...)
  std::string summary;                   // the prompt text (<= 40 lines); timing-only unless ok
  std::vector<std::string> command;      // the ncu command that ran
  std::filesystem::path log_path;        // ncu's raw CSV log
  double seconds = 0;                    // wall time of the profiling run

  bool ok() const { return status == ProfileStatus::ok; }
  nlohmann::json to_json() const;
};

class ProfileProvider {
 public:
  virtual ~ProfileProvider() = default;
  virtual Result<ProfileReport> profile(const ProfileRequest& request) = 0;
};

// Scripted stand-in: records the requests, answers with the handler.
class FakeProfileProvider final : public ProfileProvider {
 public:
  using Handler = std::function<Result<ProfileReport>(const ProfileRequest&)>;
  explicit FakeProfileProvider(Handler h) : handler_(std::move(h)) {}
  Result<ProfileReport> profile(const ProfileRequest& request) override {
    requests.push_back(request);
    return handler_(request);
  }
  std::vector<ProfileRequest> requests;

 private:
  Handler handler_;
};

}  // namespace cutegen
