// These tests run the real nvcc (CI has the CUDA toolkit, no GPU) except where a fake runner is named.
#include "compile/nvcc_compiler.h"
#include "compile/library_checks.h"
#include "compile/nvcc_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "common/build_identity.h"
#include "common/testdata/fake_process_runner.h"
#include "common/fs.h"
#include "common/locations.h"
#include "common/slow_compile_tests.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox_command.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  auto text = read_file(p);
  EXPECT_TRUE(text.ok()) << p;
  return text.ok() ? *text : "";
}
std::string testdata(const std::string& name) { return read(fs::path(CUTEGEN_TESTDATA) / name); }
// A kernel of the library, else one of the judge suite's honest kernels.
std::string example(const std::string& name) {
  const fs::path library = fs::path(CUTEGEN_SOURCE_DIR) / "library" / name;
  return read(fs::exists(library) ? library : fs::path(CUTEGEN_SOURCE_DIR) / "attacks" / "honest" / name);
}

class RealNvcc : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-compile-test-");
    ASSERT_TRUE(dir.ok());
    cache_root_ = *dir;
    auto tc = probe_toolchain(runner_, options_);
    ASSERT_TRUE(tc.ok()) << tc.error().message;
    toolchain_ = *tc;
  }
  void TearDown() override { fs::remove_all(cache_root_); }

  NvccCompiler compiler() {
    return NvccCompiler(runner_, options_, toolchain_, CompileCache(cache_root_), CUTEGEN_SANDBOX_BIN);
  }
  CompileOutcome compile(const std::string& source, const std::string& name) {
    auto c = compiler();
    auto out = c.compile({source, name});
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
    return out.ok() ? *out : CompileOutcome{};
  }
  // relu_cute_1d.cu through `runner` with 16 CPUs: nvcc's steps overlapped.
  CompileOutcome compile_overlapped(ProcessRunner& runner, bool stub_ahead = true) {
    CompileOptions o = options_;
    o.cpus = 16;
    o.stub_ahead = stub_ahead;
    NvccCompiler c(runner, o, toolchain_, CompileCache(cache_root_), CUTEGEN_SANDBOX_BIN);
    auto out = c.compile({example("relu_cute_1d.cu"), "relu_cute_1d.cu"});
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
    return out.ok() ? *out : CompileOutcome{};
  }
  bool has_violation(const CompileOutcome& o, const std::string& code, const std::string& text) {
    for (const auto& v : o.violations)
      if (v.code == code && v.message.find(text) != std::string::npos) return true;
    return false;
  }

  PosixProcessRunner runner_;
  CompileOptions options_;
  Toolchain toolchain_;
  fs::path cache_root_;
};

// Options for a fake nvcc on a machine wide enough that the build lists and overlaps nvcc's steps
// (nvcc_plan.h), whatever machine runs the test.
// The fakes play nvcc's chains as one script (nvcc-chains.sh): the host compile from the early stub
// (stub_ahead.h), three scripts on the real toolkit, is RealNvcc's and NvccPlanRealNvcc's to test.
CompileOptions wide() {
  CompileOptions o;
  o.cpus = 16;
  o.stub_ahead = false;
  return o;
}

}  // namespace

// The library kernel with knobs: its defaults and a variant given as -D defines both build and pass
// every static check (CuTe in each launched kernel), compiled from two threads at once as `cutegen
// tune -j 2` does, each under its own cache key.
TEST_F(RealNvcc, ElementwiseKernelBuildsWithItsDefaultsAndWithAKnobVariant) {
  CUTEGEN_SLOW_COMPILE_TEST("the library elementwise kernel and a knob variant; gpu-check compiles and tunes it");
  const std::string src = example("elementwise.cu");
  auto c = compiler();
  std::vector<Define> variant = {{"EW_THREADS", "1024"}, {"EW_VEC", "8"}, {"EW_UNROLL", "2"}, {"EW_GRID_STRIDE", "0"}};
  Result<CompileOutcome> defaults = Error{"not run"}, tuned = Error{"not run"};
  std::thread other([&] { tuned = c.compile({src, "elementwise.cu", variant}); });
  defaults = c.compile({src, "elementwise.cu"});
  other.join();
  ASSERT_TRUE(defaults.ok() && tuned.ok()) << (defaults.ok() ? tuned.error().message : defaults.error().message);
  EXPECT_EQ(defaults->verdict, CompileVerdict::ok) << defaults->feedback() << defaults->log;
  EXPECT_EQ(tuned->verdict, CompileVerdict::ok) << tuned->feedback() << tuned->log;
  EXPECT_NE(defaults->key, tuned->key);
  EXPECT_NE(std::find(tuned->command.begin(), tuned->command.end(), "-DEW_THREADS=1024"), tuned->command.end());
}

TEST_F(RealNvcc, CuteRankErrorGivesAShortDiagnosticNamingTheCandidatesLine) {
  auto out = compile(testdata("cute_rank_error.cu"), "rank.cu");
  ASSERT_EQ(out.verdict, CompileVerdict::compile_error);
  const auto& text = out.diagnostic.text;
  EXPECT_LE(std::count(text.begin(), text.end(), '\n'), 40) << text;
  EXPECT_NE(text.find("rank.cu:12:"), std::string::npos) << text;
  EXPECT_NE(text.find("Too many modes in tiler"), std::string::npos) << text;
  EXPECT_EQ(out.feedback(), text);
}

TEST_F(RealNvcc, CallingCublasIsRejectedNamingTheSymbol) {
  CUTEGEN_SLOW_COMPILE_TEST("a cuBLAS call; the forbidden-import static attacks are in the default tier");
  auto out = compile(testdata("calls_cublas.cu"), "cublas.cu");
  ASSERT_EQ(out.verdict, CompileVerdict::rejected) << out.log;
  EXPECT_TRUE(has_violation(out, "forbidden-import", "cublasSgemm_v2")) << out.feedback();
  EXPECT_TRUE(has_violation(out, "forbidden-import", "cuBLAS")) << out.feedback();
}

TEST_F(RealNvcc, DlopenIsRejected) {
  CUTEGEN_SLOW_COMPILE_TEST("a dlopen call; the forbidden-import static attacks are in the default tier");
  auto out = compile(testdata("calls_dlopen.cu"), "dl.cu");
  ASSERT_EQ(out.verdict, CompileVerdict::rejected) << out.log;
  EXPECT_TRUE(has_violation(out, "forbidden-import", "dlopen")) << out.feedback();
  EXPECT_TRUE(has_violation(out, "forbidden-import", "dlsym")) << out.feedback();
}

TEST_F(RealNvcc, KernelWithoutCuteInDeviceCodeIsRejected) {
  CUTEGEN_SLOW_COMPILE_TEST("a raw kernel; the no-cute static attacks are in the default tier");
  auto out = compile(testdata("no_cute.cu"), "raw.cu");
  ASSERT_EQ(out.verdict, CompileVerdict::rejected) << out.log;
  ASSERT_EQ(out.violations.size(), 1u) << out.feedback();
  EXPECT_EQ(out.violations[0].code, "no-cute");
}

TEST_F(RealNvcc, MissingEntryPointIsRejected) {
  auto out = compile(testdata("no_entry_point.cu"), "noentry.cu");
  ASSERT_EQ(out.verdict, CompileVerdict::rejected) << out.log;
  ASSERT_EQ(out.violations.size(), 1u) << out.feedback();
  EXPECT_EQ(out.violations[0].code, "missing-entry-point");
}

TEST_F(RealNvcc, AllocatingDeviceMemoryIsRejected) {
  CUTEGEN_SLOW_COMPILE_TEST("a cudaMalloc call; the forbidden-import static attacks are in the default tier");
  auto out = compile(testdata("allocates.cu"), "alloc.cu");
  ASSERT_EQ(out.verdict, CompileVerdict::rejected) << out.log;
  EXPECT_TRUE(has_violation(out, "forbidden-import", "cudaMalloc")) << out.feedback();
}

// Issue 32, class 1c and 2: an asm string that spells a file-reading directive so that the source
// rule's text search misses it. The check reads the assembly the host compiler handed the assembler, so
// every spelling is refused, each by its own violation (each probe names its own file), as a rejection
// and not a compile error although the assembler could not open those files.
// Both ways nvcc's steps run (nvcc_plan.h): in turn, as on CI's two CPUs, and overlapped, as on a GPU host.
TEST_F(RealNvcc, FileReadingAssemblerDirectivesAreRefusedHoweverTheAsmStringSpellsThem) {
  for (unsigned cpus : {2u, 16u}) {
    options_.cpus = cpus;
    // Another source for each (a comment), or the second would be the first's cache entry.
    auto out = compile(testdata("asm_reads_spellings.cu") + fmt::format("// {} CPUs\n", cpus), "spellings.cu");
    ASSERT_EQ(out.verdict, CompileVerdict::rejected) << out.feedback() << out.log;
    EXPECT_EQ(out.nvcc_steps.rfind(cpus == 2 ? "in turn" : "overlapped", 0), 0u) << out.nvcc_steps;
    for (const char* statement : {".incbin \"/cutegen-probe/hex-escape\"", ".incbin \"/cutegen-probe/octal-escape\"",
                                  ".incbin \"/cutegen-probe/joined-literals\"", ".incbin \"/cutegen-probe/macro-dot\"",
                                  ".INCBIN \"/cutegen-probe/upper-case\"", ".include \"/cutegen-probe/include\"",
                                  ".macro cutegen_probe_m a,b"})
      EXPECT_TRUE(has_violation(out, "asm-reads-file", statement)) << cpus << " CPUs: " << statement << "\n" << out.feedback();
  }
}

// Issue 32, class 3: __has_include through an alias is no file-existence oracle. Denied by Landlock and
// made to look missing by the compile's preload, every probe is false, as for a file that does not exist.
TEST_F(RealNvcc, HasIncludeCannotTellWhetherAHostFileExists) {
  if (landlock::abi_version() == 0)
    GTEST_SKIP() << "this kernel has no Landlock: the compile can read every host file, and says so in `cutegen doctor`";
  auto out = compile(testdata("has_include_oracle.cu"), "oracle.cu");
  EXPECT_NE(out.verdict, CompileVerdict::compile_error) << out.log;
  EXPECT_EQ(out.log.find("probe:"), std::string::npos) << out.log;
  EXPECT_EQ(out.log.find("control:"), std::string::npos) << out.log;
  EXPECT_EQ(out.log.find("Permission denied"), std::string::npos) << out.log;
}

class HonestKernels : public RealNvcc, public ::testing::WithParamInterface<const char*> {};

// wgmma through a TiledMMA. (TMA with a tensor map, cp.async with a cluster launch, 1-D tensor indexing
// and the example kernels are honest entries of attacks/manifest.json: CTest's attack_manifest compiles
// them through `cutegen compile`, once.)
TEST_P(HonestKernels, PassEveryStaticCheck) {
  CUTEGEN_SLOW_COMPILE_TEST("an honest wgmma kernel; gpu-check compiles the manifest's SM90 GEMMs");
  auto out = compile(testdata(GetParam()), GetParam());
  EXPECT_EQ(out.verdict, CompileVerdict::ok) << out.feedback() << out.log;
  EXPECT_TRUE(out.violations.empty());
  // The analysis compile's PTX (megabytes at -O0) does not stay in the cache entry.
  EXPECT_FALSE(fs::exists(out.library.parent_path() / "candidate.analysis.ptx"));
}
INSTANTIATE_TEST_SUITE_P(Testdata, HonestKernels,
                         ::testing::Values("wgmma_gemm.cu"));

// The prompts offer <cute/tensor_impl.hpp> to a kernel that uses no copy or MMA atom (half of nvcc's time), and
// cutegen/kernel.h includes only that much: such a kernel builds, and its CuTe counts for the CuTe rule.
TEST_F(RealNvcc, AKernelWithOnlyCutesTensorsBuildsAndPassesTheCuteRule) {
  auto out = compile(example("relu_cute_1d.cu"), "relu_cute_1d.cu");
  EXPECT_EQ(out.verdict, CompileVerdict::ok) << out.feedback() << out.log;
  EXPECT_TRUE(out.violations.empty()) << out.feedback();
  EXPECT_EQ(out.cute_evidence, "analysis");  // -O3 folds 1-D indexing: the build's PTX proves nothing
}

namespace {

// Holds the CuTe analysis compile (nvcc ... -Xcicc -O0) until the compiler asks it to stop, or two minutes:
// a build whose own PTX proves the rule must not wait for it.
class HoldTheAnalysis final : public ProcessRunner {
 public:
  explicit HoldTheAnalysis(ProcessRunner& real) : real_(real) {}
  Result<ProcessResult> run(const ProcessSpec& spec) override {
    const auto o0 = std::search(spec.argv.begin(), spec.argv.end(), kO0.begin(), kO0.end());
    if (o0 == spec.argv.end()) return real_.run(spec);
    held = true;
    const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!spec.stop.stop_requested() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!spec.stop.stop_requested()) return real_.run(spec);
    stopped = true;
    ProcessResult r;
    r.cancelled = true;
    return r;
  }
  std::atomic<bool> held{false}, stopped{false};

 private:
  const std::array<std::string, 2> kO0{"-Xcicc", "-O0"};
  ProcessRunner& real_;
};

}  // namespace

// A 2-D access keeps CuTe's layout evaluation in the -O3 build: its own PTX proves the rule, the machine code
// passes against those sites, and the analysis compile is stopped (for a CUTLASS GEMM it is the longer of the two).
TEST_F(RealNvcc, TheBuildsOwnEvidenceStopsTheAnalysisCompile) {
  HoldTheAnalysis hold(runner_);
  NvccCompiler c(hold, options_, toolchain_, CompileCache(cache_root_), CUTEGEN_SANDBOX_BIN);
  const auto t0 = std::chrono::steady_clock::now();
  auto out = c.compile({testdata("cute_2d_rows.cu"), "rows.cu"});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->verdict, CompileVerdict::ok) << out->feedback() << out->log;
  EXPECT_EQ(out->cute_evidence, "build");
  EXPECT_TRUE(hold.held && hold.stopped);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 100.0);
  auto again = c.compile({testdata("cute_2d_rows.cu"), "rows.cu"});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->cache_hit);
  EXPECT_EQ(again->cute_evidence, "build");
}

// Raw stores in a helper that also reads a tensor: at -O3 the helper is inlined and its every instruction carries
// the kernel's call line, so the build's evidence (innermost sites only) does not count the store as CuTe's and
// the -O0 analysis decides, rejecting it as before. Counting the call line would have passed it.
TEST_F(RealNvcc, RawStoresInAnInlinedHelperAreRejectedWhicheverEvidenceIsRead) {
  auto out = compile(testdata("raw_store_in_helper.cu"), "helper.cu");
  ASSERT_EQ(out.verdict, CompileVerdict::rejected) << out.log;
  EXPECT_TRUE(has_violation(out, "raw-stores", "helper_example::scale_rows(")) << out.feedback();
  EXPECT_EQ(out.cute_evidence, "analysis");
}

TEST_F(RealNvcc, IndexingRawPointersTakenFromTensorsIsNotCute) {
  CUTEGEN_SLOW_COMPILE_TEST("raw pointers from tensors; the no-cute static attacks are in the default tier");
  auto out = compile(testdata("cute_data_pointer.cu"), "ptr.cu");
  ASSERT_EQ(out.verdict, CompileVerdict::rejected) << out.log;
  ASSERT_EQ(out.violations.size(), 1u) << out.feedback();
  EXPECT_EQ(out.violations[0].code, "no-cute");
  EXPECT_NE(out.violations[0].message.find("pointer_example::relu_raw("), std::string::npos) << out.feedback();
}

TEST_F(RealNvcc, AnUnlaunchedCuteKernelDoesNotSaveARawOne) {
  CUTEGEN_SLOW_COMPILE_TEST("a decoy CuTe kernel; attacks/cute_only/cute_decoy_kernel.cu is in the default tier");
  auto out = compile(testdata("raw_beside_unlaunched_cute.cu"), "decoy.cu");
  ASSERT_EQ(out.verdict, CompileVerdict::rejected) << out.log;
  ASSERT_EQ(out.violations.size(), 1u) << out.feedback();
  EXPECT_TRUE(has_violation(out, "no-cute", "kernel decoy::relu_raw(")) << out.feedback();
  EXPECT_EQ(out.feedback().find("relu_cute"), std::string::npos) << out.feedback();
}

TEST_F(RealNvcc, LoadTimeCodeTheSourceRulesCannotSeeIsFoundInTheLibrary) {
  CUTEGEN_SLOW_COMPILE_TEST("load-time code past the source rules; the library-load-time-code static attacks are "
                            "in the default tier");
  auto out = compile(testdata("load_time_macro.cu"), "ctor.cu");
  ASSERT_EQ(out.verdict, CompileVerdict::rejected) << out.log;
  EXPECT_EQ(out.violations.size(), 4u) << out.feedback();
  EXPECT_TRUE(has_violation(out, "library-load-time-code", "DT_INIT_ARRAY lists on_load::first_thing()"))
      << out.feedback();
  EXPECT_TRUE(has_violation(out, "library-load-time-code", "DT_FINI_ARRAY lists on_load::last_thing()"))
      << out.feedback();
  EXPECT_TRUE(has_violation(out, "library-load-time-code", "DT_INIT runs code")) << out.feedback();  // .init, gmon
  EXPECT_TRUE(has_violation(out, "library-load-time-code", "threads is a GNU indirect function")) << out.feedback();
}

TEST_F(RealNvcc, LineDirectivesAreRejectedBeforeCompiling) {
  auto out = compile(testdata("line_directive.cu"), "line.cu");
  ASSERT_EQ(out.verdict, CompileVerdict::rejected);
  EXPECT_TRUE(has_violation(out, "line-directive", "line 4")) << out.feedback();
  EXPECT_EQ(out.nvcc_seconds, 0);
}

TEST_F(RealNvcc, SecondCompileIsACacheHitInWellUnderASecond) {
  CUTEGEN_SLOW_COMPILE_TEST("two builds through the cache; cli_smoke checks a real cache hit");
  auto src = example("relu_vec.cu");
  auto first = compile(src, "relu_vec.cu");
  ASSERT_TRUE(first.ok()) << first.feedback();
  auto second = compile(src, "relu_vec.cu");
  EXPECT_TRUE(second.ok());
  EXPECT_EQ(toolchain_.checker_identity, this_build_identity());
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.library, first.library);
  EXPECT_LT(second.total_seconds, 1.0);
  // Any change to the source is a different key.
  auto c = compiler();
  EXPECT_NE(c.key_for(src + "\n"), first.key);
}

TEST_F(RealNvcc, ConcurrentCompilesOfOneSourceBothSucceed) {
  CUTEGEN_SLOW_COMPILE_TEST("two concurrent builds; cli_smoke runs two cutegen compiles at once");
  auto src = example("softmax_rows.cu");
  CompileOutcome a, b;
  std::thread ta([&] { a = compile(src, "softmax_rows.cu"); });
  std::thread tb([&] { b = compile(src, "softmax_rows.cu"); });
  ta.join();
  tb.join();
  EXPECT_TRUE(a.ok()) << a.feedback();
  EXPECT_TRUE(b.ok()) << b.feedback();
  EXPECT_EQ(a.library, b.library);
  EXPECT_TRUE(fs::exists(a.library));
  // The lock makes the second wait for the first instead of compiling again.
  EXPECT_NE(a.cache_hit, b.cache_hit);
}

// One compile of testdata/import_doors.cu, shared by one test per door: each must be refused by name.
// CTest runs each door in its own process; they share the build tree's test cache, so one compiles and
// the others wait for it on the cache's lock and read its entry.
class ImportDoors : public ::testing::TestWithParam<const char*> {
 protected:
  static void SetUpTestSuite() {
    cache_ = new fs::path(CUTEGEN_TEST_SHARED_CACHE);
    std::error_code ec;
    fs::create_directories(*cache_, ec);
    ASSERT_FALSE(ec) << ec.message();
    PosixProcessRunner runner;
    auto tc = probe_toolchain(runner, CompileOptions{});
    ASSERT_TRUE(tc.ok()) << tc.error().message;
    NvccCompiler c(runner, CompileOptions{}, *tc, CompileCache(*cache_), CUTEGEN_SANDBOX_BIN);
    auto out = c.compile({testdata("import_doors.cu"), "doors.cu"});
    ASSERT_TRUE(out.ok()) << out.error().message;
    outcome_ = new CompileOutcome(*out);
  }
  static void TearDownTestSuite() {
    delete cache_;
    delete outcome_;
  }
  static fs::path* cache_;
  static CompileOutcome* outcome_;
};
fs::path* ImportDoors::cache_ = nullptr;
CompileOutcome* ImportDoors::outcome_ = nullptr;

TEST_P(ImportDoors, AreRefusedNamingTheSymbol) {
  ASSERT_NE(outcome_, nullptr);
  ASSERT_EQ(outcome_->verdict, CompileVerdict::rejected) << outcome_->log;
  bool named = false;
  for (const auto& v : outcome_->violations)
    named |= v.code == "forbidden-import" && v.message.find(std::string("imports ") + GetParam()) == 0;
  EXPECT_TRUE(named) << GetParam() << "\n" << outcome_->feedback();
}
INSTANTIATE_TEST_SUITE_P(Doors, ImportDoors,
                         ::testing::Values("cudaGetDriverEntryPoint", "cuGetProcAddress", "dl_iterate_phdr",
                                           "pthread_create", "fopen", "getenv", "syscall", "cudaLaunchHostFunc"));

// atexit is linked statically (libc_nonshared.a), so it never shows as an import: nvcc's own
// registration code calls it too. The source rules refuse it before nvcc runs.
TEST(SourceRulesBeforeNvcc, AtexitIsRefusedInTheSource) {
  FakeProcessRunner fake([](const ProcessSpec&) -> Result<ProcessResult> { return FakeProcessRunner::exited(0); });
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-fake-");
  ASSERT_TRUE(dir.ok());
  Toolchain tc{"nvcc fake", "g++ fake", "4.2.0", "/cutlass", "hash", "/contract"};
  NvccCompiler c(fake, CompileOptions{}, tc, CompileCache(*dir), CUTEGEN_SANDBOX_BIN);
  auto out = c.compile({"#include <cstdlib>\nstatic void bye() {}\nint f() { return std::atexit(bye); }\n", "k.cu"});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->verdict, CompileVerdict::rejected);
  ASSERT_EQ(out->violations.size(), 1u);
  EXPECT_EQ(out->violations[0].code, "load-time-code");
  EXPECT_NE(out->violations[0].message.find("line 3: atexit"), std::string::npos) << out->violations[0].message;
  EXPECT_TRUE(fake.calls().empty());
  fs::remove_all(*dir);
}

// Every refused form is refused before nvcc starts: nvcc never opens the named file.
struct RefusedSource {
  const char* name;
  const char* source;
  const char* code;
};
class SourceRulesBeforeNvccRuns : public ::testing::TestWithParam<RefusedSource> {};

TEST_P(SourceRulesBeforeNvccRuns, NvccIsNeverStarted) {
  const auto& p = GetParam();
  FakeProcessRunner fake([](const ProcessSpec&) -> Result<ProcessResult> { return FakeProcessRunner::exited(0); });
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-fake-");
  ASSERT_TRUE(dir.ok());
  Toolchain tc{"nvcc fake", "g++ fake", "4.2.0", "/cutlass", "hash", "/contract"};
  NvccCompiler c(fake, CompileOptions{}, tc, CompileCache(*dir), CUTEGEN_SANDBOX_BIN);
  std::string source = std::string("#include <cutegen/kernel.h>\n#include <cute/tensor.hpp>\n") + p.source;
  auto out = c.compile({source, "k.cu"});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->verdict, CompileVerdict::rejected);
  bool found = false;
  for (const auto& v : out->violations) found |= v.code == p.code && v.message.rfind("line 3:", 0) == 0;
  EXPECT_TRUE(found) << out->feedback();
  EXPECT_TRUE(fake.calls().empty()) << "nvcc was started for " << p.name;
  EXPECT_EQ(out->nvcc_seconds, 0);
  fs::remove_all(*dir);
}
INSTANTIATE_TEST_SUITE_P(
    Forms, SourceRulesBeforeNvccRuns,
    ::testing::Values(RefusedSource{"etc_passwd", "#include \"/etc/passwd\"\n", "include-not-allowed"},
                      RefusedSource{"dev_zero", "#include </dev/zero>\n", "include-not-allowed"},
                      RefusedSource{"dotdot", "#include \"cute/../../../../home/u/.env\"\n", "include-not-allowed"},
                      RefusedSource{"computed", "#include SECRET_FILE\n", "include-computed"},
                      RefusedSource{"outside_root", "#include <home/u/.env>\n", "include-not-allowed"},
                      RefusedSource{"line", "#line 1 \"/cutlass/include/cute/tensor.hpp\"\n", "line-directive"},
                      RefusedSource{"linemarker", "# 1 \"/cutlass/include/cute/tensor.hpp\"\n", "line-directive"},
                      RefusedSource{"embed", "#embed \"/etc/passwd\"\n", "embed"},
                      RefusedSource{"has_embed", "#if __has_embed(\"/etc/passwd\")\n#endif\n", "embed"},
                      RefusedSource{"incbin", "asm(\".incbin \\\"/etc/passwd\\\"\");\n", "asm-reads-file"},
                      RefusedSource{"pragma_dependency", "#pragma GCC dependency \"/etc/passwd\"\n",
                                    "pragma-not-allowed"},
                      RefusedSource{"constructor", "__attribute__((constructor)) static void f() {}\n",
                                    "load-time-code"},
                      RefusedSource{"destructor", "__attribute__((destructor)) static void f() {}\n", "load-time-code"},
                      RefusedSource{"gnu_constructor", "[[gnu::constructor]] static void f() {}\n", "load-time-code"},
                      RefusedSource{"init_array",
                                    "__attribute__((section(\".init_array\"), used)) static void (*p)() = nullptr;\n",
                                    "load-time-code"},
                      RefusedSource{"time", "const char* built = __TIME__;\n", "nondeterministic-build"}),
    [](const ::testing::TestParamInfo<RefusedSource>& info) { return std::string(info.param.name); });

// Issue 32, class 1a: the compile's own sandbox, as nvcc gets it, on this machine. What an asm string or
// __has_include could name — /etc/passwd, /etc/shadow, another process's /proc/<pid>/cmdline — cannot
// be read and looks missing (not denied), while the toolchain's files and the headers can be read.
TEST(NvccSandbox, HostFilesAreUnreadableAndLookMissingInsideTheCompile) {
  if (landlock::abi_version() == 0)
    GTEST_SKIP() << "this kernel has no Landlock: the compile can read every host file, and says so in `cutegen doctor`";
  auto staging = make_unique_dir(fs::temp_directory_path(), "cutegen-sandbox-reads-");
  ASSERT_TRUE(staging.ok());
  auto cutlass = cutlass_include_dir();
  ASSERT_TRUE(cutlass.ok()) << cutlass.error().message;
  Toolchain tc{"nvcc", "g++", "4.2.0", fs::canonical(*cutlass), "hash", contract_include_dir()};
  FakeProcessRunner unused([](const ProcessSpec&) -> Result<ProcessResult> { return FakeProcessRunner::exited(0); });
  NvccCompiler c(unused, CompileOptions{}, tc, CompileCache(*staging), CUTEGEN_SANDBOX_BIN);
  PosixProcessRunner runner;
  auto cat = [&](const fs::path& file) {
    auto r = runner.run({.argv = sandbox_command(CUTEGEN_SANDBOX_BIN, c.sandbox_policy(*staging), {"cat", file.string()}),
                         .timeout = std::chrono::seconds(60),
                         .cwd = *staging,
                         .private_dir = *staging});
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : ProcessResult{};
  };
  const std::string own_cmdline = fmt::format("/proc/{}/cmdline", ::getpid());
  for (const std::string file : {"/etc/passwd", "/etc/shadow", "/etc/hostname", own_cmdline.c_str(), "/proc/1/environ",
                                 "/sys/class/net/lo/address"}) {
    if (!fs::exists(file)) continue;
    auto r = cat(file);
    EXPECT_NE(r.exit_code, 0) << file << " was read: " << r.out;
    EXPECT_TRUE(r.out.empty()) << file;
    EXPECT_NE(r.err.find("No such file or directory"), std::string::npos) << file << ": " << r.err;
  }
  for (const fs::path& file : {tc.cutlass_include / "cute/tensor.hpp", tc.contract_include / "cutegen/kernel.h",
                               fs::path("/etc/ld.so.cache")}) {
    auto r = cat(file);
    EXPECT_EQ(r.exit_code, 0) << file << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << file;
  }
  fs::remove_all(*staging);
}

// --- fake nvcc ---

TEST(NvccCompilerFake, TimeoutsAreReportedAndNotCached) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-fake-");
  ASSERT_TRUE(dir.ok());
  FakeProcessRunner fake([](const ProcessSpec&) -> Result<ProcessResult> {
    ProcessResult r;
    r.timed_out = true;
    r.wall_seconds = 300;
    return r;
  });
  Toolchain tc{"nvcc fake", "g++ fake", "4.2.0", "/cutlass", "hash", "/contract"};
  NvccCompiler c(fake, wide(), tc, CompileCache(*dir), "/opt/cutegen/bin/cutegen-sandbox");
  auto first = c.compile({"__global__ void k() {}", "k.cu"});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->verdict, CompileVerdict::timeout);
  EXPECT_NE(first->feedback().find("time limit"), std::string::npos);
  auto second = c.compile({"__global__ void k() {}", "k.cu"});
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->cache_hit);
  EXPECT_EQ(fake.calls().size(), 6u);  // each compile: nvcc --dryrun, the build and the analysis beside it
  fs::remove_all(*dir);
}

TEST(NvccCompilerFake, CompileErrorsAreCachedAndMappedToTheDisplayName) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-fake-");
  ASSERT_TRUE(dir.ok());
  FakeProcessRunner fake([](const ProcessSpec& spec) -> Result<ProcessResult> {
    EXPECT_TRUE(spec.cwd.has_value());
    return FakeProcessRunner::exited(2, "", "candidate.cu(2): error: expected a \";\"\n\n1 error detected\n");
  });
  Toolchain tc{"nvcc fake", "g++ fake", "4.2.0", "/cutlass", "hash", "/contract"};
  NvccCompiler c(fake, wide(), tc, CompileCache(*dir), "/opt/cutegen/bin/cutegen-sandbox");
  std::string src = "int a = 1\nint b = 2\n";
  auto first = c.compile({src, "mine.cu"});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->verdict, CompileVerdict::compile_error);
  EXPECT_NE(first->feedback().find("mine.cu:2: expected a \";\""), std::string::npos) << first->feedback();
  auto again = c.compile({src, "other.cu"});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->cache_hit);
  EXPECT_NE(again->feedback().find("other.cu:2:"), std::string::npos) << again->feedback();
  EXPECT_EQ(fake.calls().size(), 3u);  // nvcc --dryrun, the build and the analysis beside it, once
  fs::remove_all(*dir);
}

TEST(NvccCompilerFake, NvccRunsInsideTheSandboxWithItsStagingDirectoryAsHome) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-fake-");
  ASSERT_TRUE(dir.ok());
  FakeProcessRunner fake([](const ProcessSpec&) -> Result<ProcessResult> { return FakeProcessRunner::exited(1, "", "x"); });
  Toolchain tc{"nvcc fake", "g++ fake", "4.2.0", "/cutlass/include", "hash", "/contract/include"};
  CompileOptions options = wide();
  options.memory_limit_mb = 4096;
  NvccCompiler c(fake, options, tc, CompileCache(*dir), "/opt/cutegen/bin/cutegen-sandbox");
  ASSERT_TRUE(c.compile({"int x;\n", "k.cu"}).ok());
  // Both compiles, the build and the CuTe analysis beside it, read the candidate: both are confined, and
  // so is the build's `nvcc --dryrun` before it.
  auto calls = fake.calls();
  ASSERT_EQ(calls.size(), 3u);
  int builds = 0, listings = 0;
  for (const auto& spec : calls) {
    const auto& argv = spec.argv;
    ASSERT_FALSE(argv.empty());
    EXPECT_EQ(argv[0], "/opt/cutegen/bin/cutegen-sandbox");
    auto dashdash = std::find(argv.begin(), argv.end(), "--");
    ASSERT_NE(dashdash, argv.end());
    EXPECT_EQ(*(dashdash + 1), "nvcc");  // the nvcc command follows unchanged
    const bool listing = std::find(dashdash, argv.end(), "--dryrun") != argv.end();
    listings += listing;
    builds += !listing && std::find(dashdash, argv.end(), "kernel.so") != argv.end();  // the output follows -o
    std::vector<std::string> wrapper(argv.begin(), dashdash);
    auto after = [&](const std::string& option) {
      std::vector<std::string> values;
      for (std::size_t i = 0; i + 1 < wrapper.size(); ++i)
        if (wrapper[i] == option) values.push_back(wrapper[i + 1]);
      return values;
    };
    EXPECT_EQ(after("--syscalls"), std::vector<std::string>{"compiler"});
    EXPECT_EQ(after("--rlimit-as"), std::vector<std::string>{std::to_string(4096ull << 20)});
    // Batch priority: compiles beside a timed evaluation must not take its CPUs.
    EXPECT_NE(std::find(wrapper.begin(), wrapper.end(), "--background"), wrapper.end());
    ASSERT_TRUE(spec.cwd.has_value());
    EXPECT_EQ(after("--write"), std::vector<std::string>{spec.cwd->string()});  // only its staging directory
    EXPECT_EQ(spec.private_dir, spec.cwd);                                      // also its HOME and TMPDIR
    EXPECT_EQ(spec.environment, ProcessSpec::Environment::allow_list);
    auto reads = after("--read");
    for (const char* root : {"/cutlass/include", "/contract/include", "/usr", "/etc/ld.so.cache"})
      EXPECT_NE(std::find(reads.begin(), reads.end(), root), reads.end()) << root;
    // A file Landlock denies looks missing to the compile (no existence oracle through __has_include).
    EXPECT_EQ(after("--preload"), std::vector<std::string>{"/opt/cutegen/bin/cutegen-denied-as-missing.so"});
    const char* home = std::getenv("HOME");
    for (const auto& r : reads) {
      EXPECT_NE(r, "/");
      // Not whole trees of host files: the assembler and the preprocessor open whatever path an asm
      // string or __has_include names (/etc/shadow, another process's /proc/<pid>/cmdline).
      for (const char* tree : {"/etc", "/proc", "/sys", "/dev", "/root", "/home", "/tmp"}) EXPECT_NE(r, tree);
      if (home && *home) {
        EXPECT_NE(r, std::string(home));
      }
    }
  }
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(listings, 1);
  fs::remove_all(*dir);
}

TEST(NvccCompilerFake, ASandboxThatCannotStartIsAnErrorNotACompileError) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-fake-");
  ASSERT_TRUE(dir.ok());
  FakeProcessRunner fake([](const ProcessSpec&) -> Result<ProcessResult> {
    return FakeProcessRunner::exited(127, "", "cutegen-sandbox: nvcc: not found\n");
  });
  Toolchain tc{"nvcc fake", "g++ fake", "4.2.0", "/cutlass", "hash", "/contract"};
  NvccCompiler c(fake, CompileOptions{}, tc, CompileCache(*dir), "/opt/cutegen/bin/cutegen-sandbox");
  auto out = c.compile({"int x;\n", "k.cu"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("nvcc: not found"), std::string::npos) << out.error().message;
  EXPECT_NE(out.error().message.find("CUDA toolkit"), std::string::npos);
  fs::remove_all(*dir);
}

TEST(NvccCompilerFake, TheMemoryLimitIsPartOfTheCacheKey) {
  Toolchain tc{"nvcc fake", "g++ fake", "4.2.0", "/cutlass", "hash", "/contract"};
  FakeProcessRunner fake([](const ProcessSpec&) -> Result<ProcessResult> { return FakeProcessRunner::exited(0); });
  CompileOptions small, large;
  small.memory_limit_mb = 2048;
  NvccCompiler a(fake, small, tc, CompileCache("/nonexistent"), "sb");
  NvccCompiler b(fake, large, tc, CompileCache("/nonexistent"), "sb");
  EXPECT_NE(a.key_for("int x;"), b.key_for("int x;"));
}

// An upgrade of cutegen that closes a hole must not keep serving what the older checks passed.
TEST(NvccCompilerFake, TheBuildOfCutegenThatCheckedIsPartOfTheCacheKey) {
  Toolchain older{"nvcc fake", "g++ fake", "4.2.0", "/cutlass", "hash", "/contract"};
  Toolchain newer = older;
  older.checker_identity = "build-id:0000";
  newer.checker_identity = "build-id:0001";
  FakeProcessRunner fake([](const ProcessSpec&) -> Result<ProcessResult> { return FakeProcessRunner::exited(0); });
  NvccCompiler a(fake, CompileOptions{}, older, CompileCache("/nonexistent"), "sb");
  NvccCompiler b(fake, CompileOptions{}, newer, CompileCache("/nonexistent"), "sb");
  EXPECT_NE(a.key_for("int x;"), b.key_for("int x;"));
}

// The CuTe analysis compile runs beside the build (it needs only the source), and each keeps its
// intermediate files in its own directory for the device-code comparison.
TEST(NvccCompilerFake, TheAnalysisCompileRunsBesideTheBuildAndBothKeepTheirDeviceCode) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-fake-");
  ASSERT_TRUE(dir.ok());
  std::mutex mu;
  std::condition_variable cv;
  bool analysis_started = false, build_saw_analysis = false;
  auto has = [](const ProcessSpec& s, const std::string& a) {
    return std::find(s.argv.begin(), s.argv.end(), a) != s.argv.end();
  };
  FakeProcessRunner fake([&](const ProcessSpec& spec) -> Result<ProcessResult> {
    std::unique_lock<std::mutex> lock(mu);
    if (has(spec, "-ptx")) {
      EXPECT_TRUE(has(spec, "kept-analysis"));
      analysis_started = true;
      cv.notify_all();
      return FakeProcessRunner::exited(2, "", "candidate.cu(1): error: expected a declaration\n");
    }
    EXPECT_TRUE(has(spec, "kept-build"));
    build_saw_analysis = cv.wait_for(lock, std::chrono::seconds(10), [&] { return analysis_started; });
    return FakeProcessRunner::exited(2, "", "candidate.cu(1): error: expected a declaration\n");
  });
  Toolchain tc{"nvcc fake", "g++ fake", "4.2.0", "/cutlass", "hash", "/contract"};
  NvccCompiler c(fake, wide(), tc, CompileCache(*dir), "/opt/cutegen/bin/cutegen-sandbox");
  auto out = c.compile({"int x = ;\n", "k.cu"});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->verdict, CompileVerdict::compile_error);
  EXPECT_EQ(fake.calls().size(), 3u);  // with the build's nvcc --dryrun
  EXPECT_TRUE(build_saw_analysis) << "the build finished before the analysis compile started";
  // The cache entry holds neither compile's intermediate files.
  EXPECT_FALSE(fs::exists(out->library.parent_path() / "kept-build"));
  EXPECT_FALSE(fs::exists(out->library.parent_path() / "kept-analysis"));
  fs::remove_all(*dir);
}

TEST(NvccCompilerFake, KnobDefinesArePartOfTheCacheKey) {
  Toolchain tc{"nvcc fake", "g++ fake", "4.2.0", "/cutlass", "hash", "/contract"};
  FakeProcessRunner fake([](const ProcessSpec&) -> Result<ProcessResult> { return FakeProcessRunner::exited(0); });
  NvccCompiler c(fake, CompileOptions{}, tc, CompileCache("/nonexistent"), "sb");
  const std::string src = "int x = N;";
  EXPECT_NE(c.key_for(src), c.key_for(src, {{"N", "1"}}));
  EXPECT_NE(c.key_for(src, {{"N", "1"}}), c.key_for(src, {{"N", "2"}}));
  EXPECT_NE(c.key_for(src, {{"N", "1"}}), c.key_for(src, {{"M", "1"}}));
  EXPECT_EQ(c.key_for(src, {{"N", "2"}}), c.key_for(src, {{"N", "2"}}));
}

TEST(NvccCompilerFake, ARefusedDefineIsAnErrorNotAVerdict) {
  int spawned = 0;
  FakeProcessRunner fake([&](const ProcessSpec&) -> Result<ProcessResult> {
    ++spawned;
    return FakeProcessRunner::exited(0);
  });
  Toolchain tc{"nvcc fake", "g++ fake", "4.2.0", "/cutlass", "hash", "/contract"};
  NvccCompiler c(fake, CompileOptions{}, tc, CompileCache("/nonexistent"), "sb");
  auto out = c.compile({"int x;\n", "k.cu", {{"N", "1 2"}}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("cannot define N"), std::string::npos) << out.error().message;
  EXPECT_EQ(spawned, 0);
}

TEST(NvccCompilerFake, MissingNvccIsAnErrorSayingWhatToInstall) {
  FakeProcessRunner fake([](const ProcessSpec&) -> Result<ProcessResult> { return Error{"`nvcc` not found on PATH"}; });
  auto tc = probe_toolchain(fake, CompileOptions{});
  ASSERT_FALSE(tc.ok());
  EXPECT_NE(tc.error().message.find("CUDA toolkit"), std::string::npos);
}

// Every kernel of the attack suite must build (so the GPU judge really faces it), except those the
// static checks must already refuse. One test per manifest entry, so a failure names its kernel.
namespace {
std::vector<nlohmann::json> attack_entries() {
  auto text = read_file(fs::path(CUTEGEN_SOURCE_DIR) / "attacks/manifest.json");
  if (!text) return {};
  std::vector<nlohmann::json> out;
  auto manifest = nlohmann::json::parse(*text);  // kept alive: the loop below refers into it
  for (const auto& a : manifest["attacks"]) out.push_back(a);
  return out;
}
std::string attack_name(const ::testing::TestParamInfo<nlohmann::json>& info) {
  std::string stem = fs::path(info.param["kernel"].get<std::string>()).stem().string();
  for (char& c : stem)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return stem;
}
}  // namespace

TEST(AttackManifest, HasAtLeastTwelveAttacks) { EXPECT_GE(attack_entries().size(), 12u); }

class AttackKernels : public RealNvcc, public ::testing::WithParamInterface<nlohmann::json> {};

TEST_P(AttackKernels, CompileOrAreRejectedAsTheManifestSays) {
  const auto& a = GetParam();
  // A runtime attack must build and pass every static check so the judge really faces it; that is
  // proven where it is judged (gpu-check's precompile fails the suite's entry otherwise).
  if (!a.value("static", false))
    CUTEGEN_SLOW_COMPILE_TEST("a runtime attack's build; gpu-check builds it before judging it");
  std::string path = a["kernel"];
  auto out = compile(read(fs::path(CUTEGEN_SOURCE_DIR) / path), fs::path(path).filename().string());
  if (a.value("static", false)) {
    EXPECT_EQ(out.verdict, CompileVerdict::rejected) << path << "\n" << out.feedback();
    // By the check the manifest names: another that happens to catch the kernel does not stand in.
    const std::string code = a.value("violation", "");
    EXPECT_TRUE(std::any_of(out.violations.begin(), out.violations.end(),
                            [&](const CheckViolation& v) { return v.code == code; }))
        << path << " is not refused by [" << code << "]\n" << out.feedback();
  } else
    EXPECT_EQ(out.verdict, CompileVerdict::ok) << path << "\n" << out.feedback() << out.log;
}
INSTANTIATE_TEST_SUITE_P(Manifest, AttackKernels, ::testing::ValuesIn(attack_entries()), attack_name);

// CUTLASS's utility headers (tools/util/include beside include/), where the toolchain found them: both
// compiles get them as an -I and the sandbox lets nvcc read them -- CUTLASS's SM90 convolution includes
// cutlass/util/packed_stride.hpp, and library/conv_implicit_gemm.cu's CIG_TMA path needs it.
TEST(NvccCompilerFake, CutlassUtilityHeadersAreIncludedAndReadableWhereFound) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-fake-");
  ASSERT_TRUE(dir.ok());
  FakeProcessRunner fake([](const ProcessSpec&) -> Result<ProcessResult> { return FakeProcessRunner::exited(1, "", "x"); });
  Toolchain tc{"nvcc fake", "g++ fake", "4.2.0", "/cutlass/include", "hash", "/contract/include"};
  tc.cutlass_util_include = "/cutlass/tools/util/include";
  NvccCompiler c(fake, wide(), tc, CompileCache(*dir), "/opt/cutegen/bin/cutegen-sandbox");
  ASSERT_TRUE(c.compile({"int x;\n", "k.cu"}).ok());
  const auto calls = fake.calls();
  ASSERT_EQ(calls.size(), 3u);  // nvcc --dryrun, the build and the analysis beside it
  for (const auto& spec : calls) {
    const auto& argv = spec.argv;
    EXPECT_NE(std::find(argv.begin(), argv.end(), "-I/cutlass/tools/util/include"), argv.end());
    EXPECT_NE(std::find(argv.begin(), argv.end(), "-I/cutlass/include"), argv.end());
    bool readable = false;
    for (std::size_t i = 0; i + 1 < argv.size() && argv[i] != "--"; ++i)
      readable |= argv[i] == "--read" && argv[i + 1] == "/cutlass/tools/util/include";
    EXPECT_TRUE(readable) << "the sandbox must let nvcc read the utility headers";
  }
  // Without them nothing is added: a kernel that needs them fails naming the missing header.
  tc.cutlass_util_include.clear();
  FakeProcessRunner bare([](const ProcessSpec&) -> Result<ProcessResult> { return FakeProcessRunner::exited(1, "", "x"); });
  NvccCompiler without(bare, wide(), tc, CompileCache(*dir), "/opt/cutegen/bin/cutegen-sandbox");
  ASSERT_TRUE(without.compile({"int y;\n", "k.cu"}).ok());
  for (const auto& spec : bare.calls())
    for (const auto& a : spec.argv) EXPECT_EQ(a.find("tools/util"), std::string::npos) << a;
  fs::remove_all(*dir);
}

// The build runs nvcc's own steps, listed by `nvcc --dryrun`, with the front end beside the device compile
// (nvcc_plan.h): the script runs in the sandbox like nvcc would, after the module id is written where both
// chains read it. A listing of another shape runs nvcc itself, and the outcome says why.
TEST(NvccCompilerFake, TheBuildRunsNvccsStepsOverlappedOrNvccItselfSayingWhy) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-fake-");
  ASSERT_TRUE(dir.ok());
  const std::string listing = testdata("nvcc13_dryrun.txt");
  std::string id_seen, script_seen;
  auto has = [](const ProcessSpec& s, const std::string& a) {
    return std::find(s.argv.begin(), s.argv.end(), a) != s.argv.end();
  };
  auto handler = [&](const std::string& dryrun_output) {
    return [&, dryrun_output](const ProcessSpec& spec) -> Result<ProcessResult> {
      if (has(spec, "--dryrun")) return FakeProcessRunner::exited(0, "", dryrun_output);
      if (has(spec, "/bin/sh")) {
        id_seen = read(*spec.cwd / "kept-build/candidate.module_id");
        script_seen = read(*spec.cwd / "kept-build/nvcc-chains.sh");
      }
      return FakeProcessRunner::exited(2, "", "candidate.cu(1): error: expected a declaration\n");
    };
  };
  Toolchain tc{"nvcc fake", "g++ fake", "4.2.0", "/cutlass", "hash", "/contract"};
  CompileOptions sixteen = wide();
  FakeProcessRunner fake(handler(listing));
  NvccCompiler c(fake, sixteen, tc, CompileCache(*dir), "/opt/cutegen/bin/cutegen-sandbox");
  auto out = c.compile({"int x = ;\n", "k.cu"});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->verdict, CompileVerdict::compile_error);
  EXPECT_EQ(out->nvcc_steps, "overlapped (host compile after cicc: compile.stub_ahead is off)");
  // One id for every candidate (host_pch.h): another source's build is given the same one.
  EXPECT_EQ(id_seen.substr(9), "_12_candidate_cu_" + id_seen.substr(26)) << id_seen;
  const std::string first_id = id_seen;
  id_seen.clear();
  ASSERT_TRUE(c.compile({"int w = ;\n", "k.cu"}).ok());
  EXPECT_EQ(id_seen, first_id);
  EXPECT_NE(script_seen.find("wait $device"), std::string::npos);
  int sandboxed_scripts = 0;
  for (const auto& spec : fake.calls()) {
    if (!has(spec, "/bin/sh")) continue;
    EXPECT_EQ(spec.argv.front(), "/opt/cutegen/bin/cutegen-sandbox");
    EXPECT_TRUE(has(spec, "--syscalls") && has(spec, "compiler"));
    ++sandboxed_scripts;
  }
  EXPECT_EQ(sandboxed_scripts, 2);

  FakeProcessRunner other(handler("#$ _SPACE_= \n#$ nvcc-next --everything-at-once candidate.cu\n"));
  NvccCompiler d(other, sixteen, tc, CompileCache(*dir), "/opt/cutegen/bin/cutegen-sandbox");
  auto in_turn = d.compile({"int y = ;\n", "k.cu"});
  ASSERT_TRUE(in_turn.ok());
  EXPECT_EQ(in_turn->nvcc_steps, "in turn: expected one cudafe++ and one cicc, found 0 and 0");
  for (const auto& spec : other.calls()) EXPECT_FALSE(has(spec, "/bin/sh"));
  EXPECT_EQ(in_turn->to_json().value("nvcc_steps", ""), in_turn->nvcc_steps);

  // On two CPUs the analysis compile takes the second: nvcc runs as it is, without even a listing.
  CompileOptions two = sixteen;
  two.cpus = 2;
  FakeProcessRunner small(handler(listing));
  NvccCompiler e(small, two, tc, CompileCache(*dir), "/opt/cutegen/bin/cutegen-sandbox");
  auto narrow = e.compile({"int z = ;\n", "k.cu"});
  ASSERT_TRUE(narrow.ok());
  EXPECT_EQ(narrow->nvcc_steps, "in turn: 2 CPUs, overlapping needs 4");
  EXPECT_EQ(small.calls().size(), 2u);
  for (const auto& spec : small.calls()) EXPECT_FALSE(has(spec, "/bin/sh") || has(spec, "--dryrun"));
  fs::remove_all(*dir);
}

// The precompiled host header on a fake toolchain (host_pch.h): the first build precompiles the prefix
// (its script run sandboxed in the store, writing only there); a later build's host compile reads it with
// the entry readable; where that compile fails, nvcc's own steps run again on the original host source,
// and theirs is the outcome's log.
TEST(NvccCompilerFake, AHostCompileThroughTheHeaderThatFailsRunsNvccsOwnStepsAgain) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-fake-");
  ASSERT_TRUE(dir.ok());
  const std::string listing = testdata("nvcc13_dryrun.txt");
  const std::string host_source = "# 1 \"candidate.cu\"\n" + std::string(2 << 20, ' ') + "\n# 9 \"candidate.cu\"\nint own;\n";
  auto has = [](const ProcessSpec& s, const std::string& a) {
    return std::find(s.argv.begin(), s.argv.end(), a) != s.argv.end();
  };
  std::mutex mu;
  std::string plain_saw, through_saw;
  std::vector<std::string> through_reads, pch_writes;
  FakeProcessRunner fake([&](const ProcessSpec& spec) -> Result<ProcessResult> {
    const fs::path source = spec.cwd ? *spec.cwd / "kept-build/candidate.cudafe1.cpp" : fs::path();
    std::lock_guard lock(mu);
    if (has(spec, "--dryrun")) return FakeProcessRunner::exited(0, "", listing);
    if (has(spec, "kept-build/nvcc-chains.sh")) {
      EXPECT_TRUE(write_file_atomic(source, host_source).ok());
      return FakeProcessRunner::exited(0);
    }
    if (has(spec, "pch.sh")) {
      for (std::size_t i = 0; i + 1 < spec.argv.size() && spec.argv[i] != "--"; ++i)
        if (spec.argv[i] == "--write") pch_writes.push_back(spec.argv[i + 1]);
      EXPECT_TRUE(write_file_atomic(*spec.cwd / "cutegen-host-prefix.h.gch", "a header").ok());
      return FakeProcessRunner::exited(0);
    }
    if (has(spec, "kept-build/nvcc-rest-pch.sh")) {
      through_saw = read(source);
      for (std::size_t i = 0; i + 1 < spec.argv.size() && spec.argv[i] != "--"; ++i)
        if (spec.argv[i] == "--read") through_reads.push_back(spec.argv[i + 1]);
      return FakeProcessRunner::exited(1, "", "cc1plus: one or more PCH files were found, but they were invalid\n");
    }
    if (has(spec, "kept-build/nvcc-rest.sh")) {
      plain_saw = read(source);
      return FakeProcessRunner::exited(2, "", "candidate.cu(9): error: the plain steps' own error\n");
    }
    return FakeProcessRunner::exited(2, "", "candidate.cu(1): error: expected a declaration\n");  // the analysis
  });
  Toolchain tc{"nvcc fake", "g++ fake", "4.2.0", "/cutlass", "hash", "/contract"};
  {
    NvccCompiler c(fake, wide(), tc, CompileCache(*dir), "/opt/cutegen/bin/cutegen-sandbox");
    auto first = c.compile({"int a = ;\n", "k.cu"});
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_EQ(first->host_pch, "precompiling for the next build");
    EXPECT_EQ(plain_saw, host_source);
  }  // waits for the header
  const fs::path store = *dir / "host-pch" / "v1";
  ASSERT_EQ(pch_writes.size(), 1u);
  EXPECT_EQ(fs::path(pch_writes.front()).parent_path(), store) << "the header's compile may write only its own directory";

  plain_saw.clear();
  NvccCompiler d(fake, wide(), tc, CompileCache(*dir), "/opt/cutegen/bin/cutegen-sandbox");
  auto second = d.compile({"int b = ;\n", "k.cu"});
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(through_saw.rfind("#include \"" + (fs::absolute(store)).string() + "/", 0), 0u) << through_saw.substr(0, 200);
  EXPECT_NE(through_saw.find("\n# 9 \"candidate.cu\"\nint own;\n"), std::string::npos);
  ASSERT_EQ(through_reads.empty(), false);
  EXPECT_EQ(fs::path(through_reads.back()).parent_path(), fs::absolute(store)) << "the entry is not readable to the build";
  EXPECT_EQ(second->host_pch.rfind("not used: the host compile through it failed (cc1plus: one or more PCH", 0), 0u)
      << second->host_pch;
  EXPECT_EQ(plain_saw, host_source) << "nvcc's own steps must read the original host source";
  EXPECT_EQ(second->verdict, CompileVerdict::compile_error);
  EXPECT_NE(second->log.find("the plain steps' own error"), std::string::npos) << second->log;
  EXPECT_EQ(second->log.find("PCH files"), std::string::npos) << "the failed attempt's log leaked into the outcome";
  fs::remove_all(*dir);
}

namespace {
// Runs for real and records every command, for tests of what the compiler ran.
class RecordingRunner final : public ProcessRunner {
 public:
  // alter_cubin: once the chains have built the device code, append bytes to the cubin they wrote, so the
  // early disassembly reads bytes other than the library's image (which fatbinary already took).
  explicit RecordingRunner(bool alter_cubin = false) : alter_cubin_(alter_cubin) {}
  Result<ProcessResult> run(const ProcessSpec& spec) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      argvs_.push_back(spec.argv);
      // What each nvdisasm is given, read before it runs (the staging directory is gone afterwards).
      for (const auto& a : spec.argv)
        if (a.ends_with(".cubin") && spec.cwd) cubins_.push_back({a, read(*spec.cwd / a)});
    }
    auto result = real_.run(spec);
    const bool chains = std::find(spec.argv.begin(), spec.argv.end(), "kept-build/nvcc-chains.sh") != spec.argv.end();
    if (alter_cubin_ && chains && result && result->succeeded() && spec.cwd) {
      const fs::path cubin = *spec.cwd / "kept-build/candidate.cubin";
      std::lock_guard<std::mutex> lock(mu_);
      chains_cubin_ = read(cubin);
      std::ofstream(cubin, std::ios::binary | std::ios::app) << std::string(64, '\x5a');
    }
    return result;
  }
  std::string chains_cubin() const {
    std::lock_guard<std::mutex> lock(mu_);
    return chains_cubin_;
  }
  std::vector<std::vector<std::string>> argvs() const {
    std::lock_guard<std::mutex> lock(mu_);
    return argvs_;
  }
  std::vector<std::pair<std::string, std::string>> cubins() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cubins_;
  }

 private:
  PosixProcessRunner real_;
  mutable std::mutex mu_;
  std::vector<std::vector<std::string>> argvs_;
  std::vector<std::pair<std::string, std::string>> cubins_;  // (argument, bytes)
  bool alter_cubin_ = false;
  std::string chains_cubin_;  // the cubin as the chains wrote it, before alter_cubin changed it
};

// What nvdisasm was given: the chains' cubin beside the host compile (early), the library's images after.
struct DisassembledCubins {
  std::vector<std::string> early, late;
};
DisassembledCubins disassembled_cubins(const RecordingRunner& recording) {
  DisassembledCubins d;
  for (const auto& [arg, bytes] : recording.cubins()) (arg == "kept-build/candidate.cubin" ? d.early : d.late).push_back(bytes);
  return d;
}
}  // namespace

// The whole overlapped path on the installed toolkit, sandboxed as in use: nvcc's steps as two scripts,
// the module id cutegen wrote, and the CuTe check on the build reading the disassembly nvdisasm made of
// the chains' cubin beside the host compile (the library's image is those bytes, so no second nvdisasm).
TEST_F(RealNvcc, AnOverlappedBuildPassesEveryCheckAndDisassemblesItsCubinOnce) {
  RecordingRunner recording;
  const CompileOutcome out = compile_overlapped(recording);
  EXPECT_EQ(out.verdict, CompileVerdict::ok) << out.feedback() << out.log;
  // A first build: no precompiled prefix yet, so the host compile from the early stub reads the source
  // as cudafe++ wrote it (stub_ahead.h), and the prefix is precompiled for the next build.
  EXPECT_EQ(out.nvcc_steps, "overlapped, host compile from the early stub");
  EXPECT_EQ(out.host_pch, "precompiling for the next build");
  int scripts = 0;
  for (const auto& argv : recording.argvs())
    for (const auto& a : argv)
      scripts += a == "kept-build/nvcc-ahead-front.sh" || a == "kept-build/nvcc-ahead-device.sh" ||
                 a == "kept-build/nvcc-ahead-host.sh" || a == "kept-build/nvcc-ahead-after.sh";
  EXPECT_EQ(scripts, 4);
  const auto [early, late] = disassembled_cubins(recording);
  ASSERT_EQ(early.size(), 1u);
  EXPECT_FALSE(early.front().empty());
  // The library's other image, nvlink's device-link image, holds no machine code: nothing is disassembled
  // after the build.
  EXPECT_TRUE(late.empty()) << late.size() << " image(s) disassembled after the build";
}

// A compile error in the build with the early stub reads as nvcc's: once, though cudafe++, cicc and the
// early cicc all meet it.
TEST_F(RealNvcc, ACompileErrorOfTheBuildWithTheEarlyStubIsReportedOnce) {
  CompileOptions o = options_;
  o.cpus = 16;
  NvccCompiler c(runner_, o, toolchain_, CompileCache(cache_root_), CUTEGEN_SANDBOX_BIN);
  auto out = c.compile({"#include <cute/tensor_impl.hpp>\n__global__ void k(float* x) { x[0] = undefined_name; }\n",
                        "broken.cu"});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->verdict, CompileVerdict::compile_error);
  EXPECT_EQ(out->nvcc_steps, "overlapped") << "the path with the early stub, which ends at the front end here";
  const auto first = out->log.find("\"undefined_name\" is undefined");
  ASSERT_NE(first, std::string::npos) << out->log;
  EXPECT_EQ(out->log.find("\"undefined_name\" is undefined", first + 1), std::string::npos) << "reported twice:\n"
                                                                                        << out->log;
}

// nvcc in turn (2 CPUs): no early disassembly, so the library's images are disassembled after the build, and
// only the one that holds machine code. nvlink's device-link image has none; nvdisasm took ~0.4 s on it,
// a tenth of an elementwise kernel's compile.
TEST_F(RealNvcc, OnlyTheLibrarysImageWithMachineCodeIsDisassembled) {
  RecordingRunner recording;
  CompileOptions o = options_;
  o.cpus = 2;
  NvccCompiler c(recording, o, toolchain_, CompileCache(cache_root_), CUTEGEN_SANDBOX_BIN);
  auto out = c.compile({example("relu_cute_1d.cu"), "relu_cute_1d.cu"});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->verdict, CompileVerdict::ok) << out->feedback() << out->log;
  ASSERT_TRUE(out->nvcc_steps.starts_with("in turn")) << out->nvcc_steps;
  auto library = check_library(out->library);
  ASSERT_TRUE(library.ok()) << library.error().message;
  ASSERT_EQ(library->device_images.size(), 2u) << "expected the kernel's image and nvlink's";
  ASSERT_EQ(library->code_images.size(), 1u);
  const auto [early, late] = disassembled_cubins(recording);
  EXPECT_TRUE(early.empty());
  ASSERT_EQ(late.size(), 1u) << "nvdisasm ran on an image without machine code, or not at all";
  EXPECT_TRUE(late.front() == library->code_images.front());
}

// The host compile's precompiled prefix (host_pch.h): the first overlapped build of a set of includes
// precompiles it beside its own host compile; a later build of another candidate with those includes
// compiles through it, passes every check (the host assembly included), and writes the very library a
// build without it writes.
TEST_F(RealNvcc, ALaterBuildWithTheSameIncludesCompilesItsHostCodeThroughThePrecompiledPrefix) {
  CompileOptions o = options_;
  o.cpus = 16;
  const std::string first = example("relu_cute_1d.cu");
  const std::string second = first + "\nextern \"C\" int cutegen_test_other() { return 2; }\n";
  {
    NvccCompiler c(runner_, o, toolchain_, CompileCache(cache_root_), CUTEGEN_SANDBOX_BIN);
    auto out = c.compile({first, "relu_cute_1d.cu"});
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_EQ(out->verdict, CompileVerdict::ok) << out->feedback() << out->log;
    EXPECT_EQ(out->host_pch, "precompiling for the next build");
  }  // waits for the precompile
  const fs::path store = cache_root_ / "host-pch" / "v1";
  int entries = 0;
  for (const auto& e : fs::directory_iterator(store)) entries += e.path().filename().string().size() == 64;
  ASSERT_EQ(entries, 1) << "the prefix was not precompiled into " << store;

  fs::path entry;
  for (const auto& e : fs::directory_iterator(store)) entry = e.path();
  const std::string gch_before = read(entry / "cutegen-host-prefix.h.gch");

  RecordingRunner recording;
  NvccCompiler c(recording, o, toolchain_, CompileCache(cache_root_), CUTEGEN_SANDBOX_BIN);
  auto through = c.compile({second, "relu_other.cu"});
  ASSERT_TRUE(through.ok()) << through.error().message;
  EXPECT_EQ(through->verdict, CompileVerdict::ok) << through->feedback() << through->log;
  EXPECT_EQ(through->host_pch, "used") << through->log;
  EXPECT_EQ(through->to_json().value("host_pch", ""), "used");
  // With the prefix there, the host compile started from the early stub, beside the device chain.
  EXPECT_EQ(through->nvcc_steps, "overlapped, host compile from the early stub");
  // The host compile reads the entry and may not write it: its .gch is what the next build reads.
  bool confined = false;
  for (const auto& argv : recording.argvs()) {
    if (std::find(argv.begin(), argv.end(), "kept-build/nvcc-ahead-host.sh") == argv.end()) continue;
    for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--read" && fs::path(argv[i + 1]) == fs::absolute(entry)) confined = true;
      if (argv[i] == "--write") {
        EXPECT_NE(fs::path(argv[i + 1]), fs::absolute(entry));
      }
      if (argv[i] == "--") break;
    }
  }
  EXPECT_TRUE(confined) << "the host steps through the prefix did not run with the entry readable";
  EXPECT_TRUE(read(entry / "cutegen-host-prefix.h.gch") == gch_before);

  const std::string through_library = read(through->library);
  ASSERT_FALSE(through_library.empty());
  // The cache entry keeps the library, not the early cicc's directory or the bitcode it leaves behind.
  const fs::path stored = fs::path(through->library).parent_path();
  EXPECT_FALSE(fs::exists(stored / kStubAheadDir)) << stored;
  for (const auto& e : fs::recursive_directory_iterator(stored))
    EXPECT_EQ(e.path().string().find(".lgenfe.bc"), std::string::npos) << e.path();
  EXPECT_NE(through_library.find("cutegen_test_other"), std::string::npos) << "the candidate's own host code is missing";
  // The same source again with neither its cache entry nor the prefix stored: as nvcc would build it.
  ASSERT_TRUE(CompileCache(cache_root_).clear().ok());
  ASSERT_TRUE(HostPchStore(store).clear().ok());
  auto without = c.compile({second, "relu_other.cu"});
  ASSERT_TRUE(without.ok()) << without.error().message;
  EXPECT_FALSE(without->cache_hit);
  EXPECT_EQ(without->host_pch, "precompiling for the next build");
  // The precompiled prefix is the host compiler's: the host code must be the same bytes. The device code
  // differs between any two builds (its line table has the staging directory and the source's mtime), and
  // so does the linker's build id: both are blanked.
  auto host_part = [](const fs::path& path) {
    std::string library = read(path);
    auto inspected = check_library(path);
    EXPECT_TRUE(inspected.ok());
    if (inspected.ok())
      for (const auto& image : inspected->device_images)
        if (auto at = library.find(image); at != std::string::npos) library.replace(at, image.size(), std::string(image.size(), '\0'));
    const std::string note("\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0", 16);
    if (auto at = library.find(note); at != std::string::npos && at + 36 <= library.size())
      library.replace(at + 16, 20, std::string(20, '\0'));
    return library;
  };
  const fs::path kept = cache_root_ / "through.so";
  ASSERT_TRUE(write_file_atomic(kept, through_library).ok());
  EXPECT_TRUE(host_part(kept) == host_part(without->library))
      << "the host code built through the prefix differs from the host code built without it";
}

// What the early stub is for: the CUTLASS GEMM, whose cicc runs ~1.5 s past its stub. Its first build
// and a later one (through the precompiled prefix) both take the path and pass every check.
TEST_F(RealNvcc, TheLibraryGemmBuildsFromTheEarlyStubWithAndWithoutThePrefix) {
  CUTEGEN_SLOW_COMPILE_TEST("the 3xTF32 GEMM twice with nvcc's steps overlapped");
  CompileOptions o = options_;
  o.cpus = 16;
  auto build = [&](const std::string& source) {
    NvccCompiler c(runner_, o, toolchain_, CompileCache(cache_root_), CUTEGEN_SANDBOX_BIN);
    auto out = c.compile({source, "gemm_sm90_3xtf32.cu"});
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
    return out.ok() ? *out : CompileOutcome{};
  };  // the compiler's end waits for the prefix's precompile
  const std::string gemm = example("gemm_sm90_3xtf32.cu");
  const CompileOutcome first = build(gemm);
  EXPECT_EQ(first.verdict, CompileVerdict::ok) << first.feedback() << first.log;
  EXPECT_EQ(first.nvcc_steps, "overlapped, host compile from the early stub") << first.log;
  EXPECT_EQ(first.host_pch, "precompiling for the next build");
  const CompileOutcome later = build(gemm + "\n// another source, the same includes\n");
  EXPECT_EQ(later.verdict, CompileVerdict::ok) << later.feedback() << later.log;
  EXPECT_EQ(later.nvcc_steps, "overlapped, host compile from the early stub") << later.log;
  EXPECT_EQ(later.host_pch, "used");
}

// The other branch: where the bytes the early disassembly read are not the library's image, the check
// reads the image itself. Here the cubin file changes after fatbinary took it, so the early disassembly
// (of the changed file) must go unused and the library's image, the chains' original bytes, be disassembled.
TEST_F(RealNvcc, AnEarlyDisassemblyOfOtherBytesThanTheLibrarysImageGoesUnused) {
  RecordingRunner recording(/*alter_cubin=*/true);  // alters the cubin after nvcc-chains.sh
  const CompileOutcome out = compile_overlapped(recording, /*stub_ahead=*/false);
  EXPECT_EQ(out.verdict, CompileVerdict::ok) << out.feedback() << out.log;
  ASSERT_EQ(out.nvcc_steps, "overlapped (host compile after cicc: compile.stub_ahead is off)");
  const std::string original = recording.chains_cubin();
  ASSERT_FALSE(original.empty());
  const auto [early, late] = disassembled_cubins(recording);
  ASSERT_EQ(early.size(), 1u);
  EXPECT_NE(early.front(), original) << "the test's change to the cubin did not happen";
  // Every image of the library that holds machine code is disassembled from its own bytes, the one the chains
  // built included; nvlink's device-link image, which holds none, is not disassembled at all.
  auto library = check_library(out.library);
  ASSERT_TRUE(library.ok()) << library.error().message;
  EXPECT_EQ(std::count(library->code_images.begin(), library->code_images.end(), original), 1);
  for (const auto& image : library->code_images)
    EXPECT_EQ(std::count(late.begin(), late.end(), image), 1) << "an image went undisassembled or twice";
  EXPECT_EQ(library->device_images.size(), library->code_images.size() + 1)
      << "expected nvlink's device-link image beside the kernel's";
  EXPECT_EQ(late.size(), library->code_images.size()) << "an image without machine code was disassembled";
}
