#include "profile/ncu_command.h"

#include <cstdlib>
#include <sstream>

#include "common/process.h"

namespace cutegen {
namespace fs = std::filesystem;

namespace {
// Generated from ncu_metrics.txt by CMake (a raw string literal).
const char* kMetricsText =
#include "profile/ncu_metrics.inc"
    ;
}  // namespace

std::vector<std::string> parse_metric_list(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    auto e = line.find_last_not_of(" \t\r");
    out.push_back(line.substr(b, e - b + 1));
  }
  return out;
}

const std::vector<std::string>& default_ncu_metrics() {
  static const std::vector<std::string> metrics = parse_metric_list(kMetricsText);
  return metrics;
}

std::vector<std::string> ncu_command(const fs::path& ncu, const NcuOptions& options, const fs::path& log_file,
                                     const std::vector<std::string>& target) {
  const auto& metrics = options.metrics.empty() ? default_ncu_metrics() : options.metrics;
  std::string joined;
  for (const auto& m : metrics) joined += (joined.empty() ? "" : ",") + m;
  std::vector<std::string> argv = {ncu.string(),
                                   "--clock-control", "none",
                                   "--cache-control", "all",
                                   "--target-processes", "all",
                                   "--kernel-name-base", "demangled",
                                   "--kernel-name", std::string("regex:") + kHarnessKernelExclusion,
                                   "--launch-count", std::to_string(options.launch_count),
                                   "--metrics", joined,
                                   "--csv", "--page", "raw", "--print-units", "base",
                                   "--log-file", log_file.string()};
  argv.insert(argv.end(), target.begin(), target.end());
  return argv;
}

fs::path locate_ncu(const fs::path& explicit_path) {
  if (!explicit_path.empty()) {
    auto p = find_executable(explicit_path.string());
    return p ? *p : fs::path();
  }
  if (const char* env = std::getenv("CUTEGEN_NCU"); env && *env) {
    auto p = find_executable(env);
    return p ? *p : fs::path();
  }
  if (auto p = find_executable("ncu")) return *p;
  std::vector<fs::path> candidates;
  if (const char* cuda = std::getenv("CUDA_HOME"); cuda && *cuda) candidates.push_back(fs::path(cuda) / "bin" / "ncu");
  candidates.push_back("/usr/local/cuda/bin/ncu");
  for (const auto& c : candidates)
    if (auto p = find_executable(c.string())) return *p;
  return {};
}

}  // namespace cutegen
