#pragma once
// The Nsight Compute command line `cutegen profile` runs around the runner.
//
//   ncu --clock-control none --cache-control all --target-processes all
//       --kernel-name-base demangled --kernel-name regex:^(?!(void )?cutegen_harness_)
//       --launch-count N --metrics <ncu_metrics.txt> --csv --page raw --print-units base
//       --log-file <work>/ncu-raw.csv  <runner> --job J --result R
//
// * --clock-control none: the judge times kernels at the clocks the GPU actually runs (locking them
//   to base would make every kernel look slower than it is, and needs privileges on shared machines).
// * --cache-control all: caches are flushed before each profiled launch, like the judge's L2 flush.
// * The kernel-name filter drops kernels the harness itself may launch: any such kernel is named
//   `cutegen_harness_*` (the runner currently launches none; its memsets are not kernels to ncu).
// * --log-file keeps ncu's CSV apart from anything the candidate prints on stdout.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace cutegen {

// The filter above, without the `regex:` prefix.
inline constexpr const char* kHarnessKernelExclusion = "^(?!(void )?cutegen_harness_)";

struct NcuOptions {
  std::filesystem::path ncu;                 // empty: $CUTEGEN_NCU, then PATH, then the CUDA toolkit
  int launch_count = 50;                     // profile at most this many kernel launches
  std::chrono::seconds timeout{600};
  std::vector<std::string> metrics;          // empty: default_ncu_metrics()
};

// The metric list from src/profile/ncu_metrics.txt, compiled in.
const std::vector<std::string>& default_ncu_metrics();

// Parses ncu_metrics.txt's format: one name per line, `#` comments, blank lines ignored.
std::vector<std::string> parse_metric_list(const std::string& text);

std::vector<std::string> ncu_command(const std::filesystem::path& ncu, const NcuOptions& options,
                                     const std::filesystem::path& log_file, const std::vector<std::string>& target);

// Where ncu is: the explicit path, $CUTEGEN_NCU, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin. Empty if none.
std::filesystem::path locate_ncu(const std::filesystem::path& explicit_path);

}  // namespace cutegen
