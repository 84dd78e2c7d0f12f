// The loop's ProfileSource over the judge and a scripted profiler: the profiler is asked to profile
// the runner command the judge wrote for the evaluated library, with the evaluation's timing and floor.
#include "agent/ncu_profile_source.h"

#include <gtest/gtest.h>

#include "common/fake_process_runner.h"
#include "common/fs.h"

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
  FakeReferenceWorker worker([](const std::string& op, const nlohmann::json& args) -> Result<nlohmann::json> {
    if (op == "load") return nlohmann::json{{"name", "relu"}, {"workload_class", "elementwise"}, {"min_bytes", 32}};
    if (op == "prepare") {
      nlohmann::json trials = nlohmann::json::array();
      for (std::size_t i = 0; i < args["trials"].size(); ++i)
        trials.push_back({{"index", i}, {"inputs", {tensor_ref()}}, {"outputs", {{tensor_ref()}, {tensor_ref()}}}});
      return nlohmann::json{{"trials", trials}, {"timing", {{{"inputs", {tensor_ref()}}, {"outputs", {tensor_ref()}}}}}};
    }
    if (op == "check" || op == "check_timing") return nlohmann::json{{"pass", true}, {"reason", "ok"}};
    return Error{"unexpected op " + op};
  });
  FakeProcessRunner runner([](const ProcessSpec& spec) -> Result<ProcessResult> {
    nlohmann::json result = {{"phase", "done"}, {"failure", nullptr},
                             {"timing", {{"event", {{"median_ms", 0.5}}}, {"host", {{"median_ms", 0.51}}}}}};
    EXPECT_TRUE(write_file_atomic(spec.argv.at(4), result.dump()).ok());
    return FakeProcessRunner::exited(0);
  });
  EvalOptions o;
  o.trials = 1;
  o.baselines = false;
  o.runner = "/fake/cutegen-runner";
  o.work_dir = *dir / "work";
  o.cache_root = *dir / "cache";
  ASSERT_TRUE(write_file_atomic(*dir / "cache/calibration/unknown.json",
                                R"({"gpu":"unknown","hbm_gbps":4000,"tflops":{"fp32":50,"tf32":400,"fp16":700,"bf16":700}})")
                  .ok());
  Judge judge(compiler, worker, runner, o);
  auto report = judge.evaluate("problem.py", "// source", "k.cu");
  ASSERT_TRUE(report.ok() && report->passed()) << (report.ok() ? report->reason : report.error().message);

  FakeProfileProvider provider([](const ProfileRequest& req) -> Result<ProfileReport> {
    ProfileReport r;
    r.summary = timing_only_summary(req.context, "scripted");
    return r;
  });
  NcuProfileSource source(judge, provider, {.calls = 3, .work_dir = *dir / "profiles"});
  Evaluation evaluation;
  evaluation.passed = true;
  evaluation.library = "/fake/kernel.so";
  evaluation.report = report->to_json();
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
  EXPECT_EQ(j["timing"]["runs"], 3);
  EXPECT_EQ(req.context.workload_class, "elementwise");
  EXPECT_EQ(req.context.calls, 3);
  EXPECT_EQ(req.context.hbm_gbps, 4000.0);  // from the calibration behind the judge's roofline
  EXPECT_EQ(req.work_dir, *dir / "profiles" / "profile-001");
  ASSERT_TRUE(source.last_report().has_value());

  Evaluation failed;
  EXPECT_FALSE(source.summary("// source", failed).ok());
  fs::remove_all(*dir);
}
