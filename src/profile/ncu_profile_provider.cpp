#include "profile/ncu_profile_provider.h"

#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "common/fs.h"

namespace cutegen {
namespace fs = std::filesystem;
namespace {

bool any_message_contains(const std::vector<std::string>& messages, std::string_view needle) {
  return std::any_of(messages.begin(), messages.end(),
                     [&](const std::string& m) { return m.find(needle) != std::string::npos; });
}

std::string last_error(const std::vector<std::string>& messages) {
  for (auto it = messages.rbegin(); it != messages.rend(); ++it)
    if (it->rfind("==ERROR==", 0) == 0) return *it;
  return "";
}

std::string last_line(const std::string& s) {
  auto end = s.find_last_not_of("\r\n ");
  if (end == std::string::npos) return "";
  auto start = s.find_last_of('\n', end);
  return s.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
}

ProfileReport without_counters(ProfileStatus status, std::string message, const ProfileRequest& request) {
  ProfileReport r;
  r.status = status;
  r.message = std::move(message);
  r.summary = timing_only_summary(request.context, r.message);
  return r;
}

}  // namespace

std::string runner_progress(const fs::path& result_file) {
  auto text = read_file(result_file);
  if (!text) return "the runner wrote no result file (it did not start, or was killed before its first step)";
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "the runner's result file is not JSON";
  std::string phase = j.value("phase", std::string("?"));
  const auto& failure = j.value("failure", nlohmann::json());
  if (failure.is_string())
    return fmt::format("the runner failed in {} ({}): {}", phase, failure.get<std::string>(),
                       j.value("message", std::string()));
  if (phase == "done") return "the runner finished its calls";
  return fmt::format("the runner ended during its {} phase without reporting a failure (killed by a signal?)", phase);
}

ProfileReport report_from_ncu_run(const ProcessResult& process, const std::string& log, const ProfileRequest& request,
                                  const std::vector<std::string>& requested_metrics) {
  // ncu writes its messages to the log file with --log-file, and to stderr/stdout before it opens it.
  auto messages = ncu_messages(log);
  for (const auto* stream : {&process.out, &process.err}) {
    auto more = ncu_messages(*stream);
    messages.insert(messages.end(), more.begin(), more.end());
  }
  if (any_message_contains(messages, "ERR_NVGPUCTRPERM"))
    return without_counters(ProfileStatus::counters_unavailable,
                            "no permission to read the GPU's performance counters (ERR_NVGPUCTRPERM): run as root, or "
                            "load the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0 "
                            "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)",
                            request);
  if (process.timed_out)
    return without_counters(ProfileStatus::timeout,
                            fmt::format("ncu did not finish within {:.0f} s (each launch is replayed once per metric "
                                        "pass): allow more time or profile fewer launches",
                                        process.wall_seconds),
                            request);
  auto csv = parse_ncu_csv(log.empty() ? process.out : log);
  bool no_kernels = any_message_contains(messages, "No kernels were profiled");
  if (!csv || csv->launches.empty()) {
    if (no_kernels || (csv && csv->launches.empty()))
      return without_counters(ProfileStatus::no_kernels,
                              "ncu profiled no kernel: the candidate launched none, or the kernel-name filter excluded "
                              "it (harness kernels are named cutegen_harness_*)",
                              request);
    std::string why = last_error(messages);
    if (why.empty()) why = last_line(process.err);
    if (why.empty()) why = csv.error().message;
    return without_counters(ProfileStatus::failed,
                            fmt::format("ncu failed ({}) and printed no results: {}", process.describe_end(), why),
                            request);
  }

  ProfileReport r;
  r.status = ProfileStatus::ok;
  r.kernels = aggregate_by_kernel(*csv);
  std::set<std::string> reported(csv->metric_columns.begin(), csv->metric_columns.end());
  std::vector<std::string> missing;
  for (const auto& m : requested_metrics)
    if (!reported.count(m)) missing.push_back(m);
  if (!missing.empty()) {
    std::string some;
    for (std::size_t i = 0; i < missing.size() && i < 3; ++i) some += (i ? ", " : "") + missing[i];
    r.notes.push_back(fmt::format("ncu did not report {} requested metric{} ({}{}): left out", missing.size(),
                                  missing.size() == 1 ? "" : "s", some, missing.size() > 3 ? ", ..." : ""));
  }
  if (process.exit_code != 0 || process.term_signal != 0)
    r.notes.push_back(fmt::format("the profiled command ended with {} under ncu: counters may be partial",
                                  process.describe_end()));
  for (const auto& w : csv->warnings) r.notes.push_back("parser: " + w);
  r.signals = derive_signals(r.kernels, request.context);
  r.summary = summarize_profile(r.kernels, request.context, r.notes);
  return r;
}

Result<ProfileReport> NcuProfileProvider::profile(const ProfileRequest& request) {
  auto t0 = std::chrono::steady_clock::now();
  auto finish = [&](ProfileReport r) {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  fs::path ncu = options_.ncu.empty() ? locate_ncu({}) : options_.ncu;
  if (ncu.empty())
    return finish(without_counters(ProfileStatus::ncu_missing,
                                   "Nsight Compute (ncu) is not installed or not found: install it (it ships with the "
                                   "CUDA toolkit) or set CUTEGEN_NCU to its path",
                                   request));
  std::error_code ec;
  fs::create_directories(request.work_dir, ec);
  if (ec) return Error{fmt::format("cannot create the profile directory {}: {}", request.work_dir.string(), ec.message())};
  fs::path log = request.work_dir / "ncu-raw.csv";
  fs::remove(log, ec);
  const auto& metrics = options_.metrics.empty() ? default_ncu_metrics() : options_.metrics;
  auto argv = ncu_command(ncu, options_, log, request.target);
  // ncu and the runner it starts see the allow-listed environment, with a private HOME and TMPDIR.
  fs::path home = request.work_dir / "ncu-home";
  fs::create_directories(home, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", home.string(), ec.message())};
  auto proc = runner_.run({.argv = argv, .timeout = options_.timeout, .max_output_bytes = 16u << 20, .private_dir = home});
  if (!proc) {
    auto r = without_counters(ProfileStatus::ncu_missing,
                              fmt::format("cannot run Nsight Compute: {} (install it or set CUTEGEN_NCU)",
                                          proc.error().message),
                              request);
    r.command = argv;
    return finish(std::move(r));
  }
  std::string text;
  if (auto t = read_file(log)) text = *t;
  auto r = report_from_ncu_run(*proc, text, request, metrics);
  if (r.status == ProfileStatus::failed && !request.target_result.empty()) {
    if (auto why = runner_progress(request.target_result); !why.empty()) {
      r.message += "; " + why;
      r.summary = timing_only_summary(request.context, r.message);
    }
  }
  r.command = argv;
  r.log_path = log;
  return finish(std::move(r));
}

}  // namespace cutegen
