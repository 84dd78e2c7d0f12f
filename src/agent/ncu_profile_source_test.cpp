// The loop's ProfileSource over the judge and a scripted profiler: the profiler is asked to profile
// the runner command the judge wrote for the evaluated library, with the evaluation's timing and floor.
#include "agent/ncu_profile_source.h"

#include <gtest/gtest.h>

#include "common/fs.h"
#include "prompt/prompt_inputs.h"
#include "run/roofline.h"  // kCalibrationVersion: the fixtures' caches stay current

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

class FakeCompiler final : public Compiler {
 public:
  Result<CompileOutcome> compile(const CompileRequest&) override {
    CompileOutcome o;
    o.verdict = CompileVerdict::ok;
    o.library = "/fake/kernel.so";
    return o;
  }
};

nlohmann::json tensor_ref() { return {{"dtype", "float32"}, {"shape", {4}}, {"stride", {1}}, {"nbytes", 16}, {"data_ptr", 64}}; }

}  // namespace

TEST(NcuProfileSource, ProfilesTheEvaluatedLibraryOnTheJudgesInputs) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-profile-source-");
  ASSERT_TRUE(dir.ok());
  FakeCompiler compiler;
  FakeReferenceWorker worker([](const std::string& op, const nlohmann::json&) -> Result<nlohmann::json> {
    if (op == "load") return nlohmann::json{{"name", "relu"}, {"workload_class", "elementwise"}, {"min_bytes", 32}};
    if (op == "evaluate_candidate")
      return nlohmann::json{{"verdict", "pass"}, {"reason", ""}, {"checks", nlohmann::json::array()},
                            {"time", {{"median_ms", 0.5}, {"iqr_ms", 0.0}, {"min_ms", 0.5}, {"max_ms", 0.5}, {"runs", 10},
                                      {"slower_kind", "problem"}}}};
    if (op == "prepare_profile") return nlohmann::json{{"inputs", {tensor_ref()}}, {"outputs", {tensor_ref()}}};
    return Error{"unexpected op " + op};
  });
  EvalOptions o;
  o.trials = 1;
  o.baselines = false;
  o.runner = "/fake/cutegen-runner";
  o.work_dir = *dir / "work";
  o.cache_root = *dir / "cache";
  ASSERT_TRUE(write_file_atomic(*dir / "cache/calibration/unknown.json",
                                "{\"version\":" + std::to_string(kCalibrationVersion) + R"(,"gpu":"unknown","hbm_gbps":4000,"tflops":{"fp32":50,"tf32":400,"fp16":700,"bf16":700}})")
                  .ok());
  Judge judge(compiler, worker, o);
  auto report = judge.evaluate("problem.py", "// source", "k.cu");
  ASSERT_TRUE(report.ok() && report->passed()) << (report.ok() ? report->reason : report.error().message);

  FakeProfileProvider provider([](const ProfileRequest& req) -> Result<ProfileReport> {
    ProfileReport r;
    r.summary = timing_only_summary(req.context, "scripted");
    return r;
  });
  NcuProfileSource source(judge, provider, {.problem = "problem.py", .calls = 3, .work_dir = *dir / "profiles"});
  Evaluation evaluation = report->record();  // what JudgeEvaluator hands the loop
  evaluation.library = "/fake/kernel.so";
  auto text = source.summary("// source", evaluation);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_NE(text->find("0.5 ms per call measured"), std::string::npos) << *text;
  ASSERT_EQ(provider.requests.size(), 1u);
  const auto& req = provider.requests[0];
  ASSERT_EQ(req.target.size(), 5u);
  EXPECT_EQ(req.target[0], "/fake/cutegen-runner");
  auto job = read_file(req.target[2]);
  ASSERT_TRUE(job.ok());
  auto j = nlohmann::json::parse(*job);
  EXPECT_EQ(j["library"], "/fake/kernel.so");
  EXPECT_EQ(j["calls"], 3);
  EXPECT_EQ(j["inputs"], nlohmann::json::array({tensor_ref()}));
  EXPECT_EQ(req.context.workload_class, "elementwise");
  EXPECT_EQ(req.context.calls, 3);
  EXPECT_EQ(req.context.hbm_gbps, 4000.0);  // from the calibration behind the judge's roofline
  EXPECT_EQ(req.work_dir, *dir / "profiles" / "profile-001");
  ASSERT_TRUE(source.last_report().has_value());

  // A resumed run's profiler starts counting again: it must number past the first run's directories.
  fs::create_directories(*dir / "profiles" / "profile-001");
  fs::create_directories(*dir / "profiles" / "profile-002");
  NcuProfileSource resumed(judge, provider, {.problem = "problem.py", .calls = 3, .work_dir = *dir / "profiles"});
  ASSERT_TRUE(resumed.summary("// source", evaluation).ok());
  EXPECT_EQ(provider.requests.back().work_dir, *dir / "profiles" / "profile-003");

  Evaluation failed{.verdict = Verdict::mismatch};
  EXPECT_FALSE(source.summary("// source", failed).ok());
  fs::remove_all(*dir);
}

// The loop turns every failing verdict into a failure kind for the prompts; a verdict the judge can
// give but the prompts do not know would stop a run mid-way.
TEST(JudgeVerdictsInPrompts, EveryFailingVerdictHasAFailureKind) {
  for (int v = static_cast<int>(Verdict::pass) + 1; v <= static_cast<int>(kLastVerdict); ++v)
    EXPECT_TRUE(failure_kind_for_verdict(static_cast<Verdict>(v)).ok()) << to_string(static_cast<Verdict>(v));
  EXPECT_FALSE(failure_kind_for_verdict(Verdict::pass).ok());
}
