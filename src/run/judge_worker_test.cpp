// The judge against the REAL reference worker (python/cutegen_worker, on the CPU), with the runner
// played inside the worker by its test hooks: the one test where the C++ side reads what the Python
// side really answers (load, evaluate_candidate, time_baselines), so a field renamed on either side
// fails here rather than on the first GPU run.
#include <cstdlib>

#include <gtest/gtest.h>

#include "run/roofline.h"  // kCalibrationVersion: the fixtures' caches stay current
#include "common/fs.h"
#include "run/judge.h"
#include "common/testdata/test_helpers.h"
#include "run/runner_job.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

class BuiltCompiler final : public Compiler {
 public:
  Result<CompileOutcome> compile(const CompileRequest&) override {
    CompileOutcome o;
    o.verdict = CompileVerdict::ok;
    o.library = "/nonexistent/kernel.so";  // the worker's fake runner never loads it
    return o;
  }
};

// Each source names a library the test built in `dir` (readable exports; the worker's fake runner plays the kernel),
// under a compile key of its own.
class LibrariesByName final : public Compiler {
 public:
  explicit LibrariesByName(std::filesystem::path dir) : dir_(std::move(dir)) {}
  Result<CompileOutcome> compile(const CompileRequest& r) override {
    CompileOutcome o;
    o.verdict = CompileVerdict::ok;
    o.key = "key-" + r.source;
    o.library = dir_ / (r.source + ".so");
    return o;
  }

 private:
  std::filesystem::path dir_;
};

class JudgeWithRealWorker : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("python3 -c 'import torch' >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 with torch is not installed";
    setenv("CUTEGEN_PROBLEM_SCALE", "64", 1);
    auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-judge-worker-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    auto worker = PythonWorker::start({.package_dir = fs::path(CUTEGEN_SOURCE_DIR) / "python",
                                       .log_path = dir_ / "worker.log",
                                       .script = fs::path(CUTEGEN_SOURCE_DIR) / "python/tests/fake_runner_worker.py"});
    ASSERT_TRUE(worker.ok()) << worker.error().message;
    worker_ = std::move(*worker);
    // The roofline's ceilings for the CPU "GPU", so no calibration runs.
    ASSERT_TRUE(write_file_atomic(dir_ / "cache/calibration/cpu.json",
                                  "{\"version\":" + std::to_string(kCalibrationVersion) + R"(,"gpu":"cpu","hbm_gbps":20,"tflops":{"fp32":0.1,"tf32":0.1,"fp16":0.1,"bf16":0.1}})")
                    .ok());
  }
  void TearDown() override {
    worker_.reset();
    unsetenv("CUTEGEN_PROBLEM_SCALE");
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // `generalize`: the generalization trials, off unless a test is about them (each is a session of its own).
  Result<EvalReport> evaluate(const std::string& problem, const std::string& mode, bool baselines = false,
                              const nlohmann::json& fake_extra = nlohmann::json::object(), int generalize = 0) {
    EvalOptions o;
    o.generalize = generalize;
    o.trials = 2;
    o.warmup = 1;
    o.runs = 8;
    o.seed = 11;
    o.device = "cpu";
    o.baselines = baselines;
    o.runner = "/nonexistent/cutegen-runner";
    o.work_dir = dir_ / "work";
    o.cache_root = dir_ / "cache";
    o.fake_runner = {{"mode", mode}};
    o.fake_runner.update(fake_extra);
    judge_ = std::make_unique<Judge>(compiler_, *worker_, o);
    return judge_->evaluate(fs::path(CUTEGEN_SOURCE_DIR) / "problems" / problem, "// source", "k.cu");
  }

  // A judge's options for the tests that build their own (screenings and what follows them).
  EvalOptions session_options(int runs) const {
    EvalOptions o;
    o.generalize = 0;
    o.trials = 1;
    o.warmup = 1;
    o.runs = runs;
    o.device = "cpu";
    o.runner = "/nonexistent/cutegen-runner";
    o.work_dir = dir_ / "work";
    o.cache_root = dir_ / "cache";
    return o;
  }

  fs::path dir_;
  BuiltCompiler compiler_;
  std::unique_ptr<PythonWorker> worker_;
  std::unique_ptr<Judge> judge_;  // the last evaluate's
};

}  // namespace

TEST_F(JudgeWithRealWorker, AnExactKernelPassesWithTheWorkersTimeBaselinesAndFloor) {
  auto r = evaluate("layernorm.py", "reference", /*baselines=*/true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::pass) << r->reason;
  ASSERT_TRUE(r->time.has_value());
  EXPECT_GT(r->time->stats.median_ms, 0);
  EXPECT_EQ(r->time->per_kind.size(), 2u);
  EXPECT_TRUE(r->time->slower_kind == "problem" || r->time->slower_kind == "signed");
  EXPECT_EQ(r->checks.size(), 6u);  // 4 trials (2 problem, signed, scaled) + 2 full audits
  ASSERT_TRUE(r->problem.has_value());
  EXPECT_EQ(r->problem->name, "layernorm");
  EXPECT_EQ(r->problem->params.size(), 3u);  // weight, bias, then the gain buffer
  EXPECT_EQ(r->session["audits"].value("full", 0), 2);
  ASSERT_TRUE(r->floor.has_value());
  EXPECT_GT(r->floor->floor_ms, 0);
  ASSERT_TRUE(r->baselines.eager.has_value() && r->baselines.eager->stats.has_value()) << r->baselines.eager->error;
  auto j = r->to_json();
  EXPECT_TRUE(j["speedup"].contains("eager"));
  EXPECT_EQ(j["time"]["runs"], 4);  // 8 timed calls, 4 of each kind
}

// The description (the loop's first step, cutegen bench's serialised GPU time) says where its time went.
TEST_F(JudgeWithRealWorker, TheDescriptionTimesItsPhasesAndEachBaseline) {
  EvalOptions o;
  o.device = "cpu";
  o.runs = 4;
  o.baselines = true;
  o.runner = "/nonexistent/cutegen-runner";
  o.work_dir = dir_ / "work";
  o.cache_root = dir_ / "cache-describe";
  ASSERT_TRUE(write_file_atomic(o.cache_root / "calibration/cpu.json",
                                "{\"version\":" + std::to_string(kCalibrationVersion) +
                                    R"(,"gpu":"cpu","hbm_gbps":20,"tflops":{"fp32":0.1,"tf32":0.1,"fp16":0.1,"bf16":0.1}})")
                  .ok());
  Judge judge(compiler_, *worker_, o);
  auto r = judge.describe(fs::path(CUTEGEN_SOURCE_DIR) / "problems" / "relu.py");
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (const char* phase : {"load", "baselines", "roofline"}) {
    ASSERT_TRUE(r->phase_seconds.contains(phase)) << phase;
    EXPECT_GE(r->phase_seconds.at(phase), 0) << phase;
  }
  EXPECT_LE(r->phase_seconds.at("load") + r->phase_seconds.at("baselines"), r->seconds + 1e-9);
  ASSERT_TRUE(r->baselines.seconds.contains("eager"));
  EXPECT_GT(r->baselines.seconds.at("eager"), 0);
  EXPECT_LE(r->baselines.seconds.at("eager"), r->phase_seconds.at("baselines"));
  // Served from the cache the second time: nothing measured, no seconds.
  auto again = judge.describe(fs::path(CUTEGEN_SOURCE_DIR) / "problems" / "relu.py");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->baselines.cached);
  EXPECT_TRUE(again->baselines.seconds.empty());
}

TEST_F(JudgeWithRealWorker, AKernelIgnoringItsParametersFailsWithEvidence) {
  auto r = evaluate("layernorm.py", "own_params");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::mismatch);
  EXPECT_NE(r->evidence.find("random parameters"), std::string::npos) << r->evidence;
  EXPECT_NE(r->evidence.find("elements bad"), std::string::npos) << r->evidence;
  EXPECT_FALSE(r->time.has_value());
}

TEST_F(JudgeWithRealWorker, RunnerFailuresComeBackAsTheirVerdicts) {
  for (const auto& [mode, verdict] : std::vector<std::pair<std::string, Verdict>>{
           {"none", Verdict::unwritten}, {"tamper", Verdict::tampering}, {"forbidden", Verdict::forbidden_call},
           {"stale", Verdict::result_reuse}, {"crash", Verdict::crash}}) {
    auto r = evaluate("relu.py", mode);
    ASSERT_TRUE(r.ok()) << mode << ": " << r.error().message;
    EXPECT_EQ(r->verdict, verdict) << mode << ": " << r->reason;
  }
}

// Generalization trials (docs/judge.md, guarantee 9) through the real worker: a kernel right at the problem's
// shape only is shape_specific with the other shape in its evidence; an honest one has three shapes verified,
// the problem's own first; one that refuses other shapes passes with its own alone.
TEST_F(JudgeWithRealWorker, OtherShapesOfTheProblemAreJudgedAndTheVerifiedOnesRecorded) {
  auto honest = evaluate("relu.py", "reference", false, nlohmann::json::object(), 2);
  ASSERT_TRUE(honest.ok()) << honest.error().message;
  EXPECT_EQ(honest->verdict, Verdict::pass) << honest->reason;
  ASSERT_TRUE(honest->generalization);
  ASSERT_EQ(honest->generalization->verified.size(), 3u);
  EXPECT_EQ(honest->generalization->verified[0].inputs[0], (std::vector<int64_t>{64, 1024}));  // relu at scale 64
  EXPECT_NE(honest->generalization->verified[1].inputs[0], honest->generalization->verified[0].inputs[0]);
  EXPECT_GT(honest->phase_seconds.at("generalize"), 0);
  EXPECT_NE(honest->summary().find("shapes    3 verified"), std::string::npos) << honest->summary();
  // The worker's own phase clock reaches the record and the summary.
  const auto& clock = honest->session.at("phase_seconds");
  for (const char* part : {"runner_start", "trials", "timed_calls", "timed_compare", "full_audits", "runner_end"})
    EXPECT_TRUE(clock.contains(part)) << part << " in " << clock.dump();
  EXPECT_NE(honest->summary().find("  session   runner_start "), std::string::npos) << honest->summary();

  auto hard_coded = evaluate("relu.py", "reference", false, {{"other_shapes", "wrong"}}, 2);
  ASSERT_TRUE(hard_coded.ok()) << hard_coded.error().message;
  EXPECT_EQ(hard_coded->verdict, Verdict::shape_specific) << hard_coded->reason;
  EXPECT_NE(hard_coded->evidence.find("at another shape"), std::string::npos) << hard_coded->evidence;
  EXPECT_NE(hard_coded->evidence.find("elements bad"), std::string::npos) << hard_coded->evidence;

  auto refusing = evaluate("relu.py", "reference", false, {{"other_shapes", "refuse"}}, 2);
  ASSERT_TRUE(refusing.ok()) << refusing.error().message;
  EXPECT_EQ(refusing->verdict, Verdict::pass) << refusing->reason;
  ASSERT_TRUE(refusing->generalization);
  EXPECT_EQ(refusing->generalization->verified.size(), 1u);
  EXPECT_EQ(refusing->generalization->refused(), 2);
}

// The chosen candidate of a screening group, judged in full: the workspace size its group asked is sent with the
// session, so its one runner maps the workspace from the start (no runner that only asks); a library this judge
// has not seen is sent the last size asked as a guess, which it confirms here: one runner too.
TEST_F(JudgeWithRealWorker, AWorkspaceSizeAskedInAGroupSparesTheFullEvaluationItsSizingRunner) {
  LibrariesByName compiler(dir_);
  for (const char* name : {"a", "b", "c"})
    ASSERT_TRUE(cutegen::testing::build_shared_object(
        dir_ / (std::string(name) + ".so"),
        "#include <stddef.h>\nextern \"C\" size_t cutegen_workspace_bytes() { return 4096; }\n"
        "extern \"C\" int cutegen_forward_ws() { return 0; }\n"));
  EvalOptions o = session_options(10);
  o.baselines = false;
  o.fake_runner = {{"mode", "reference"}, {"workspace_bytes", 4096}};
  Judge judge(compiler, *worker_, o);
  const auto relu = fs::path(CUTEGEN_SOURCE_DIR) / "problems" / "relu.py";
  auto screened = judge.screen_all(relu, {{"a", "k.cu", {}}, {"b", "k.cu", {}}});
  ASSERT_TRUE(screened.ok()) << screened.error().message;
  for (const auto& r : *screened) {
    EXPECT_EQ(r.verdict, Verdict::pass) << r.reason;
    EXPECT_EQ(r.workspace_bytes, 4096u);
  }
  auto chosen = judge.evaluate(relu, "b", "k.cu");
  ASSERT_TRUE(chosen.ok()) << chosen.error().message;
  EXPECT_EQ(chosen->verdict, Verdict::pass) << chosen->reason;
  EXPECT_EQ(chosen->workspace_bytes, 4096u);
  EXPECT_FALSE(chosen->session["runner"].contains("sizing")) << chosen->session["runner"].dump();
  auto unseen = judge.evaluate(relu, "c", "k.cu");
  ASSERT_TRUE(unseen.ok()) << unseen.error().message;
  EXPECT_EQ(unseen->verdict, Verdict::pass) << unseen->reason;
  EXPECT_FALSE(unseen->session["runner"].contains("sizing")) << unseen->session["runner"].dump();
  EXPECT_EQ(unseen->workspace_bytes, 4096u);
}

// Contract v2: the size the worker validated reaches the evaluation record, and a profile of that
// evaluation gets a workspace buffer of at least that size from the worker.
TEST_F(JudgeWithRealWorker, AWorkspaceKernelsSizeReachesTheRecordAndTheProfileJob) {
  auto r = evaluate("relu.py", "reference", false, {{"workspace_bytes", 40000}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::pass) << r->reason;
  EXPECT_EQ(r->workspace_bytes, 40000u);
  auto inv = judge_->profiling_run(fs::path(CUTEGEN_SOURCE_DIR) / "problems" / "relu.py", *r, 1);
  ASSERT_TRUE(inv.ok()) << inv.error().message;
  auto job = parse_runner_profile_job(nlohmann::json::parse(*read_file(inv->job)));
  ASSERT_TRUE(job.ok()) << job.error().message;
  ASSERT_TRUE(job->workspace.has_value());
  EXPECT_GE(job->workspace->nbytes, 40000u);
  EXPECT_TRUE(check_workspace_buffer(r->workspace_bytes, job->workspace).ok());
}

// A problem file at fault reaches the caller as an error of kind problem_file (cutegen bench records
// it as that task's problem_error); a request cutegen got wrong does not.
TEST_F(JudgeWithRealWorker, TheWorkersProblemErrorsKeepTheirKind) {
  auto bad = write_file_atomic(dir_ / "broken.py", "import torch\nclass Model(torch.nn.Module):\n    pass\n");
  ASSERT_TRUE(bad.ok());
  auto r = worker_->call("load", {{"problem", (dir_ / "broken.py").string()}, {"device", "cpu"}}, std::chrono::seconds(120));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::problem_file) << r.error().message;
  EXPECT_NE(r.error().message.find("get_inputs"), std::string::npos) << r.error().message;
  auto req = worker_->call("time_baselines", {{"modes", {"eager"}}}, std::chrono::seconds(60));
  ASSERT_FALSE(req.ok());  // nothing is loaded: cutegen's mistake, not the file's
  EXPECT_EQ(req.error().kind, ErrorKind::general);
}

// A screening group (`screen_candidates`) as the real worker answers it: one record per kernel, in order.
TEST_F(JudgeWithRealWorker, KernelsScreenedTogetherGetOneRecordEachFromOneSession) {
  LibrariesByName compiler(dir_);  // no workspace: the two share a session
  for (const char* name : {"a", "b"})
    ASSERT_TRUE(cutegen::testing::build_shared_object(dir_ / (std::string(name) + ".so"),
                                                      "extern \"C\" int cutegen_forward() { return 0; }\n"));
  EvalOptions o = session_options(50);  // screening runs a fifth: 10
  o.fake_runner = nlohmann::json::array({{{"mode", "reference"}}, {{"mode", "zeros"}}});
  Judge judge(compiler, *worker_, o);
  auto reports = judge.screen_all(fs::path(CUTEGEN_SOURCE_DIR) / "problems" / "relu.py",
                                  {{"a", "k.cu", {}}, {"b", "k.cu", {}}});
  ASSERT_TRUE(reports.ok()) << reports.error().message;
  ASSERT_EQ(reports->size(), 2u);
  EXPECT_EQ((*reports)[0].verdict, Verdict::pass) << (*reports)[0].reason;
  EXPECT_EQ((*reports)[1].verdict, Verdict::mismatch) << (*reports)[1].reason;
  for (int i = 0; i < 2; ++i) {
    const EvalReport& r = (*reports)[i];
    EXPECT_TRUE(r.screened);
    EXPECT_EQ(r.session["screening_group"].value("index", -1), i);
    EXPECT_EQ(r.session["screening_group"].value("candidates", 0), 2);
  }
  ASSERT_TRUE((*reports)[0].time.has_value());
  EXPECT_EQ((*reports)[0].session["audits"].value("timed_calls", 0), 10);
  EXPECT_EQ((*reports)[0].session["audits"].value("full", -1), 0);
}
