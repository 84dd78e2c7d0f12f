// The parser and the per-kernel aggregation on ncu outputs captured on an H200 (testdata/README.md)
// and on synthetic edge cases (scaled units, n/a, a row cut short, launches that disagree).
#include "profile/ncu_csv_parser.h"

#include <gtest/gtest.h>

#include "common/fs.h"
#include "profile/kernel_profile.h"

using namespace cutegen;

namespace {

std::string fixture(const std::string& name) {
  auto text = read_file(std::string(CUTEGEN_PROFILE_TESTDATA) + "/" + name);
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? *text : "";
}

const KernelProfile* find_kernel(const std::vector<KernelProfile>& ks, const std::string& prefix) {
  for (const auto& k : ks)
    if (k.name.rfind(prefix, 0) == 0) return &k;
  return nullptr;
}

}  // namespace

TEST(NcuNumber, ReadsThousandsSeparatorsAndRejectsWhatItCannotRead) {
  EXPECT_EQ(parse_ncu_number("1,234.5"), 1234.5);
  EXPECT_EQ(parse_ncu_number("268,435,456"), 268435456.0);
  EXPECT_EQ(parse_ncu_number("0.00"), 0.0);
  EXPECT_EQ(parse_ncu_number("-3"), -3.0);
  EXPECT_EQ(parse_ncu_number("4.0e-05"), 4.0e-05);
  EXPECT_EQ(parse_ncu_number(" 42 "), 42.0);
  EXPECT_FALSE(parse_ncu_number("n/a"));
  EXPECT_FALSE(parse_ncu_number(""));
  EXPECT_FALSE(parse_ncu_number("NVIDIA H200"));
  EXPECT_FALSE(parse_ncu_number("65,77"));     // a decimal comma: not guessed
  EXPECT_FALSE(parse_ncu_number("1,2345"));
  EXPECT_FALSE(parse_ncu_number("(256, 1, 1)"));
}

TEST(NcuUnits, ScalesToOneUnitPerDimension) {
  EXPECT_EQ(canonical_unit("ns").scale, 1);
  EXPECT_EQ(canonical_unit("ns").unit, "ns");
  EXPECT_EQ(canonical_unit("nsecond").unit, "ns");
  EXPECT_DOUBLE_EQ(canonical_unit("us").scale, 1e3);
  EXPECT_DOUBLE_EQ(canonical_unit("usecond").scale, 1e3);
  EXPECT_DOUBLE_EQ(canonical_unit("msecond").scale, 1e6);
  EXPECT_DOUBLE_EQ(canonical_unit("second").scale, 1e9);
  EXPECT_DOUBLE_EQ(canonical_unit("Mbyte").scale, 1e6);
  EXPECT_EQ(canonical_unit("Mbyte").unit, "byte");
  EXPECT_DOUBLE_EQ(canonical_unit("Gbyte/second").scale, 1e9);
  EXPECT_EQ(canonical_unit("Gbyte/second").unit, "byte/second");
  EXPECT_DOUBLE_EQ(canonical_unit("byte/usecond").scale, 1e6);
  EXPECT_DOUBLE_EQ(canonical_unit("Kbyte/block").scale, 1e3);
  EXPECT_EQ(canonical_unit("Kbyte/block").unit, "byte/block");
  EXPECT_DOUBLE_EQ(canonical_unit("KiB").scale, 1024);
  EXPECT_EQ(canonical_unit("%").unit, "%");
  EXPECT_EQ(canonical_unit("SM").unit, "SM");  // not "S" + "M..."
  EXPECT_EQ(canonical_unit("SM").scale, 1);
  EXPECT_EQ(canonical_unit("register/thread").unit, "register/thread");
}

TEST(NcuCsvRecord, HonoursQuotesCommasAndDoubledQuotes) {
  auto r = split_csv_record(R"csv("0","void k<int, 2>(float *, int)","say ""hi""","",x)csv");
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[1], "void k<int, 2>(float *, int)");
  EXPECT_EQ(r[2], "say \"hi\"");
  EXPECT_EQ(r[3], "");
  EXPECT_EQ(r[4], "x");
}

TEST(NcuCsvParser, ReadsTheH200CaptureSixKernelsTwoLaunchesEach) {
  auto csv = parse_ncu_csv(fixture("ncu_raw_h200.csv"));
  ASSERT_TRUE(csv.ok()) << csv.error().message;
  EXPECT_EQ(csv->launches.size(), 12u);
  EXPECT_TRUE(csv->warnings.empty());
  ASSERT_FALSE(csv->messages.empty());
  EXPECT_NE(csv->messages[1].find("Connected to process"), std::string::npos);
  EXPECT_EQ(csv->units.at("gpu__time_duration.sum"), "ns");
  EXPECT_EQ(csv->units.at("dram__bytes_read.sum"), "byte");
  EXPECT_EQ(csv->units.at("launch__registers_per_thread"), "register/thread");
  const auto& first = csv->launches.front();
  EXPECT_EQ(first.id, 0);
  EXPECT_EQ(first.kernel, "scale_scalar(const float *, float *, unsigned long)");
  EXPECT_EQ(first.block, "(256, 1, 1)");
  EXPECT_EQ(first.grid, "(2112, 1, 1)");
  EXPECT_EQ(first.cc, "9.0");
  EXPECT_EQ(first.values.at("gpu__time_duration.sum"), 176000);
  EXPECT_EQ(first.values.at("dram__bytes_read.sum"), 268444416);
  EXPECT_EQ(first.text.at("device__attribute_display_name"), "NVIDIA H200");

  auto kernels = aggregate_by_kernel(*csv);
  ASSERT_EQ(kernels.size(), 6u);
  for (const auto& k : kernels) {
    EXPECT_EQ(k.launches, 2) << k.name;
    EXPECT_EQ(k.name.find("cutegen_harness_"), std::string::npos) << "the kernel filter let a harness kernel through";
  }
  // Longest first: the FMA GEMM (2 x ~720 us), then the WMMA GEMM.
  EXPECT_EQ(kernels[0].name.rfind("fma_gemm", 0), 0u);
  EXPECT_EQ(kernels[1].name.rfind("wmma_gemm", 0), 0u);
  const auto& gemm = kernels[0];
  EXPECT_DOUBLE_EQ(gemm.duration_ns, 720480 + 720672);
  // Percentages: weighted by launch duration.
  EXPECT_NEAR(*kq::sm_pct(gemm), (49.44 * 720480 + 49.04 * 720672) / (720480 + 720672), 1e-9);
  // Counters add up over launches.
  EXPECT_DOUBLE_EQ(*gemm.get("smsp__sass_data_bytes_mem_global_op_ld.sum"), 2 * 536870912.0);
  // Launch attributes are kept once.
  EXPECT_EQ(kq::registers_per_thread(gemm), 128);
  EXPECT_EQ(kq::grid_size(gemm), 256);
  EXPECT_EQ(kq::theoretical_occupancy_pct(gemm), 25);
  auto limit = kq::occupancy_limit(gemm);
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->resource, "registers");
  EXPECT_EQ(limit->blocks, 2);
  EXPECT_TRUE(gemm.varying.empty());
}

TEST(NcuCsvParser, H200CaptureShowsTheCharactersTheFixtureKernelsWereWrittenFor) {
  auto csv = parse_ncu_csv(fixture("ncu_raw_h200.csv"));
  ASSERT_TRUE(csv.ok());
  auto kernels = aggregate_by_kernel(*csv);
  auto* scalar = find_kernel(kernels, "scale_scalar");
  auto* vec4 = find_kernel(kernels, "scale_vec4");
  auto* gather = find_kernel(kernels, "gather_strided");
  auto* transpose = find_kernel(kernels, "transpose_conflicts");
  auto* wmma = find_kernel(kernels, "wmma_gemm");
  ASSERT_TRUE(scalar && vec4 && gather && transpose && wmma);
  EXPECT_DOUBLE_EQ(kq::global_access(*scalar, "ld")->bytes_per_thread(), 4);
  EXPECT_DOUBLE_EQ(kq::global_access(*vec4, "ld")->bytes_per_thread(), 16);
  EXPECT_DOUBLE_EQ(kq::global_access(*vec4, "ld")->sectors_per_request(), 16);
  auto g = kq::global_access(*gather, "ld");
  EXPECT_DOUBLE_EQ(g->sectors_per_request(), 32);
  EXPECT_DOUBLE_EQ(g->ideal_sectors_per_request(), 4);
  EXPECT_NEAR(g->used_fraction(), 0.125, 1e-9);
  auto c = kq::shared_bank_conflicts(*transpose, "ld");
  ASSERT_TRUE(c);
  EXPECT_GT(c->ways(), 30);  // a column read of an unpadded 32x32 tile
  EXPECT_GT(*kq::tensor_pipe_pct(*wmma), 1);
  EXPECT_EQ(*kq::tensor_pipe_pct(*scalar), 0);
  EXPECT_GT(*kq::dram_bytes_per_second(*vec4), 3e12);  // H200: about 4 TB/s
}

TEST(NcuCsvParser, ScaledUnitsReadTheSameAsBaseUnits) {
  auto base = parse_ncu_csv(fixture("ncu_raw_h200.csv"));
  auto scaled = parse_ncu_csv(fixture("ncu_raw_h200_auto_units.csv"));
  ASSERT_TRUE(base.ok() && scaled.ok());
  EXPECT_EQ(scaled->units.at("gpu__time_duration.sum"), "ns");
  EXPECT_EQ(scaled->units.at("launch__shared_mem_per_block_static"), "byte/block");
  auto a = aggregate_by_kernel(*base), b = aggregate_by_kernel(*scaled);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& ka : a) {
    auto* kb = find_kernel(b, ka.name);
    ASSERT_TRUE(kb) << ka.name;
    // Two separate runs: times move a little; counters are the same up to the printed precision.
    EXPECT_NEAR(kb->duration_ns, ka.duration_ns, 0.05 * ka.duration_ns) << ka.name;
    double bytes = *ka.get("smsp__sass_data_bytes_mem_global_op_ld.sum");
    // --print-units auto prints six decimals of the scaled unit ("0.008389 Gbyte").
    EXPECT_NEAR(*kb->get("smsp__sass_data_bytes_mem_global_op_ld.sum"), bytes, std::max(1e-5 * bytes, 1000.0)) << ka.name;
    EXPECT_EQ(kq::shared_static_bytes(*kb), kq::shared_static_bytes(ka)) << ka.name;
  }
}

TEST(NcuCsvParser, SyntheticEdgeCasesUnitsNaTruncationAndDisagreeingLaunches) {
  auto csv = parse_ncu_csv(fixture("synthetic_edge_cases.csv"));
  ASSERT_TRUE(csv.ok()) << csv.error().message;
  EXPECT_EQ(csv->launches.size(), 4u);
  ASSERT_EQ(csv->warnings.size(), 1u);  // the row cut short
  EXPECT_NE(csv->warnings[0].find("cut short"), std::string::npos);
  const auto& l0 = csv->launches[0];
  EXPECT_DOUBLE_EQ(l0.values.at("dram__bytes_read.sum"), 1200.5e6);
  EXPECT_DOUBLE_EQ(l0.values.at("dram__bytes_write.sum"), 64e3);
  EXPECT_DOUBLE_EQ(l0.values.at("gpu__time_duration.sum"), 1024.5e3);
  EXPECT_FALSE(l0.values.count("l1tex__t_sector_hit_rate.pct"));  // n/a
  EXPECT_FALSE(l0.text.count("l1tex__t_sector_hit_rate.pct"));

  auto kernels = aggregate_by_kernel(*csv);
  ASSERT_EQ(kernels.size(), 2u);
  const auto& gemm = kernels[0];
  EXPECT_EQ(gemm.launches, 2);
  EXPECT_DOUBLE_EQ(gemm.duration_ns, 4098e3);
  EXPECT_DOUBLE_EQ(*kq::sm_pct(gemm), 56.25);  // (71.25 x 1024.5 + 51.25 x 3073.5) / 4098
  EXPECT_DOUBLE_EQ(*kq::l1_hit_pct(gemm), 40);  // only the launch that reported it
  EXPECT_DOUBLE_EQ(*kq::dram_bytes(gemm), 2400e6 + 128e3);
  EXPECT_EQ(short_kernel_name(gemm.name), "cute::gemm_device<...>");
  const auto& bias = kernels[1];
  EXPECT_TRUE(bias.varying.count("launch__registers_per_thread"));
  EXPECT_TRUE(bias.varying.count("Grid Size"));
  EXPECT_EQ(kq::registers_per_thread(bias), 40);  // the most demanding launch
}

TEST(NcuCsvParser, NoCsvIsAnErrorThatQuotesNcu) {
  auto csv = parse_ncu_csv(fixture("ncu_no_kernels.log"));
  ASSERT_FALSE(csv.ok());
  auto messages = ncu_messages(fixture("ncu_no_kernels.log"));
  bool said = false;
  for (const auto& m : messages) said |= m.find("No kernels were profiled") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_FALSE(parse_ncu_csv(fixture("synthetic_permission_error.log")).ok());
  EXPECT_FALSE(parse_ncu_csv("").ok());
}

TEST(NcuCsvParser, AMetricNcuDoesNotKnowIsSimplyAbsent) {
  // Captured with --metrics gpu__time_duration.sum,sm__no_such_metric_exists.sum: ncu 2025.3 says
  // nothing about the unknown name and profiles the rest.
  auto csv = parse_ncu_csv(fixture("ncu_unknown_metric.log"));
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(csv->launches.size(), 12u);
  EXPECT_FALSE(csv->units.count("sm__no_such_metric_exists.sum"));
  EXPECT_TRUE(csv->units.count("gpu__time_duration.sum"));
}

TEST(KernelNames, ShortNamesDropTemplatesParametersAndAnonymousNamespaces) {
  EXPECT_EQ(short_kernel_name("scale_scalar(const float *, float *, unsigned long)"), "scale_scalar");
  EXPECT_EQ(short_kernel_name("void (anonymous namespace)::relu_tiles<4>(const float *, float *, long)"),
            "relu_tiles<...>");
  EXPECT_EQ(short_kernel_name("void cute::kernel<cute::tuple<int, cute::C<1>>, (int)2>(Params)"), "cute::kernel<...>");
  EXPECT_LE(short_kernel_name(std::string(200, 'a') + "(int)", 40).size(), 40u);
}

TEST(NcuCsvParser, ReadsWhatNcuPrintedAroundTheRealRunner) {
  // `cutegen profile problems/relu.py attacks/honest/relu_vec.cu` on the H200: ncu around
  // cutegen-runner, which calls the candidate twice on the worker's IPC buffers.
  auto csv = parse_ncu_csv(fixture("ncu_runner_relu_h200.csv"));
  ASSERT_TRUE(csv.ok()) << csv.error().message;
  auto kernels = aggregate_by_kernel(*csv);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].launches, 2);
  EXPECT_EQ(short_kernel_name(kernels[0].name), "relu_tiles");
  auto ld = kq::global_access(kernels[0], "ld");
  ASSERT_TRUE(ld);
  EXPECT_DOUBLE_EQ(ld->bytes_per_thread(), 16);  // copy_aligned: 128-bit loads
  EXPECT_GT(*kq::dram_bytes(kernels[0]) / 2, 2.1e9);  // 1 GiB in + 1 GiB out per call
}
