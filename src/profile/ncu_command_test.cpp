// The ncu command line: the options the profile's meaning depends on, the kernel filter, the metrics.
#include "profile/ncu_command.h"

#include <algorithm>
#include <regex>

#include <gtest/gtest.h>

#include "common/fs.h"

using namespace cutegen;

namespace {

// True when `argv` holds `flag` immediately followed by `value`.
bool has_pair(const std::vector<std::string>& argv, const std::string& flag, const std::string& value) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag && argv[i + 1] == value) return true;
  return false;
}

std::string value_of(const std::vector<std::string>& argv, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag) return argv[i + 1];
  return "";
}

}  // namespace

TEST(NcuCommand, ProfilesOnlyTheCandidateAtRealClocksIntoACsvLog) {
  NcuOptions o;
  o.launch_count = 7;
  auto argv = ncu_command("/opt/ncu/ncu", o, "/tmp/w/ncu-raw.csv", {"/b/cutegen-runner", "--job", "j.json", "--result", "r.json"});
  EXPECT_EQ(argv.front(), "/opt/ncu/ncu");
  EXPECT_TRUE(has_pair(argv, "--clock-control", "none"));
  EXPECT_TRUE(has_pair(argv, "--cache-control", "all"));
  EXPECT_TRUE(has_pair(argv, "--target-processes", "all"));
  EXPECT_TRUE(has_pair(argv, "--kernel-name-base", "demangled"));
  EXPECT_TRUE(has_pair(argv, "--kernel-name", "regex:^(?!(void )?cutegen_harness_)"));
  EXPECT_TRUE(has_pair(argv, "--launch-count", "7"));
  EXPECT_TRUE(has_pair(argv, "--page", "raw"));
  EXPECT_TRUE(has_pair(argv, "--print-units", "base"));
  EXPECT_TRUE(has_pair(argv, "--log-file", "/tmp/w/ncu-raw.csv"));
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--csv"), argv.end());
  // The profiled command comes last, unchanged.
  std::vector<std::string> tail(argv.end() - 5, argv.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"/b/cutegen-runner", "--job", "j.json", "--result", "r.json"}));
  // Every metric of the list, comma-separated.
  std::string metrics = value_of(argv, "--metrics");
  for (const auto& m : default_ncu_metrics()) EXPECT_NE(metrics.find(m), std::string::npos) << m;
  EXPECT_EQ(std::count(metrics.begin(), metrics.end(), ','), static_cast<long>(default_ncu_metrics().size()) - 1);
}

TEST(NcuCommand, ExplicitMetricsReplaceTheDefaults) {
  NcuOptions o;
  o.metrics = {"gpu__time_duration.sum", "dram__bytes_read.sum"};
  auto argv = ncu_command("ncu", o, "log.csv", {"x"});
  EXPECT_EQ(value_of(argv, "--metrics"), "gpu__time_duration.sum,dram__bytes_read.sum");
}

TEST(NcuCommand, DefaultMetricsCoverWhatTheSummaryReads) {
  const auto& m = default_ncu_metrics();
  EXPECT_EQ(m.size(), 54u);
  for (const char* needed : {"gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                             "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum",
                             "lts__t_sector_hit_rate.pct", "l1tex__t_sector_hit_rate.pct",
                             "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__maximum_warps_per_active_cycle_pct",
                             "launch__occupancy_limit_registers", "launch__registers_per_thread",
                             "launch__shared_mem_per_block_dynamic", "launch__grid_size", "launch__block_size",
                             "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                             "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                             "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                             "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"})
    EXPECT_NE(std::find(m.begin(), m.end(), needed), m.end()) << needed;
  for (const auto& name : m) {
    EXPECT_EQ(name.find(' '), std::string::npos) << name;
    EXPECT_EQ(name.find('#'), std::string::npos) << name;
  }
}

TEST(NcuCommand, MetricListFormatIgnoresCommentsAndBlankLines) {
  EXPECT_EQ(parse_metric_list("# heading\n\n  a.sum  \nb.pct # why\r\n#c\n"), (std::vector<std::string>{"a.sum", "b.pct"}));
}

TEST(NcuCommand, KernelFilterDropsHarnessKernelsOnly) {
  // ncu's regex dialect accepted the lookahead on the H200 (ncu 2025.3: the fixture capture lacks
  // cutegen_harness_fill); ECMAScript regex reads it the same way.
  std::regex filter(kHarnessKernelExclusion);
  EXPECT_FALSE(std::regex_search("cutegen_harness_fill(float *, unsigned long, float)", filter));
  EXPECT_FALSE(std::regex_search("void cutegen_harness_poison<float>(float *)", filter));
  EXPECT_TRUE(std::regex_search("scale_scalar(const float *, float *, unsigned long)", filter));
  EXPECT_TRUE(std::regex_search("void cute::gemm_kernel<128>(Params)", filter));
  EXPECT_TRUE(std::regex_search("void relu_tiles(const float *, cutegen_harness_x *)", filter));
}

TEST(NcuCommand, CaptureScriptUsesTheSameFilterAndOptions) {
  auto script = read_file(std::string(CUTEGEN_PROFILE_TESTDATA) + "/../../../scripts/capture-ncu-fixtures");
  ASSERT_TRUE(script.ok()) << script.error().message;
  EXPECT_NE(script->find(std::string("regex:") + kHarnessKernelExclusion), std::string::npos);
  for (const char* opt : {"--clock-control none", "--cache-control all", "--target-processes all",
                          "--kernel-name-base demangled", "--csv --page raw --print-units base", "ncu_metrics.txt"})
    EXPECT_NE(script->find(opt), std::string::npos) << opt;
}
