// The tuner on the judge's real path: JudgeTuneBackend, the Judge and the REAL reference worker on
// the CPU (its runner played by the worker's test hooks, as in run/judge_worker_test.cpp), so the
// screening settings are ones the worker accepts and a tuning ends in a full evaluation.
#include "tune/judge_tune_backend.h"

#include <cstdlib>
#include <mutex>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"
#include "run/roofline.h"  // kCalibrationVersion: the fixtures' caches stay current

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

class BuiltCompiler final : public Compiler {
 public:
  Result<CompileOutcome> compile(const CompileRequest& r) override {
    std::lock_guard lock(mu);
    requests.push_back(r);
    CompileOutcome o;
    o.verdict = CompileVerdict::ok;
    o.library = library;  // exports a plain entry point (so the variants are screened as a group); never loaded
    return o;
  }
  fs::path library = "/nonexistent/kernel.so";
  std::mutex mu;
  std::vector<CompileRequest> requests;
};

const char* kTunableSource = R"(// cutegen:knob T_THREADS in {128, 256}
#ifndef T_THREADS
#define T_THREADS 256
#endif
)";

}  // namespace

TEST(JudgeTuneBackend, TunesOnTheRealWorkersScreeningPathAndJudgesTheChoiceInFull) {
  if (std::system("python3 -c 'import torch' >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 with torch is not installed";
  setenv("CUTEGEN_PROBLEM_SCALE", "64", 1);
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-tune-worker-");
  ASSERT_TRUE(dir.ok());
  auto worker = PythonWorker::start({.package_dir = fs::path(CUTEGEN_SOURCE_DIR) / "python",
                                       .log_path = *dir / "worker.log",
                                       .script = fs::path(CUTEGEN_SOURCE_DIR) / "python/tests/fake_runner_worker.py"});
  ASSERT_TRUE(worker.ok()) << worker.error().message;
  ASSERT_TRUE(write_file_atomic(*dir / "cache/calibration/cpu.json",
                                "{\"version\":" + std::to_string(kCalibrationVersion) + R"(,"gpu":"cpu","hbm_gbps":20,"tflops":{"fp32":0.1,"tf32":0.1,"fp16":0.1,"bf16":0.1}})")
                  .ok());
  EvalOptions o;
  o.trials = 1;
  o.warmup = 1;
  o.runs = 10;
  o.seed = 5;
  o.device = "cpu";
  o.baselines = false;
  o.runner = "/nonexistent/cutegen-runner";
  o.work_dir = *dir / "work";
  o.cache_root = *dir / "cache";
  o.fake_runner = {{"mode", "reference"}};
  BuiltCompiler compiler;
  compiler.library = *dir / "plain.so";
  ASSERT_TRUE(cutegen::testing::build_shared_object(compiler.library, "extern \"C\" int cutegen_forward() { return 0; }\n"));
  Judge judge(compiler, **worker, o);
  JudgeTuneBackend backend(compiler, judge, fs::path(CUTEGEN_SOURCE_DIR) / "problems/relu.py");
  TuneOptions to;
  to.min_gain = 10;  // CPU times are noise: keep the default, which is then judged in full
  auto r = tune_kernel(kTunableSource, backend, to);
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (const auto& row : r->rows) {
    EXPECT_EQ(row.verdict, Verdict::pass) << row.reason;
    EXPECT_TRUE(row.screened_ms);
  }
  EXPECT_TRUE(r->default_kept);
  ASSERT_TRUE(r->evaluation);
  EXPECT_TRUE(r->evaluation->passed()) << r->evaluation->reason;
  EXPECT_FALSE(r->evaluation->details.contains("screening"));  // the full evaluation, not a screened one
  EXPECT_FALSE(r->evaluation->details["session"].contains("screening_group"));
  // Two variants compiled by the tuner, each compiled again (a cache hit in real life) to be screened together,
  // then the default once more for the full verification.
  ASSERT_EQ(compiler.requests.size(), 5u);
  EXPECT_EQ(compiler.requests[4].defines.size(), 0u);
  worker->reset();
  unsetenv("CUTEGEN_PROBLEM_SCALE");
  fs::remove_all(*dir);
}
