// The prompt summary on crafted kernels (one per signal it must raise, with the number that raised
// it) and on the H200 capture; and its length bound.
#include "profile/profile_summary.h"

#include <algorithm>

#include <gtest/gtest.h>

#include <type_traits>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen;

namespace {

int line_count(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

using cutegen::testing::contains;

const Signal* find_signal(const std::vector<Signal>& signals, const std::string& kind) {
  for (const auto& s : signals)
    if (s.kind == kind) return &s;
  return nullptr;
}

KernelProfile kernel(const std::string& name, double duration_ns, std::map<std::string, double> metrics) {
  KernelProfile k;
  k.name = name;
  k.launches = 1;
  k.duration_ns = duration_ns;
  k.block = "(256, 1, 1)";
  k.grid = "(1024, 1, 1)";
  k.metrics = std::move(metrics);
  k.metrics["gpu__time_duration.sum"] = duration_ns;
  return k;
}

// A streaming elementwise kernel with 4-byte accesses, near DRAM peak.
KernelProfile elementwise_scalar() {
  return kernel("relu_scalar(const float *, float *, long)", 176000,
                {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 18.4},
                 {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 85.2},
                 {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 84.9},
                 {"dram__bytes_read.sum", 268e6},
                 {"dram__bytes_write.sum", 268e6},
                 {"sm__warps_active.avg.pct_of_peak_sustained_active", 93.5},
                 {"sm__maximum_warps_per_active_cycle_pct", 100},
                 {"launch__registers_per_thread", 16},
                 {"launch__occupancy_limit_registers", 16},
                 {"launch__occupancy_limit_shared_mem", 32},
                 {"launch__occupancy_limit_warps", 8},
                 {"launch__occupancy_limit_blocks", 32},
                 {"smsp__sass_inst_executed_op_global_ld.sum", 2097152},
                 {"smsp__sass_data_bytes_mem_global_op_ld.sum", 268435456},
                 {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 8388608},
                 {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 2097152},
                 {"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", 85.9},
                 {"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", 2.5}});
}

// A GEMM whose 168 registers/thread allow one 256-thread block per SM, barely using tensor cores.
KernelProfile register_limited_gemm() {
  return kernel("void cute::gemm_kernel<cute::tuple<int>, 128>(Params)", 900000,
                {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 35.0},
                 {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 41.0},
                 {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 12.0},
                 {"sm__warps_active.avg.pct_of_peak_sustained_active", 12.1},
                 {"sm__maximum_warps_per_active_cycle_pct", 12.5},
                 {"launch__registers_per_thread", 168},
                 {"launch__block_size", 256},
                 {"launch__occupancy_limit_registers", 1},
                 {"launch__occupancy_limit_shared_mem", 3},
                 {"launch__occupancy_limit_warps", 8},
                 {"launch__occupancy_limit_blocks", 32},
                 {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", 4.4},
                 {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", 3.4},
                 {"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", 1.1},
                 {"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", 4.2}});
}

SummaryContext context(const std::string& cls) {
  SummaryContext c;
  c.workload_class = cls;
  c.calls = 1;
  return c;
}

}  // namespace

TEST(ProfileSummary, MemoryBoundElementwiseWithNarrowLoads) {
  std::vector<KernelProfile> ks = {elementwise_scalar()};
  auto signals = derive_signals(ks, context("elementwise"));
  auto* bound = find_signal(signals, "memory-bound");
  ASSERT_TRUE(bound);
  EXPECT_TRUE(contains(bound->text, "85.2%")) << bound->text;  // memory throughput
  EXPECT_TRUE(contains(bound->text, "DRAM")) << bound->text;
  EXPECT_TRUE(contains(bound->text, "18.4%")) << bound->text;  // SM, for contrast
  auto* narrow = find_signal(signals, "narrow-loads");
  ASSERT_TRUE(narrow);
  EXPECT_TRUE(contains(narrow->text, "4.0 B per thread")) << narrow->text;
  EXPECT_TRUE(contains(narrow->text, "4x fewer")) << narrow->text;
  EXPECT_FALSE(find_signal(signals, "uncoalesced-loads"));  // 4 sectors per request is ideal for 4 B
  EXPECT_FALSE(find_signal(signals, "register-limited-occupancy"));
  EXPECT_FALSE(find_signal(signals, "latency-bound"));
  auto* stall = find_signal(signals, "dominant-stall");
  ASSERT_TRUE(stall);
  EXPECT_TRUE(contains(stall->text, "long_scoreboard")) << stall->text;

  auto text = summarize_profile(ks, context("elementwise"));
  EXPECT_LE(line_count(text), kMaxSummaryLines);
  EXPECT_TRUE(contains(text, "relu_scalar")) << text;
  EXPECT_TRUE(contains(text, "Signals:")) << text;
  EXPECT_TRUE(contains(text, bound->text)) << text;
  EXPECT_TRUE(contains(text, narrow->text)) << text;
}

TEST(ProfileSummary, RegisterLimitedGemmWithLowTensorPipeUse) {
  std::vector<KernelProfile> ks = {register_limited_gemm()};
  auto signals = derive_signals(ks, context("gemm"));
  auto* occ = find_signal(signals, "register-limited-occupancy");
  ASSERT_TRUE(occ);
  EXPECT_TRUE(contains(occ->text, "168 registers/thread")) << occ->text;
  EXPECT_TRUE(contains(occ->text, "1 block(s)/SM")) << occ->text;
  EXPECT_TRUE(contains(occ->text, "12.5%")) << occ->text;
  auto* tensor = find_signal(signals, "low-tensor-pipe");
  ASSERT_TRUE(tensor);
  EXPECT_TRUE(contains(tensor->text, "4.4%")) << tensor->text;
  EXPECT_TRUE(contains(tensor->text, "gemm")) << tensor->text;
  auto* latency = find_signal(signals, "latency-bound");
  ASSERT_TRUE(latency);
  EXPECT_TRUE(contains(latency->text, "35.0%") && contains(latency->text, "41.0%")) << latency->text;
  EXPECT_TRUE(contains(latency->text, "long_scoreboard")) << latency->text;

  auto text = summarize_profile(ks, context("gemm"));
  EXPECT_LE(line_count(text), kMaxSummaryLines);
  EXPECT_TRUE(contains(text, "cute::gemm_kernel<...>")) << text;
  EXPECT_TRUE(contains(text, "limited by registers")) << text;
  EXPECT_TRUE(contains(text, occ->text)) << text;
  EXPECT_TRUE(contains(text, tensor->text)) << text;
}

TEST(ProfileSummary, BothUnitsBusyIsNamedAsSuch) {
  // attacks/honest/gemm_tiled.cu on the H200: SM 73.0%, memory 74.3%, DRAM 3.3%.
  auto k = register_limited_gemm();
  k.metrics["sm__throughput.avg.pct_of_peak_sustained_elapsed"] = 73.0;
  k.metrics["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"] = 74.3;
  k.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"] = 3.3;
  auto signals = derive_signals({k}, context("gemm"));
  auto* both = find_signal(signals, "compute-and-memory-bound");
  ASSERT_TRUE(both);
  EXPECT_TRUE(contains(both->text, "SM 73.0% and memory 74.3%")) << both->text;
  EXPECT_FALSE(find_signal(signals, "memory-bound"));
}

TEST(ProfileSummary, TensorPipeIsNotASignalOutsideGemmLikeWork) {
  std::vector<KernelProfile> ks = {register_limited_gemm()};
  EXPECT_FALSE(find_signal(derive_signals(ks, context("elementwise")), "low-tensor-pipe"));
}

TEST(ProfileSummary, FmaGemmSaysTheMathRunsOnTheFmaPipe) {
  auto k = register_limited_gemm();
  k.metrics["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"] = 0;
  k.metrics["sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"] = 39.9;
  auto signals = derive_signals({k}, context("gemm"));
  auto* tensor = find_signal(signals, "low-tensor-pipe");
  ASSERT_TRUE(tensor);
  EXPECT_TRUE(contains(tensor->text, "FMA pipe (39.9%)")) << tensor->text;
}

TEST(ProfileSummary, BankConflictsQuoteCountsAndWays) {
  auto k = kernel("transpose_tile(const float *, float *, int)", 31000,
                  {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 16.3},
                   {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 60.5},
                   {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 11.6},
                   {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 4079681},
                   {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 4210753},
                   {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 10430},
                   {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 141502}});
  auto signals = derive_signals({k}, context("other"));
  auto* bank = find_signal(signals, "bank-conflicts");
  ASSERT_TRUE(bank);
  EXPECT_TRUE(contains(bank->text, "4.08M")) << bank->text;
  EXPECT_TRUE(contains(bank->text, "~32.1-way")) << bank->text;
  EXPECT_FALSE(contains(bank->text, "stores")) << bank->text;  // 10K of 141K: below the threshold
  auto* bound = find_signal(signals, "memory-bound");
  ASSERT_TRUE(bound);
  EXPECT_TRUE(contains(bound->text, "on-chip")) << bound->text;  // memory busy, DRAM idle: shared memory
}

TEST(ProfileSummary, UncoalescedLoadsQuoteSectorsPerRequest) {
  auto k = kernel("gather(const float *, float *, long)", 39000,
                  {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 2.7},
                   {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 76.4},
                   {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 76.4},
                   {"smsp__sass_inst_executed_op_global_ld.sum", 65536},
                   {"smsp__sass_data_bytes_mem_global_op_ld.sum", 8388608},
                   {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 2097152},
                   {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 65536}});
  auto signals = derive_signals({k}, context("other"));
  auto* unco = find_signal(signals, "uncoalesced-loads");
  ASSERT_TRUE(unco);
  EXPECT_TRUE(contains(unco->text, "32.0 sectors per request where 4 would do")) << unco->text;
  EXPECT_TRUE(contains(unco->text, "12% of fetched bytes")) << unco->text;
}

// The cluster softmax's own counters (H200, benchmarks/results.md): its loads are all cp.async
// copies (no SASS global load instruction), 512 contiguous bytes per L1 request.
TEST(ProfileSummary, CpAsyncCopiesAreNotReadAsUncoalescedLoads) {
  auto k = kernel("softmax_rows_cluster<4, true>", 3568000,
                  {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 74.9},
                   {"smsp__sass_inst_executed_op_global_ld.sum", 0},
                   {"smsp__sass_data_bytes_mem_global_op_ld.sum", 16777216},
                   {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 402653184},
                   {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 25165824},
                   {"smsp__sass_inst_executed_op_global_st.sum", 25165824},
                   {"smsp__sass_data_bytes_mem_global_op_st.sum", 12884901888.0},
                   {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 402653184},
                   {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 25165824}});
  auto signals = derive_signals({k}, context("reduction"));
  EXPECT_FALSE(find_signal(signals, "uncoalesced-loads"));
  EXPECT_FALSE(find_signal(signals, "uncoalesced-stores"));  // 16 sectors per request is ideal for 16 B
  EXPECT_FALSE(find_signal(signals, "narrow-stores"));
  // The same loads as plain LDG.128 instructions would be judged (and found coalesced).
  k.metrics["smsp__sass_inst_executed_op_global_ld.sum"] = 25165824;
  k.metrics["smsp__sass_data_bytes_mem_global_op_ld.sum"] = 12884901888.0;
  auto plain = derive_signals({k}, context("reduction"));
  EXPECT_FALSE(find_signal(plain, "uncoalesced-loads"));
  // And a real uncoalesced pattern with agreeing counters still is.
  k.metrics["smsp__sass_data_bytes_mem_global_op_ld.sum"] = 25165824.0 * 128;  // 4 B per thread
  auto narrow = derive_signals({k}, context("reduction"));
  auto* unco = find_signal(narrow, "uncoalesced-loads");
  ASSERT_TRUE(unco);
  EXPECT_TRUE(contains(unco->text, "16.0 sectors per request where 4 would do")) << unco->text;
}

TEST(ProfileSummary, RooflinePositionAndExcessTraffic) {
  auto ctx = context("elementwise");
  ctx.measured_ms = 0.20;
  ctx.floor_ms = 0.17;
  ctx.floor_bound = "memory";
  ctx.hbm_gbps = 4300;
  ctx.min_bytes = 200e6;
  ctx.calls = 2;
  auto k = elementwise_scalar();
  k.launches = 2;
  k.duration_ns *= 2;
  k.metrics["dram__bytes_read.sum"] = 2 * 268e6;
  k.metrics["dram__bytes_write.sum"] = 2 * 268e6;
  auto signals = derive_signals({k}, ctx);
  auto* near = find_signal(signals, "near-roofline");
  ASSERT_TRUE(near);
  EXPECT_TRUE(contains(near->text, "85% of speed of light")) << near->text;
  auto* excess = find_signal(signals, "excess-dram-traffic");
  ASSERT_TRUE(excess);
  EXPECT_TRUE(contains(excess->text, "536.0 MB moved per call")) << excess->text;
  EXPECT_TRUE(contains(excess->text, "2.7x the 200.0 MB")) << excess->text;
  auto text = summarize_profile({k}, ctx);
  EXPECT_TRUE(contains(text, "0.2 ms per call measured vs floor 0.17 ms (memory-bound problem) -> 85% of speed of light"))
      << text;
  EXPECT_TRUE(contains(text, "the calibrated peak is 4300 GB/s")) << text;
  // One DRAM percentage, the per-kernel one the menus' thresholds name: none in the header.
  EXPECT_FALSE(contains(text.substr(0, text.find("Kernel 1")), "%)")) << text;
  EXPECT_TRUE(contains(text, "over 2 calls")) << text;
}

TEST(ProfileSummary, TwoPassSoftmaxTrafficIsExcess) {
  // As measured on the H200 for attacks/honest/softmax_rows.cu: 3.20 GB of DRAM traffic per call for a
  // problem that must move 2.15 GB (the rows are read twice).
  auto ctx = context("reduction");
  ctx.min_bytes = 2147483648.0;
  auto k = elementwise_scalar();
  k.metrics["dram__bytes_read.sum"] = 2.13e9;
  k.metrics["dram__bytes_write.sum"] = 1.07e9;
  auto* excess = find_signal(derive_signals({k}, ctx), "excess-dram-traffic");
  ASSERT_TRUE(excess);
  EXPECT_TRUE(contains(excess->text, "3.20 GB moved per call, 1.5x the 2.15 GB")) << excess->text;
  k.metrics["dram__bytes_read.sum"] = 1.08e9;  // one pass: no signal
  EXPECT_FALSE(find_signal(derive_signals({k}, ctx), "excess-dram-traffic"));
}

TEST(ProfileSummary, StaysWithinFortyLinesWithManyKernelsAndSignals) {
  std::vector<KernelProfile> ks;
  for (int i = 0; i < 30; ++i) {
    auto k = i % 2 ? register_limited_gemm() : elementwise_scalar();
    k.name = "kernel_" + std::to_string(i) + k.name;
    k.duration_ns = 1e6 - i * 1000;
    ks.push_back(k);
  }
  auto ctx = context("gemm");
  ctx.measured_ms = 30;
  ctx.floor_ms = 29;
  ctx.floor_bound = "compute";
  ctx.min_bytes = 1e6;
  ctx.hbm_gbps = 4300;
  auto text = summarize_profile(ks, ctx, {"a note about the profile"});
  EXPECT_LE(line_count(text), kMaxSummaryLines) << text;
  EXPECT_TRUE(contains(text, "more kernels")) << text;
  EXPECT_TRUE(contains(text, "Signals:")) << text;
  EXPECT_TRUE(contains(text, "Note: a note about the profile")) << text;
}

TEST(ProfileSummary, H200CaptureAsAGemmProblem) {
  auto raw = read_file(std::string(CUTEGEN_PROFILE_TESTDATA) + "/ncu_raw_h200.csv");
  ASSERT_TRUE(raw.ok());
  auto csv = parse_ncu_csv(*raw);
  ASSERT_TRUE(csv.ok());
  auto ks = aggregate_by_kernel(*csv);
  auto ctx = context("gemm");
  ctx.calls = 2;
  auto signals = derive_signals(ks, ctx);
  // fma_gemm: 128 registers/thread -> 2 blocks/SM -> 25% theoretical occupancy, all math on FMA.
  auto* occ = find_signal(signals, "register-limited-occupancy");
  ASSERT_TRUE(occ);
  EXPECT_EQ(occ->kernel, "fma_gemm");
  EXPECT_TRUE(contains(occ->text, "128 registers/thread allow 2 block(s)/SM -> theoretical occupancy 25.0%")) << occ->text;
  auto* tensor = find_signal(signals, "low-tensor-pipe");
  ASSERT_TRUE(tensor);
  EXPECT_EQ(tensor->kernel, "fma_gemm");
  // Its A-tile loads walk down columns: 18 sectors per request for 4-byte loads.
  auto* unco = find_signal(signals, "uncoalesced-loads");
  ASSERT_TRUE(unco);
  EXPECT_TRUE(contains(unco->text, "18.0 sectors per request where 4 would do")) << unco->text;
  EXPECT_TRUE(find_signal(signals, "bank-conflicts"));
  auto text = summarize_profile(ks, ctx);
  EXPECT_LE(line_count(text), kMaxSummaryLines) << text;
  EXPECT_TRUE(contains(text, "6 kernels, 12 launches over 2 calls")) << text;
  EXPECT_TRUE(contains(text, "Kernel 1 of 6: fma_gemm")) << text;
}

TEST(ProfileSummary, TimingOnlySummarySaysWhyAndWhatWasMeasured) {
  auto ctx = context("gemm");
  ctx.measured_ms = 1.25;
  ctx.floor_ms = 0.5;
  ctx.floor_bound = "compute";
  auto text = timing_only_summary(ctx, "no permission to read the GPU's performance counters (ERR_NVGPUCTRPERM)");
  EXPECT_TRUE(contains(text, "No hardware counters: no permission")) << text;
  EXPECT_TRUE(contains(text, "1.25 ms per call measured vs floor 0.5 ms (compute-bound problem) -> 40%")) << text;
  EXPECT_LE(line_count(text), 5);
  auto bare = timing_only_summary(context("gemm"), "ncu missing");
  EXPECT_TRUE(contains(bare, "ncu missing")) << bare;
}

// The profile stage reads the judge's findings as the typed record: renaming a field of it must break
// this stage's build, and a JSON object (read by key, where a rename compiles) must not be accepted.
static_assert(std::is_invocable_r_v<SummaryContext, decltype(&context_from_evaluation), const Evaluation&, int>);
static_assert(!std::is_invocable_v<decltype(&context_from_evaluation), const nlohmann::json&, int>);
static_assert(!std::is_convertible_v<nlohmann::json, Evaluation>);

TEST(ProfileSummary, ContextFromTheJudgesRecord) {
  Evaluation e;
  e.problem = ProblemFacts{.name = "relu", .workload_class = WorkloadClass::elementwise, .gpu = "NVIDIA H200",
                           .min_bytes = 536870912};
  e.time = CandidateTime{.stats = {.median_ms = 0.131, .iqr_ms = 0.001, .runs = 20}, .event_median_ms = 0.05};
  e.floor = Floor{.floor_ms = 0.125, .bound = "memory", .rate = "fp32", .hbm_gbps = 4300};
  auto ctx = context_from_evaluation(e, 3);
  EXPECT_EQ(ctx.workload_class, "elementwise");
  EXPECT_EQ(ctx.calls, 3);
  EXPECT_EQ(ctx.measured_ms, 0.131);
  EXPECT_EQ(ctx.floor_ms, 0.125);
  EXPECT_EQ(ctx.floor_bound, "memory");
  EXPECT_EQ(ctx.min_bytes, 536870912.0);
  EXPECT_EQ(ctx.hbm_gbps, 4300.0);
  // A failed evaluation gives what it has.
  auto bare = context_from_evaluation(Evaluation{.verdict = Verdict::mismatch}, 1);
  EXPECT_FALSE(bare.measured_ms);
  EXPECT_FALSE(bare.floor_ms);
  EXPECT_EQ(bare.workload_class, "");
}
