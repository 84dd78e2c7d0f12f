#include "compile/cute_usage.h"

#include <gtest/gtest.h>

#include "common/testdata/fake_process_runner.h"
#include "common/fs.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen;

namespace {

// A debug string as nvcc writes it into PTX: bytes, NUL-terminated.
std::string b8(const std::string& s) {
  std::string out = ".b8 ";
  for (char c : s) out += std::to_string(static_cast<int>(static_cast<unsigned char>(c))) + ",";
  return out + "0\n";
}

std::string fn(const std::string& head, const std::string& body) { return head + "(\n\t.param .u64 p\n)\n{\n" + body + "\tret;\n}\n"; }

// Shaped like `nvcc -ptx -lineinfo -Xcicc -O0` output (trimmed): functions, then .file entries and the
// function names in .debug_str.
std::string ptx() {
  std::string p = ".version 9.0\n.target sm_90a\n.address_size 64\n\n";
  p += fn(".func  (.param .b32 func_retval0) _Z6helperPf",
          "\t.loc\t1 5 0\n\t.loc\t2 100 3, function_name $L__info_string0, inlined_at 1 6 3\n\tld.f32 %f1, [%rd1];\n");
  p += fn(".visible .entry _Z6viacallPf",
          "\t.loc\t1 10 0\n\t{ // callseq 0, 0\n\tcall.uni (retval0), \n\t_Z6helperPf, \n\t(\n\tparam0\n\t);\n\t} // callseq 0\n");
  p += fn(".visible .entry _Z6directPf", "\t.loc\t1 12 0\n\t.loc\t2 100 3, function_name $L__info_string0, inlined_at 1 13 3\n");
  p += fn(".visible .entry _Z7pointerPf",
          "\t.loc\t1 15 0\n\t.loc\t3 40 3, function_name $L__info_string2, inlined_at 1 16 3\n");
  p += fn(".visible .entry _Z6forgedPf",
          "\t.loc\t1 20 0\n\t// begin inline asm\n\t.loc\t2 100 3, function_name $L__info_string0, inlined_at 1 21 3\n"
          "\t// end inline asm\n");
  p += fn(".visible .entry _Z7ownnamePf", "\t.loc\t1 30 3, function_name $L__info_string1, inlined_at 1 31 3\n");
  p += "\t.file\t1 \"/work/run/candidate.cu\"\n\t.file\t2 \"/opt/cutlass/include/cute/stride.hpp\"\n"
       "\t.file\t3 \"/opt/cutlass/include/cute/pointer_base.hpp\"\n";
  p += "\t.section\t.debug_str\n\t{\n";
  p += "$L__info_string0:\n" + b8("_ZN4cute7crd2idxIllNS_1CILi1EEEEEDaRKT_RT0_RKT1_");
  p += "$L__info_string1:\n" + b8("_ZN4cute7crd2idxIiiiEEDaRKT_RT0_RKT1_");  // a candidate's own cute::crd2idx
  p += "$L__info_string2:\n" + b8("_ZNK4cute12iter_adaptorIPfNS_8gmem_ptrIS1_EEEixIlEERfRKT_");
  p += "\t}\n";
  return p;
}

}  // namespace

TEST(CuteUsage, LayoutEvaluationInTheKernelOrACalleeCounts) {
  auto a = analyse_cute_usage(ptx(), "/opt/cutlass/include/cute");
  EXPECT_TRUE(a.uses_cute.at("_Z6directPf"));
  EXPECT_TRUE(a.uses_cute.at("_Z6viacallPf"));  // through _Z6helperPf, a device function it calls
  EXPECT_FALSE(a.uses_cute.count("_Z6helperPf"));  // not a kernel
}

TEST(CuteUsage, PointerAccessForgedLinesAndLookalikesDoNotCount) {
  auto a = analyse_cute_usage(ptx(), "/opt/cutlass/include/cute");
  EXPECT_FALSE(a.uses_cute.at("_Z7pointerPf"));  // iter_adaptor::operator[]: t.data()[i]
  EXPECT_FALSE(a.uses_cute.at("_Z6forgedPf"));   // the .loc is inside inline asm
  EXPECT_FALSE(a.uses_cute.at("_Z7ownnamePf"));  // named cute::crd2idx, but not from CuTe's headers
  ASSERT_EQ(a.forged.size(), 1u);
  EXPECT_EQ(a.forged[0], "_Z6forgedPf");
}

TEST(CuteUsage, ViolationsNameEachKernelWithoutCute) {
  auto a = analyse_cute_usage(ptx(), "/opt/cutlass/include/cute");
  auto v = cute_violations({"_Z6directPf", "_Z7pointerPf", "_Z9elsewherePf"}, a);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].code, "forged-line-info");
  EXPECT_NE(v[0].message.find("forged(float*)"), std::string::npos) << v[0].message;
  EXPECT_EQ(v[1].code, "no-cute");
  EXPECT_NE(v[1].message.find("kernel pointer(float*) does not use CuTe"), std::string::npos) << v[1].message;
  EXPECT_NE(v[1].message.find("t.data()[i]"), std::string::npos);
  EXPECT_EQ(v[2].code, "cute-unverifiable");
  EXPECT_NE(v[2].message.find("elsewhere(float*)"), std::string::npos) << v[2].message;
}

TEST(CuteUsage, SitesAreThePositionsOutsideCuteOfEachTensorAccessChain) {
  auto a = analyse_cute_usage(ptx(), "/opt/cutlass/include/cute");
  // helper's line 6 and direct's line 13 call crd2idx straight; not the pointer kernel's line 16
  // (iter_adaptor), the forged line 21 (inside inline asm) or the candidate's own crd2idx (line 31).
  EXPECT_EQ(a.cute_sites, (std::set<SourcePosition>{{"/work/run/candidate.cu", 6}, {"/work/run/candidate.cu", 13}}));

  // Chains spelled one level per .loc: the candidate's gY(i) at line 41 reaches crd2idx through
  // tensor_impl.hpp; a CUTLASS collective's line 500, inlined at line 45, through it too — both the
  // collective's line and the candidate's call of it are sites.
  std::string p = ".version 9.0\n.target sm_90a\n.address_size 64\n\n";
  p += fn(".visible .entry _Z6nestedPf",
          "\t.loc\t1 40 0\n"
          "\t.loc\t4 241 7, function_name $L__info_string3, inlined_at 1 41 5\n"
          "\t.loc\t2 171 7, function_name $L__info_string0, inlined_at 4 241 7\n"
          "\t.loc\t5 500 9, function_name $L__info_string4, inlined_at 1 45 3\n"
          "\t.loc\t4 241 7, function_name $L__info_string3, inlined_at 5 500 9\n"
          "\t.loc\t2 171 7, function_name $L__info_string0, inlined_at 4 241 7\n"
          "\t.loc\t1 47 3\n");
  p += "\t.file\t1 \"/work/run/candidate.cu\"\n\t.file\t2 \"/opt/cutlass/include/cute/layout.hpp\"\n"
       "\t.file\t4 \"/opt/cutlass/include/cute/tensor_impl.hpp\"\n"
       "\t.file\t5 \"/opt/cutlass/include/cutlass/epilogue/collective/default_epilogue.hpp\"\n";
  p += "\t.section\t.debug_str\n\t{\n";
  p += "$L__info_string0:\n" + b8("_ZN4cute7crd2idxIllNS_1CILi1EEEEEDaRKT_RT0_RKT1_");
  p += "$L__info_string3:\n" + b8("_ZNK4cute6TensorIJNS_11ViewEngineIPfEENS_6LayoutIiiEEEEclIlEERfRKT_");
  p += "$L__info_string4:\n" + b8("_ZN7cutlass8epilogue10collective7storeEv");
  p += "\t}\n";
  auto nested = analyse_cute_usage(p, "/opt/cutlass/include/cute");
  EXPECT_TRUE(nested.uses_cute.at("_Z6nestedPf"));
  EXPECT_EQ(nested.cute_sites,
            (std::set<SourcePosition>{{"/work/run/candidate.cu", 41},
                                      {"/work/run/candidate.cu", 45},
                                      {"/opt/cutlass/include/cutlass/epilogue/collective/default_epilogue.hpp", 500}}));
  // The kernel's own line 47, which reaches no CuTe, is no site.
  EXPECT_FALSE(nested.cute_sites.count({"/work/run/candidate.cu", 47}));
}

namespace {

// -O3 PTX's shape: a helper (not force-inlined) inlined into the kernel, so the chain of its tensor access runs on
// to the kernel's call of it (line 22); its raw store (line 16) is in the same inlined body.
std::string inlined_helper_ptx() {
  std::string p = ".version 9.0\n.target sm_90a\n.address_size 64\n\n";
  p += fn(".visible .entry _Z6kernelPf",
          "\t.loc\t1 20 0\n"
          "\t.loc\t1 15 3, function_name $L__info_string1, inlined_at 1 22 5\n"
          "\t.loc\t2 171 7, function_name $L__info_string0, inlined_at 1 15 3\n"
          "\t.loc\t1 16 3, function_name $L__info_string1, inlined_at 1 22 5\n");
  p += "\t.file\t1 \"/work/run/candidate.cu\"\n\t.file\t2 \"/opt/cutlass/include/cute/layout.hpp\"\n";
  p += "\t.section\t.debug_str\n\t{\n";
  p += "$L__info_string0:\n" + b8("_ZN4cute7crd2idxIllNS_1CILi1EEEEEDaRKT_RT0_RKT1_");
  p += "$L__info_string1:\n" + b8("_Z13store_doubledPf");
  p += "\t}\n";
  return p;
}

}  // namespace

TEST(CuteUsage, TheInnermostScopeKeepsOnlyTheLineThatCalledIntoCute) {
  // The whole chain: the helper's line and the kernel's call of it. The innermost: the helper's line alone, as
  // the -O0 analysis (the helper a function of its own there) finds it.
  auto whole = analyse_cute_usage(inlined_helper_ptx(), "/opt/cutlass/include/cute");
  EXPECT_EQ(whole.cute_sites, (std::set<SourcePosition>{{"/work/run/candidate.cu", 15}, {"/work/run/candidate.cu", 22}}));
  auto inner = analyse_cute_usage(inlined_helper_ptx(), "/opt/cutlass/include/cute", SiteScope::innermost);
  EXPECT_EQ(inner.cute_sites, (std::set<SourcePosition>{{"/work/run/candidate.cu", 15}}));
  EXPECT_TRUE(inner.uses_cute.at("_Z6kernelPf"));
}

TEST(CuteUsage, TheBuildsEvidenceCountsOnlyWhenItProvesEveryKernel) {
  const std::string cute = "/opt/cutlass/include/cute";
  auto seen = build_evidence(inlined_helper_ptx(), cute, {"_Z6kernelPf"});
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->cute_sites, (std::set<SourcePosition>{{"/work/run/candidate.cu", 15}}));  // innermost sites
  // A kernel the PTX does not show, one whose CuTe -O3 folded away, or inline assembly carrying line information
  // anywhere: the analysis compile decides.
  EXPECT_FALSE(build_evidence(inlined_helper_ptx(), cute, {"_Z6kernelPf", "_Z5otherPf"}).has_value());
  EXPECT_FALSE(build_evidence(ptx(), cute, {"_Z6directPf", "_Z7pointerPf"}).has_value());
  EXPECT_FALSE(build_evidence(ptx(), cute, {"_Z6directPf"}).has_value());  // _Z6forgedPf's asm
}

TEST(CuteUsage, AnUnbalancedInlineAsmMarkerIsForged) {
  std::string p = fn(".visible .entry _Z1kv", "\t// end inline asm\n\t.loc\t1 3 0\n");
  auto a = analyse_cute_usage(p, "/opt/cutlass/include/cute");
  ASSERT_EQ(a.forged.size(), 1u);
  EXPECT_FALSE(a.uses_cute.at("_Z1kv"));
}

namespace {
using cutegen::testing::TempDir;
const QuotableFiles kQuotable{"candidate.cu", {"/opt/cutlass/include"}};
}  // namespace

TEST(CuteAnalysisRun, RunsTheAnalysisCompileInTheStagingDirAndRemovesItsPtx) {
  TempDir dir;
  FakeProcessRunner fake([&](const ProcessSpec& spec) -> Result<ProcessResult> {
    EXPECT_EQ(spec.cwd, dir.path);
    EXPECT_TRUE(write_file_atomic(dir.path / "a.ptx", ptx()).ok());
    return FakeProcessRunner::exited(0);
  });
  auto run = run_cute_analysis(fake, {"nvcc", "-ptx"}, dir.path, "a.ptx", std::chrono::seconds(5),
                               "/opt/cutlass/include", kQuotable);
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_EQ(fake.calls().size(), 1u);
  EXPECT_EQ(fake.calls()[0].argv, (std::vector<std::string>{"nvcc", "-ptx"}));
  EXPECT_FALSE(run->timed_out);
  EXPECT_TRUE(run->compiled);
  // forged-line-info (from _Z6forgedPf, present in the file) and no-cute for the pointer kernel.
  auto violations = cute_check_violations(*run, {"_Z6directPf", "_Z7pointerPf"});
  ASSERT_EQ(violations.size(), 2u);
  EXPECT_EQ(violations[1].code, "no-cute");
  EXPECT_FALSE(std::filesystem::exists(dir.path / "a.ptx"));
}

TEST(CuteAnalysisRun, AFailingAnalysisCompileIsAViolationQuotingItsErrorRedacted) {
  TempDir dir;
  FakeProcessRunner fake([](const ProcessSpec&) -> Result<ProcessResult> {
    return FakeProcessRunner::exited(2, "", "candidate.cu(9): error: asm operand must be an immediate\n"
                                            "/home/u/.env(1): error: identifier \"secret\" is undefined\n");
  });
  auto run = run_cute_analysis(fake, {"nvcc"}, dir.path, "a.ptx", std::chrono::seconds(5), "/opt/cutlass/include",
                               kQuotable);
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE(run->compiled);
  auto violations = cute_check_violations(*run, {"_Z1kv"});
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].code, "cute-unverifiable");
  EXPECT_NE(violations[0].message.find("asm operand must be an immediate"), std::string::npos);
  EXPECT_EQ(violations[0].message.find("secret"), std::string::npos);
}

TEST(CuteAnalysisRun, ATimeoutIsReportedNotJudged) {
  TempDir dir;
  FakeProcessRunner fake([](const ProcessSpec&) -> Result<ProcessResult> {
    ProcessResult r;
    r.timed_out = true;
    return r;
  });
  auto run = run_cute_analysis(fake, {"nvcc"}, dir.path, "a.ptx", std::chrono::seconds(5), "/opt/cutlass/include",
                               kQuotable);
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->timed_out);
  EXPECT_FALSE(run->compiled);
  EXPECT_TRUE(run->violations.empty());
}
