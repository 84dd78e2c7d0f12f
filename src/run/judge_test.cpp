// The judge's decisions on scripted evidence: a fake compiler and a fake worker whose
// `evaluate_candidate` answers are what the real worker's supervisor (python/cutegen_worker/
// candidate_session.py, tested with its own fake runner) sends, so every path runs without a GPU.
#include "run/judge.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"
#include "run/roofline.h"  // kCalibrationVersion: the fixtures' caches stay current

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

class FakeCompiler final : public Compiler {
 public:
  CompileOutcome outcome;
  std::vector<CompileRequest> requests;
  Result<CompileOutcome> compile(const CompileRequest& r) override {
    requests.push_back(r);
    return outcome;
  }
};

CompileOutcome built() {
  CompileOutcome o;
  o.verdict = CompileVerdict::ok;
  o.library = "/fake/kernel.so";
  return o;
}

nlohmann::json stats(double median) {
  return {{"median_ms", median}, {"iqr_ms", 0.01}, {"min_ms", median * 0.98}, {"max_ms", median * 1.1}, {"runs", 50}};
}

// What the worker answers for a kernel that passed in `median_ms`.
nlohmann::json passing_record(double median_ms) {
  return {{"verdict", "pass"},
          {"reason", ""},
          {"failed_check", nullptr},
          {"checks", {{{"trial", 0}, {"kind", "problem"}, {"pass", true}, {"reason", "ok"}}}},
          {"runner", {{"end", "exit code 0"}}},
          {"calibration", {{"ping_ms", 0.02}}},
          {"audits", {{"timed_calls", 100}, {"sampled", 27}, {"screened", 25}, {"full", 2}, {"positions", 2048}}},
          {"calls", nlohmann::json::array()},
          {"time", {{"median_ms", median_ms}, {"iqr_ms", 0.01}, {"min_ms", median_ms}, {"max_ms", median_ms},
                    {"runs", 50}, {"slower_kind", "signed"},
                    {"per_kind", {{"problem", stats(median_ms * 0.99)}, {"signed", stats(median_ms)}}},
                    {"overhead_ms", 0.02}, {"overrun_ms", 0.0}, {"event_median_ms", median_ms * 0.99},
                    {"span_median_ms", median_ms * 0.995}}}};
}

nlohmann::json failing_check() {
  return {{"trial", 3},
          {"kind", "signed"},
          {"params", "random"},
          {"seed", 77},
          {"pass", false},
          {"reason", "mismatch"},
          {"inputs_mutated", nlohmann::json::array()},
          {"outputs",
           {{{"index", 0}, {"set", 0}, {"bad_count", 12}, {"total", 1000}, {"bad_fraction", 0.012}, {"max_abs_err", 0.5},
             {"max_rel_err", 1.0}, {"rel_l2_err", 3e-4}, {"rel_l2_limit", 6.5e-6}, {"unwritten_count", 0}, {"nan_count", 0},
             {"inf_count", 0}, {"torch", {{"rel_l2_err", 2.6e-7}, {"max_abs_err", 1e-6}}},
             {"first_bad", {{{"index", {0, 3}}, {"got", 1.5}, {"expected", 1.0}}}}}}}};
}

struct Scenario {
  nlohmann::json record = passing_record(2.0);
  int busy_answers = 0;  // evaluate_candidate answers the worker's `busy` error this many times first
  std::string busy_message = "the CPU was too busy to time on: in 9 of 10 calibration rounds ...";
  std::vector<nlohmann::json> requests;  // every evaluate_candidate request
  nlohmann::json baseline_request;
};

class JudgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-judge-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    compiler_.outcome = built();
    auto cal = write_file_atomic(dir_ / "cache/calibration/Fake_GPU.json",
                                 "{\"version\":" + std::to_string(kCalibrationVersion) + R"(,"gpu":"Fake GPU","hbm_gbps":4000,"tflops":{"fp32":50,"tf32":400,"fp16":700,"bf16":700}})");
    ASSERT_TRUE(cal.ok());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> busy_notes_;  // what the judge said before each busy retry

  EvalOptions options() {
    EvalOptions o;
    o.trials = 2;
    o.runner = "/fake/cutegen-runner";
    o.work_dir = dir_ / "work";
    o.cache_root = dir_ / "cache";
    o.seed = 42;
    o.generalize = 2;  // the default (kDefaultGeneralize), stated: the tests below count on two
    o.busy_retry_pauses = {std::chrono::seconds(0), std::chrono::seconds(0)};
    o.on_busy_retry = [this](const std::string& line) { busy_notes_.push_back(line); };
    return o;
  }

  Result<EvalReport> evaluate(Scenario& s, uint64_t min_bytes = 8000000) {
    worker_ = std::make_unique<FakeReferenceWorker>([&s, min_bytes](const std::string& op,
                                                                    const nlohmann::json& args) -> Result<nlohmann::json> {
      if (op == "load")
        return nlohmann::json{{"name", "relu"}, {"gpu", "Fake GPU"}, {"dtype", "float32"}, {"min_bytes", min_bytes},
                              {"flops", 1000000}};
      if (op == "evaluate_candidate") {
        s.requests.push_back(args);
        if (s.busy_answers > 0) {
          --s.busy_answers;
          return Error{s.busy_message, ErrorKind::machine_busy};
        }
        return s.record;
      }
      if (op == "time_baselines") {
        s.baseline_request = args;
        return nlohmann::json{{"eager", {{"median_ms", 4.0}}}, {"compile", {{"median_ms", 3.0}}}};
      }
      if (op == "free_buffers") return nlohmann::json{{"reserved_bytes", 0}};
      return Error{"unexpected op " + op};
    });
    judge_ = std::make_unique<Judge>(compiler_, *worker_, options());
    return judge_->evaluate("problem.py", "// source", "k.cu");
  }

  fs::path dir_;
  FakeCompiler compiler_;
  std::unique_ptr<FakeReferenceWorker> worker_;
  std::unique_ptr<Judge> judge_;
};

}  // namespace

TEST_F(JudgeTest, PassingKernelGetsTheWorkersTimeSpeedupsAndSol) {
  Scenario s;
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::pass) << r->reason;
  ASSERT_TRUE(r->time.has_value());
  EXPECT_DOUBLE_EQ(r->median_ms(), 2.0);
  EXPECT_EQ(r->time->slower_kind, "signed");
  EXPECT_EQ(r->time->per_kind.size(), 2u);
  ASSERT_TRUE(r->time->event_median_ms.has_value());
  EXPECT_DOUBLE_EQ(*r->time->event_median_ms, 1.98);
  auto j = r->to_json();
  EXPECT_DOUBLE_EQ(j["speedup"]["eager"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["speedup"]["compile"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["time"]["median_ms"].get<double>(), 2.0);
  EXPECT_EQ(j["time"]["per_kind"]["problem"]["runs"], 50);
  EXPECT_EQ(j["session"]["audits"]["sampled"], 27);
  ASSERT_TRUE(r->floor.has_value());
  EXPECT_NEAR(r->floor->floor_ms, 8e6 / 4000e9 * 1e3, 1e-12);
  EXPECT_NEAR(j["sol_pct"].get<double>(), 100 * r->floor->floor_ms / 2.0, 1e-9);
  auto summary = r->summary();
  EXPECT_NE(summary.find("PASS relu"), std::string::npos);
  EXPECT_NE(summary.find("27 of 100 timed calls compared, 25 of them settled by PyTorch's own result]"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("on signed inputs"), std::string::npos) << summary;
  EXPECT_NE(summary.find("events 1.98 ms; GPU span 1.99 ms"), std::string::npos) << summary;
  // The floor's basis, so the SOL can be checked: 8 MB at the fake calibration's 4000 GB/s.
  EXPECT_NE(summary.find("floor     0.002 ms (memory-bound: 0.008 GB at 4000 GB/s) -> SOL 0.1%"), std::string::npos)
      << summary;
  // Every phase an evaluation goes through is accounted for, and together they fit in the wall time.
  double sum = 0;
  for (const char* phase : {"compile", "load", "session", "baselines", "roofline"}) {
    ASSERT_TRUE(r->phase_seconds.contains(phase)) << phase;
    sum += r->phase_seconds.at(phase);
  }
  EXPECT_LE(sum, r->seconds + 1e-6);
}

// The judge produces the evaluation record the loop, prompts, profile summary and reports read as
// types, with its own account kept for people in `details`.
TEST_F(JudgeTest, TheReportIsTheTypedRecordPlusTheJudgesAccount) {
  Scenario s;
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->problem.has_value());
  EXPECT_EQ(r->problem->name, "relu");
  EXPECT_EQ(r->problem->gpu, "Fake GPU");
  EXPECT_EQ(r->problem->min_bytes, 8000000u);
  EXPECT_EQ(r->precision, Precision::strict);
  EXPECT_EQ(r->library, "/fake/kernel.so");
  ASSERT_TRUE(r->baselines.eager && r->baselines.eager->median_ms());
  EXPECT_EQ(*r->baselines.eager->median_ms(), 4.0);
  EXPECT_EQ(r->speedup_compile(), 1.5);
  Evaluation record = r->record();
  EXPECT_EQ(record.details["session"]["audits"]["sampled"], 27);
  EXPECT_TRUE(record.details.contains("compile"));
  EXPECT_EQ(record.to_json(), r->to_json()) << "eval.json and --json share one layout";
  auto back = Evaluation::from_json(r->to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->sol_pct(), r->sol_pct());
}

TEST_F(JudgeTest, AMalformedLoadAnswerIsAWorkerBugNamingTheField) {
  worker_ = std::make_unique<FakeReferenceWorker>([](const std::string& op, const nlohmann::json&) -> Result<nlohmann::json> {
    if (op == "load") return nlohmann::json{{"name", "relu"}, {"workload_class", "quantum"}};
    return Error{"unexpected op " + op};
  });
  compiler_.outcome = built();
  Judge judge(compiler_, *worker_, options());
  auto r = judge.evaluate("problem.py", "// src", "k.cu");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown workload class \"quantum\""), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("a worker bug"), std::string::npos) << r.error().message;
}

TEST_F(JudgeTest, TheSessionRequestCarriesTheTrialPlanAndAFreshWorkDirectory) {
  Scenario s;
  ASSERT_TRUE(evaluate(s).ok());
  ASSERT_TRUE(evaluate(s).ok());
  ASSERT_EQ(s.requests.size(), 2u);
  const auto& req = s.requests[0];
  EXPECT_EQ(req["runner"], nlohmann::json::array({"/fake/cutegen-runner"}));
  EXPECT_EQ(req["library"], "/fake/kernel.so");
  EXPECT_EQ(req["precision"], "strict");
  EXPECT_EQ(req["runs"], 100);
  EXPECT_EQ(req["warmup"], 10);
  EXPECT_EQ(req["generalize"], 2);  // other shapes of the problem after a pass, as asked
  EXPECT_EQ(EvalOptions{}.generalize, 2);  // on by default since the H200 judged the suite with them
  EXPECT_DOUBLE_EQ(req["call_timeout_s"].get<double>(), 120.0);
  // 2 problem trials (the first with the problem's own parameters) + signed + scaled, in some order.
  std::multiset<std::string> kinds;
  int own = 0;
  for (const auto& t : req["trials"]) {
    kinds.insert(t["kind"].get<std::string>());
    own += t["params"] == "own";
    if (t["kind"] == "scaled") {
      EXPECT_DOUBLE_EQ(t["scale"].get<double>(), 100.0);
    }
  }
  EXPECT_EQ(kinds, (std::multiset<std::string>{"problem", "problem", "signed", "scaled"}));
  EXPECT_EQ(own, 1);
  // Each evaluation gets its own directory (the runner's private one is made inside it).
  EXPECT_NE(req["work_dir"], s.requests[1]["work_dir"]);
  EXPECT_TRUE(fs::is_directory(req["work_dir"].get<std::string>()));
  // The baselines are timed on fresh inputs of their own seed.
  EXPECT_EQ(s.baseline_request["sets"], 2);
}

TEST_F(JudgeTest, CompileFailureNeverReachesTheWorker) {
  compiler_.outcome = CompileOutcome{};
  compiler_.outcome.verdict = CompileVerdict::rejected;
  compiler_.outcome.violations = {{"forbidden-import", "imports cublasSgemm_v2: calls cuBLAS"}};
  Scenario s;
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::rejected);
  EXPECT_NE(r->reason.find("cublasSgemm_v2"), std::string::npos);
  // The problem may have been loaded beside the build (no shared GPU here), the kernel never ran.
  EXPECT_EQ(std::count(worker_->ops.begin(), worker_->ops.end(), "evaluate_candidate"), 0);
  EXPECT_LE(worker_->ops.size(), 1u);
  // The report of a kernel that never reached the problem still renders.
  EXPECT_NE(r->summary().find("FAIL"), std::string::npos);
  EXPECT_EQ(r->to_json()["verdict"], "rejected");
}

TEST_F(JudgeTest, AFailedCheckBecomesTheEvidenceTheDiagnoseStepReads) {
  Scenario s;
  s.record = {{"verdict", "mismatch"},
              {"reason", "trial 3 (signed inputs) failed: mismatch"},
              {"failed_check", 0},
              {"checks", {failing_check()}},
              {"time", nullptr}};
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::mismatch);
  EXPECT_FALSE(r->time.has_value());
  EXPECT_NE(r->evidence.find("trial 3 (signed inputs, random parameters, seed 77)"), std::string::npos) << r->evidence;
  EXPECT_NE(r->evidence.find("12 of 1000 elements bad"), std::string::npos) << r->evidence;
  EXPECT_NE(r->evidence.find("PyTorch in the problem's precision is at rel L2 2.6e-07"), std::string::npos) << r->evidence;
  EXPECT_NE(r->evidence.find("first bad: [0,3] got 1.5 expected 1.0"), std::string::npos) << r->evidence;
  EXPECT_TRUE(worker_->ops.size() == 2u) << "no baselines for a failed kernel";
  EXPECT_NE(r->summary().find("FAIL relu: mismatch"), std::string::npos);
}

TEST_F(JudgeTest, EveryVerdictTheWorkerNamesIsKnownAndUnknownOnesAreErrors) {
  for (const char* word : {"load_failed", "kernel_error", "cuda_error", "crash", "timeout", "printed_output", "unwritten",
                           "nondeterministic", "input_mutated", "hidden_work", "result_reuse", "forbidden_call",
                           "tampering", "host_compute"}) {
    Scenario s;
    s.record = {{"verdict", word}, {"reason", std::string("because ") + word}, {"time", nullptr}};
    auto r = evaluate(s);
    ASSERT_TRUE(r.ok()) << word << ": " << r.error().message;
    EXPECT_EQ(to_string(r->verdict), word);
    EXPECT_EQ(r->evidence, std::string("because ") + word + "\n");
  }
  Scenario s;
  s.record = {{"verdict", "fast_enough"}, {"reason", "?"}};
  auto r = evaluate(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown verdict `fast_enough`"), std::string::npos);
}

TEST_F(JudgeTest, APassWithoutATimeIsAWorkerBugNotAPass) {
  Scenario s;
  s.record = {{"verdict", "pass"}, {"reason", ""}, {"time", nullptr}};
  auto r = evaluate(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("without timing it"), std::string::npos);
}

TEST_F(JudgeTest, ATimeBelowThePhysicalFloorIsAWarningNotARecord) {
  Scenario s;
  s.record = passing_record(0.001);  // the floor of 8 MB at 4 TB/s is 0.002 ms
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::pass);
  EXPECT_NE(r->roofline_warning.find("below the physical floor"), std::string::npos);
  auto j = r->to_json();
  EXPECT_FALSE(j.contains("sol_pct"));
  EXPECT_TRUE(j.contains("roofline_warning"));
  EXPECT_NE(r->summary().find("WARNING"), std::string::npos);
}

TEST_F(JudgeTest, ProblemErrorsAreErrorsNotVerdicts) {
  FakeReferenceWorker failing([](const std::string&, const nlohmann::json&) -> Result<nlohmann::json> {
    return Error{"problem.py: get_inputs() is missing"};
  });
  Judge judge(compiler_, failing, options());
  auto r = judge.evaluate("problem.py", "// src", "k.cu");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("get_inputs"), std::string::npos);
}

TEST_F(JudgeTest, ProfilingRunsTheRunnerOnStagedBuffersWithNetworkForNcu) {
  nlohmann::json refs = {{"inputs", {{{"kind", "tensor"}, {"dtype", "float32"}, {"shape", {4}}, {"stride", {1}},
                                      {"nbytes", 16}, {"ipc_handle", nullptr}, {"offset", 0}, {"data_ptr", 64}}}},
                         {"outputs", nlohmann::json::array()}};
  FakeReferenceWorker worker([&](const std::string& op, const nlohmann::json&) -> Result<nlohmann::json> {
    if (op == "load") return nlohmann::json{{"name", "relu"}};
    if (op == "prepare_profile") return refs;
    return Error{"unexpected op " + op};
  });
  Judge judge(compiler_, worker, options());
  Evaluation passed;
  passed.library = "/cache/kernel.so";
  auto inv = judge.profiling_run("problem.py", passed, 3);
  ASSERT_TRUE(inv.ok()) << inv.error().message;
  EXPECT_EQ(worker.ops, (std::vector<std::string>{"load", "prepare_profile"}));
  EXPECT_EQ(inv->argv, (std::vector<std::string>{"/fake/cutegen-runner", "--job", inv->job.string(), "--result",
                                                 inv->result.string()}));
  auto job = nlohmann::json::parse(*read_file(inv->job));
  EXPECT_EQ(job["calls"], 3);
  EXPECT_EQ(job["library"], "/cache/kernel.so");
  EXPECT_EQ(job["inputs"], refs["inputs"]);
  EXPECT_EQ(job["sandbox"]["network"], true);
  EXPECT_EQ(job["private_dir"], inv->job.parent_path().string());
  EXPECT_TRUE(job["workspace"].is_null());
}

// A caller that held a shared GPU around profiling gives the profile's buffers back before letting go;
// the problem is then loaded again for the next use.
TEST_F(JudgeTest, GivingTheGpuBackReleasesTheWorkersMemoryAndForgetsTheProblem) {
  nlohmann::json refs = {{"inputs", nlohmann::json::array()}, {"params", nlohmann::json::array()},
                         {"outputs", nlohmann::json::array()}};
  FakeReferenceWorker worker([&](const std::string& op, const nlohmann::json&) -> Result<nlohmann::json> {
    if (op == "load") return nlohmann::json{{"name", "relu"}};
    if (op == "prepare_profile") return refs;
    if (op == "release_gpu") return nlohmann::json{{"reserved_bytes", 0}};
    return Error{"unexpected op " + op};
  });
  Judge judge(compiler_, worker, options());
  Evaluation passed;
  passed.library = "/cache/kernel.so";
  ASSERT_TRUE(judge.profiling_run("problem.py", passed, 1).ok());
  ASSERT_TRUE(judge.give_back_gpu().ok());
  ASSERT_TRUE(judge.profiling_run("problem.py", passed, 1).ok());
  EXPECT_EQ(worker.ops, (std::vector<std::string>{"load", "prepare_profile", "release_gpu", "load", "prepare_profile"}));
}

// A kernel with a workspace (contract v2): the size its evaluation recorded goes to the worker, and
// the buffer the worker allocated goes into the job.
TEST_F(JudgeTest, ProfilingAKernelWithAWorkspaceAsksTheWorkerForItAndPassesItToTheRunner) {
  nlohmann::json workspace = {{"kind", "tensor"}, {"dtype", "uint8"}, {"shape", {2097152}}, {"stride", {1}},
                              {"nbytes", 2097152}, {"ipc_handle", nullptr}, {"offset", 0}, {"data_ptr", 4096}};
  nlohmann::json asked;
  FakeReferenceWorker worker([&](const std::string& op, const nlohmann::json& args) -> Result<nlohmann::json> {
    if (op == "load") return nlohmann::json{{"name", "softmax"}};
    if (op != "prepare_profile") return Error{"unexpected op " + op};
    asked = args;
    return nlohmann::json{{"inputs", nlohmann::json::array()}, {"outputs", nlohmann::json::array()},
                          {"workspace", workspace}};
  });
  Judge judge(compiler_, worker, options());
  Evaluation passed;
  passed.library = "/cache/ws.so";
  passed.workspace_bytes = 123456;
  auto inv = judge.profiling_run("problem.py", passed, 1);
  ASSERT_TRUE(inv.ok()) << inv.error().message;
  EXPECT_EQ(asked["workspace_bytes"], 123456);
  auto job = nlohmann::json::parse(*read_file(inv->job));
  EXPECT_EQ(job["workspace"], workspace);
}

TEST_F(JudgeTest, TheWorkspaceTheWorkerRecordedIsInTheEvaluation) {
  Scenario s;
  s.record["workspace"] = {{"bytes", 65536}, {"cap_bytes", 16777216}};
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->workspace_bytes, 65536u);
  EXPECT_NE(r->summary().find("workspace 65536 bytes"), std::string::npos) << r->summary();
  auto back = Evaluation::from_json(r->to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->workspace_bytes, 65536u);  // the journal keeps it for a later profile
  Scenario plain;
  auto none = evaluate(plain);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->workspace_bytes, 0u);
  EXPECT_FALSE(none->to_json().contains("workspace_bytes"));
  Scenario broken;
  broken.record["workspace"] = {{"bytes", -1}};
  auto bad = evaluate(broken);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("workspace record"), std::string::npos) << bad.error().message;
}

// The worker's generalization record (docs/worker-protocol.md) for relu at 64 x 1024: a smaller shape passed,
// a larger one was refused.
nlohmann::json generalization_record() {
  return nlohmann::json::parse(R"J({"asked": 2, "varied": ["batch_size", "dim"], "notes": [], "seconds": 1.25,
    "trials": [{"kind": "smaller", "config": {"batch_size": 13, "dim": 301}, "inputs": [[13, 301]], "outputs": [[13, 301]],
                "outcome": "pass", "verdict": "pass", "reason": "", "seconds": 0.6},
               {"kind": "larger", "config": {"batch_size": 67, "dim": 1024}, "inputs": [[67, 1024]],
                "outputs": [[67, 1024]], "outcome": "refused", "verdict": "kernel_error",
                "reason": "cutegen_forward returned 1001 (CUTEGEN_ERROR_UNSUPPORTED)", "seconds": 0.5}],
    "verified": [{"config": {"batch_size": 64, "dim": 1024}, "inputs": [[64, 1024]], "outputs": [[64, 1024]]},
                 {"config": {"batch_size": 13, "dim": 301}, "inputs": [[13, 301]], "outputs": [[13, 301]]}]})J");
}

TEST_F(JudgeTest, TheShapesVerifiedAreTypedSummarisedAndTimedAsAPhase) {
  Scenario s;
  s.record["generalization"] = generalization_record();
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->generalization);
  EXPECT_EQ(r->generalization->verified.size(), 2u);
  EXPECT_EQ(r->generalization->refused(), 1);
  const std::string summary = r->summary();
  EXPECT_NE(summary.find("shapes    2 verified: the problem's own; batch_size=13, dim=301 -- refused by the kernel: "
                         "batch_size=67 [1.2 s]"), std::string::npos) << summary;
  // The trials ran inside the worker's session: their time is a phase of its own, not the session's.
  EXPECT_DOUBLE_EQ(r->phase_seconds.at("generalize"), 1.25);
  auto back = Evaluation::from_json(r->to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->generalization->verified[1].inputs[0], (std::vector<int64_t>{13, 301}));  // what an export reads
  // A record that verifies nothing, not even the problem's own shape, is a worker bug.
  Scenario broken;
  broken.record["generalization"] = generalization_record();
  broken.record["generalization"]["verified"] = nlohmann::json::array();
  auto bad = evaluate(broken);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("verifies no shape"), std::string::npos) << bad.error().message;
}

// The loop's bar: evaluate_below sends it for that one evaluation (a plain evaluate, as `cutegen eval`
// makes, never does), and a record whose trials the worker skipped under it says so, typed and in the summary.
TEST_F(JudgeTest, TheStagingBudgetGoesToTheWorkerUnlessTheRunsWereFixedAndACutIsSaid) {
  Scenario s;
  s.record["audits"]["timed_calls"] = 50;
  s.record["audits"]["sampled"] = 50;
  s.record["audits"]["timed_budget"] = {{"asked", 100}, {"seconds", 0.8}, {"staging_ms", 16.2}};
  auto fitted = evaluate(s);
  ASSERT_TRUE(fitted.ok()) << fitted.error().message;
  ASSERT_EQ(s.requests.size(), 1u);
  EXPECT_DOUBLE_EQ(s.requests[0].value("timed_budget_s", 0.0), kDefaultTimedBudgetS);
  EXPECT_EQ(s.requests[0].value("runs", 0), 100);  // the most
  EXPECT_NE(fitted->summary().find("50 of 50 timed calls compared, 25 of them settled by PyTorch's own result, "
                                   "fitted to 0.8 s of staging at 16.2 ms a call (100 asked)]"),
            std::string::npos)
      << fitted->summary();
  // --runs given (JudgeArgs::eval_options resets the budget): the runs exactly, nothing to fit.
  EvalOptions exact = options();
  exact.timed_budget_s.reset();
  s.record["audits"].erase("timed_budget");
  Judge judge(compiler_, *worker_, exact);
  auto r = judge.evaluate("problem.py", "// source", "k.cu");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(s.requests.size(), 2u);
  EXPECT_FALSE(s.requests[1].contains("timed_budget_s"));
  EXPECT_EQ(r->summary().find("fitted to"), std::string::npos) << r->summary();
}

// A library exporting the workspace pair and one exporting cutegen_forward, for the judge to read the hint from.
struct WorkspaceLibraries {
  cutegen::testing::TempDir dir{"cutegen-judge-libs-"};
  fs::path pair = dir.path / "pair.so", plain = dir.path / "plain.so";
  bool built() const {
    return cutegen::testing::build_shared_object(pair, "extern \"C\" long cutegen_workspace_bytes() { return 64; }\n"
                                                       "extern \"C\" int cutegen_forward_ws() { return 0; }\n") &&
           cutegen::testing::build_shared_object(plain, "extern \"C\" int cutegen_forward() { return 0; }\n");
  }
};

TEST_F(JudgeTest, ALibraryExportingTheWorkspacePairIsSaidToHaveOne) {
  // The worker then calibrates only the runner that times (docs/worker-protocol.md, `workspace`).
  WorkspaceLibraries libs;
  ASSERT_TRUE(libs.built());
  const fs::path &pair = libs.pair, &plain = libs.plain;
  Scenario s;
  compiler_.outcome.library = pair;
  ASSERT_TRUE(evaluate(s).ok());
  compiler_.outcome.library = plain;
  ASSERT_TRUE(judge_->evaluate("problem.py", "// source", "k.cu").ok());
  compiler_.outcome.library = "/fake/kernel.so";  // unreadable: no hint, the worker calibrates both runners
  ASSERT_TRUE(judge_->evaluate("problem.py", "// source", "k.cu").ok());
  ASSERT_EQ(s.requests.size(), 3u);
  EXPECT_EQ(s.requests[0].value("workspace", false), true);
  EXPECT_FALSE(s.requests[1].contains("workspace"));
  EXPECT_FALSE(s.requests[2].contains("workspace"));
}

// The size the last workspace kernel of a problem asked for is the next one's guess: a step rarely changes it, and a
// confirmed guess spares the runner that only asks (docs/worker-protocol.md, `workspace_guess_bytes`). A library
// seen before gets the size it asked for itself, which the worker holds it to.
TEST_F(JudgeTest, TheLastWorkspaceSizeAskedIsTheNextWorkspaceKernelsGuess) {
  WorkspaceLibraries libs;
  ASSERT_TRUE(libs.built());
  const fs::path &pair = libs.pair, &plain = libs.plain;
  Scenario s;
  s.record["workspace"] = {{"bytes", 65536}, {"cap_bytes", 16777216}};
  compiler_.outcome.library = pair;
  compiler_.outcome.key = "first";
  ASSERT_TRUE(evaluate(s).ok());
  compiler_.outcome.key = "second";  // another source with the pair
  ASSERT_TRUE(judge_->evaluate("problem.py", "// another source", "k.cu").ok());
  compiler_.outcome.key = "first";  // the first again
  ASSERT_TRUE(judge_->evaluate("problem.py", "// source", "k.cu").ok());
  compiler_.outcome.library = plain;
  compiler_.outcome.key = "third";
  ASSERT_TRUE(judge_->evaluate("problem.py", "// a third source", "k.cu").ok());
  ASSERT_EQ(s.requests.size(), 4u);
  EXPECT_FALSE(s.requests[0].contains("workspace_guess_bytes"));
  EXPECT_FALSE(s.requests[0].contains("workspace_bytes"));
  EXPECT_EQ(s.requests[1].value("workspace_guess_bytes", 0), 65536);
  EXPECT_FALSE(s.requests[1].contains("workspace_bytes"));
  EXPECT_EQ(s.requests[2].value("workspace_bytes", 0), 65536);
  EXPECT_FALSE(s.requests[2].contains("workspace_guess_bytes"));
  EXPECT_FALSE(s.requests[3].contains("workspace_guess_bytes"));  // no pair: no workspace to guess
}

TEST_F(JudgeTest, TheLoopsBarGoesToTheWorkerForOneEvaluationAndASkipIsRecorded) {
  Scenario s;
  s.record["generalization"] = generalization_record();
  s.record["generalization"]["trials"] = nlohmann::json::array();
  s.record["generalization"]["verified"].erase(1);
  s.record["generalization"]["seconds"] = 0.0;
  s.record["generalization"]["skipped_bar_ms"] = 1.5;
  s.record["generalization"]["notes"] = {"not tried at other shapes: its 2 ms is not below 1.5 ms, the time it had "
                                         "to beat to be kept"};
  ASSERT_TRUE(evaluate(s).ok());  // builds the judge; a plain evaluation
  auto below = judge_->evaluate_below("problem.py", "// source", "k.cu", 1.5);
  ASSERT_TRUE(below.ok()) << below.error().message;
  auto after = judge_->evaluate("problem.py", "// source", "k.cu");
  ASSERT_TRUE(after.ok()) << after.error().message;
  ASSERT_EQ(s.requests.size(), 3u);
  EXPECT_FALSE(s.requests[0].contains("keep_bar_ms"));
  EXPECT_DOUBLE_EQ(s.requests[1].value("keep_bar_ms", 0.0), 1.5);
  EXPECT_FALSE(s.requests[2].contains("keep_bar_ms")) << "the bar outlived its evaluation";
  EXPECT_EQ(s.requests[1].value("generalize", 0), 2);
  ASSERT_TRUE(below->generalization && below->generalization->skipped_bar_ms);
  EXPECT_DOUBLE_EQ(*below->generalization->skipped_bar_ms, 1.5);
  EXPECT_NE(below->summary().find("only the problem's own verified: not below 1.5 ms, the time it had to beat to be kept"),
            std::string::npos) << below->summary();
  auto back = Evaluation::from_json(below->to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->generalization && back->generalization->skipped_bar_ms);
  EXPECT_DOUBLE_EQ(*back->generalization->skipped_bar_ms, 1.5);
}

TEST_F(JudgeTest, ChecksLeftOutForAKernelNotBelowTheBarAreRecordedAndShown) {
  Scenario s;
  s.record["audits"]["deferred"] = {{"bar_ms", 1.25}, {"median_ms", 2.0}, {"full_audits", 2},
                                    {"trials", {{{"trial", 2}, {"kind", "scaled"}}}}};
  ASSERT_TRUE(evaluate(s).ok());
  auto below = judge_->evaluate_below("problem.py", "// source", "k.cu", 1.25);
  ASSERT_TRUE(below.ok()) << below.error().message;
  ASSERT_TRUE(below->skipped_checks_bar_ms);
  EXPECT_DOUBLE_EQ(*below->skipped_checks_bar_ms, 1.25);
  EXPECT_NE(below->summary().find("the scaled trial and the full audits not run: not below 1.25 ms"), std::string::npos)
      << below->summary();
  auto back = Evaluation::from_json(below->to_json());  // through the run's journal
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->skipped_checks_bar_ms);
  EXPECT_DOUBLE_EQ(*back->skipped_checks_bar_ms, 1.25);
  // A screening never carries the bar: it only ranks, and the candidate it chooses is evaluated in full.
  ASSERT_TRUE(judge_->screen("problem.py", "// source", "k.cu", {}).ok());
  EXPECT_FALSE(s.requests.back().contains("keep_bar_ms"));
  // A malformed record is the worker's bug, said so.
  s.record["audits"]["deferred"] = {{"median_ms", 2.0}};
  auto bad = judge_->evaluate_below("problem.py", "// source", "k.cu", 1.25);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("audits.deferred has no positive `bar_ms`"), std::string::npos);
}

TEST_F(JudgeTest, AKernelRightOnlyAtItsOwnShapeFailsWithTheShapeInTheEvidence) {
  Scenario s;
  s.record["verdict"] = "shape_specific";
  s.record["reason"] = "the kernel is right at the problem's shape but gives wrong results at another, with "
                       "batch_size=13, dim=301 (inputs [[13, 301]]): trial 1 (signed inputs) failed: mismatch";
  nlohmann::json check = failing_check();
  check["shape_trial"] = 0;
  check["config"] = {{"batch_size", 13}, {"dim", 301}};
  s.record["checks"].push_back(check);
  s.record["failed_check"] = s.record["checks"].size() - 1;
  s.record["generalization"] = generalization_record();
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::shape_specific);
  EXPECT_FALSE(r->passed());
  EXPECT_TRUE(r->baselines.empty()) << "a failing kernel is not compared with the baselines";
  EXPECT_NE(r->evidence.find("at another shape ({\"batch_size\":13,\"dim\":301}), trial 3"), std::string::npos)
      << r->evidence;
  EXPECT_NE(r->evidence.find("12 of 1000 elements bad"), std::string::npos) << r->evidence;
}

// A kernel whose build ptxas noted as slowed (serialised wgmma) still passes; the summary says so and the record
// keeps the note for the optimize request.
TEST_F(JudgeTest, PtxasPerformanceNotesOnThePassingBuildAreAWarningAndInTheRecord) {
  compiler_.outcome.log = "ptxas info    : (C7510) Potential Performance Loss: wgmma.mma_async instructions are "
                          "serialized due to wgmma pipeline crossing function boundary at a function call in the "
                          "function 'k'\n";
  Scenario s;
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::pass) << r->reason;
  EXPECT_NE(r->summary().find("  WARNING   ptxas: (C7510) Potential Performance Loss: wgmma.mma_async"),
            std::string::npos) << r->summary();
  const Evaluation record = r->record();
  ASSERT_EQ(record.compiler_notes.size(), 1u);
  EXPECT_EQ(record.compiler_notes[0].rfind("(C7510)", 0), 0u);
  // Through the journal's JSON and back.
  auto back = Evaluation::from_json(record.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->compiler_notes, record.compiler_notes);
}

TEST(JudgeShapes, TheSummaryLineSaysWhyOnlyTheProblemsOwnShapeIsVerified) {
  Generalization off{.asked = 0, .verified = {VerifiedShape{}}};
  EXPECT_NE(shapes_line(off).find("--generalize 0"), std::string::npos);
  Generalization literal{.asked = 2, .verified = {VerifiedShape{}}};
  EXPECT_NE(shapes_line(literal).find("no size of its own to vary"), std::string::npos);
  Generalization skipped{.asked = 2, .varied = {"n"}, .verified = {VerifiedShape{}}, .notes = {"no smaller configuration: x"}};
  EXPECT_NE(shapes_line(skipped).find("1 verified: the problem's own (1 not tried: no smaller configuration: x)"),
            std::string::npos) << shapes_line(skipped);
}

TEST(JudgeProfiling, AWorkerFailureIsTheError) {
  FakeCompiler compiler;
  FakeReferenceWorker worker([](const std::string&, const nlohmann::json&) -> Result<nlohmann::json> {
    return Error{"problem.py: get_inputs() is missing"};
  });
  Judge judge(compiler, worker, EvalOptions{});
  Evaluation passed;
  passed.library = "/fake/kernel.so";
  auto inv = judge.profiling_run("problem.py", passed, 2);
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.error().message, "problem.py: get_inputs() is missing");
}

TEST(JudgeTrialPlan, OwnParametersOnceRobustnessTrialsAndARandomOrder) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> seeds;
  auto plan = trial_plan(5, "float16", rng, seeds);
  ASSERT_EQ(plan.size(), 7u);
  EXPECT_EQ(seeds.size(), 7u);
  int own = 0, scaled = 0;
  for (const auto& t : plan) {
    own += t["params"] == "own";
    if (t["kind"] == "scaled") {
      ++scaled;
      EXPECT_DOUBLE_EQ(t["scale"].get<double>(), 4.0);  // fp16 stays finite
    }
    if (t["params"] == "own") {
      EXPECT_EQ(t["kind"], "problem");
    }
  }
  EXPECT_EQ(own, 1);
  EXPECT_EQ(scaled, 1);
  // The order differs between draws (the candidate cannot know which trial comes when).
  bool differs = false;
  for (int i = 0; i < 8 && !differs; ++i) {
    std::vector<uint64_t> more;
    auto again = trial_plan(5, "float32", rng, more);
    for (std::size_t k = 0; k < again.size(); ++k)
      differs |= again[k]["kind"] != plan[k]["kind"] || again[k]["params"] != plan[k]["params"];
  }
  EXPECT_TRUE(differs);
}

TEST(JudgeVerdicts, NamesRoundTrip) {
  for (int v = static_cast<int>(Verdict::pass); v <= static_cast<int>(kLastVerdict); ++v) {
    auto word = to_string(static_cast<Verdict>(v));
    ASSERT_TRUE(parse_verdict(word).has_value()) << word;
    EXPECT_EQ(static_cast<int>(*parse_verdict(word)), v);
  }
  EXPECT_FALSE(parse_verdict("passed").has_value());
}

TEST(JudgeReasons, ACompileErrorReasonNamesTheCountAndTheFirstError) {
  CompileOutcome c;
  c.verdict = CompileVerdict::compile_error;
  c.diagnostic.total_errors = 22;
  DiagnosticError e;
  e.message = "static assertion failed with \"Mismatched Ranks\"";
  e.candidate_line = 24;
  c.diagnostic.errors.push_back(e);
  EXPECT_EQ(compile_failure_reason(c), "22 compile errors; first at line 24: static assertion failed with \"Mismatched Ranks\"");
  c.verdict = CompileVerdict::timeout;
  EXPECT_EQ(compile_failure_reason(c), "nvcc ran past its time limit");
}

TEST(JudgeReasons, ACompileFailureWithoutParsedErrorsQuotesNvccsLastLine) {
  CompileOutcome c;
  c.verdict = CompileVerdict::compile_error;
  c.log = "ptxas info    : 0 bytes gmem\n  ptxas fatal   : Unresolved extern function 'helper'\n\n";
  EXPECT_EQ(compile_failure_reason(c), "nvcc failed: ptxas fatal   : Unresolved extern function 'helper'");
  c.log.clear();
  EXPECT_EQ(compile_failure_reason(c), "nvcc failed without output");
}

// One `cutegen eval` (no shared GPU): the worker loads the problem while the kernel builds, and a build that fails
// still reports the compile error, not the load's. A later kernel finds the problem loaded, and the worker frees
// what the last evaluation left on the device while that kernel builds; a worker that cannot is the error.
TEST(JudgeLoad, RunsBesideTheBuildWhenNoGpuIsShared) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-judge-load-");
  ASSERT_TRUE(dir.ok());
  std::atomic<bool> beside{false};  // set by the worker's load or free_buffers
  struct WaitingCompiler final : public Compiler {
    std::atomic<bool>* beside = nullptr;
    bool wait = true;  // for the worker's part beside the build, up to 5 s
    bool saw_beside = false;
    CompileOutcome outcome = built();
    Result<CompileOutcome> compile(const CompileRequest&) override {
      for (int i = 0; wait && i < 500 && !beside->load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      saw_beside = beside->load();
      return outcome;
    }
  } compiler;
  compiler.beside = &beside;
  bool free_fails = false;
  FakeReferenceWorker worker([&](const std::string& op, const nlohmann::json&) -> Result<nlohmann::json> {
    if (op == "load") {
      beside = true;
      return nlohmann::json{{"name", "relu"}, {"gpu", "Fake GPU"}, {"dtype", "float32"}, {"min_bytes", 8}};
    }
    if (op == "free_buffers") {
      if (free_fails) return Error{"the worker died"};
      beside = true;
      return nlohmann::json{{"reserved_bytes", 0}};
    }
    if (op == "evaluate_candidate") return passing_record(1.0);
    if (op == "calibrate") return nlohmann::json{{"gpu", "Fake GPU"}, {"hbm_gbps", 1000}, {"tflops", {{"fp32", 1}, {"tf32", 1}, {"fp16", 1}, {"bf16", 1}}}};
    return Error{"unexpected op " + op};
  });
  EvalOptions o;
  o.runner = "/fake/cutegen-runner";
  o.work_dir = *dir / "work";
  o.cache_root = *dir / "cache";
  o.baselines = false;
  Judge judge(compiler, worker, o);
  auto r = judge.evaluate("problem.py", "// source", "k.cu");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(compiler.saw_beside);  // the compile waited up to 5 s for a load that runs only after it otherwise
  EXPECT_EQ(r->verdict, Verdict::pass) << r->reason;
  ASSERT_TRUE(r->problem.has_value());
  EXPECT_EQ(r->problem->name, "relu");
  EXPECT_EQ(worker.ops, (std::vector<std::string>{"load", "evaluate_candidate", "calibrate"}));
  // The problem is loaded once: the next kernel's build has the worker free the last session's buffers beside it.
  beside = false;
  worker.ops.clear();
  auto second = judge.evaluate("problem.py", "// second source", "k2.cu");
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_TRUE(compiler.saw_beside);
  EXPECT_EQ(second->verdict, Verdict::pass) << second->reason;
  EXPECT_EQ(worker.ops, (std::vector<std::string>{"free_buffers", "evaluate_candidate"}));
  // A build that fails still settles the worker's part: here the worker cannot free, and says so.
  compiler.outcome.verdict = CompileVerdict::compile_error;
  compiler.outcome.log = "k.cu(3): error: identifier \"x\" is undefined";
  compiler.wait = false;
  free_fails = true;
  auto failed = judge.evaluate("problem.py", "// other source", "k3.cu");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("the worker died"), std::string::npos) << failed.error().message;
  free_fails = false;
  auto compile_error = judge.evaluate("problem.py", "// yet another source", "k4.cu");
  ASSERT_TRUE(compile_error.ok()) << compile_error.error().message;
  EXPECT_EQ(compile_error->verdict, Verdict::compile_error);
  EXPECT_EQ(std::count(worker.ops.begin(), worker.ops.end(), "load"), 0);
  fs::remove_all(*dir);
}

// The device lock is held while the worker measures, never during the compile, so tasks sharing a
// GPU (cutegen bench) compile in parallel but never time at once.
TEST(JudgeDeviceLock, HeldForEveryWorkerCallButNotForTheCompile) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-judge-lock-");
  ASSERT_TRUE(dir.ok());
  const fs::path lock_file = *dir / "gpu0.lock";
  auto free_now = [&] {
    auto probe = FileLock::try_lock(lock_file);  // another descriptor: behaves as another process
    return probe.ok() && probe->held();
  };
  struct CheckingCompiler final : public Compiler {
    std::function<bool()> free_now;
    bool free_during_compile = false;
    Result<CompileOutcome> compile(const CompileRequest&) override {
      free_during_compile = free_now();
      return built();
    }
  } compiler;
  compiler.free_now = free_now;
  std::vector<std::string> held_for;
  FakeReferenceWorker worker([&](const std::string& op, const nlohmann::json&) -> Result<nlohmann::json> {
    if (!free_now()) held_for.push_back(op);
    if (op == "load") return nlohmann::json{{"name", "relu"}, {"gpu", "Fake GPU"}, {"dtype", "float32"}, {"min_bytes", 8}};
    if (op == "evaluate_candidate") return passing_record(1.0);
    if (op == "time_baselines") return nlohmann::json{{"eager", {{"median_ms", 4.0}}}};
    if (op == "calibrate") return nlohmann::json{{"gpu", "Fake GPU"}, {"hbm_gbps", 1000}, {"tflops", {{"fp32", 1}, {"tf32", 1}, {"fp16", 1}, {"bf16", 1}}}};
    if (op == "release_gpu") return nlohmann::json{{"reserved_bytes", 0}};
    return Error{"unexpected op " + op};
  });
  DeviceLock lock(lock_file);
  EvalOptions o;
  o.runner = "/fake/cutegen-runner";
  o.work_dir = *dir / "work";
  o.cache_root = *dir / "cache";
  o.seed = 1;
  o.device_lock = &lock;
  Judge judge(compiler, worker, o);
  auto r = judge.evaluate("problem.py", "// source", "k.cu");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(compiler.free_during_compile);
  // The GPU goes to the next task with this worker's device memory given back (an idle worker's loaded
  // KernelBench problem starved the others on an H200), so the next evaluation loads the problem again.
  EXPECT_EQ(held_for, (std::vector<std::string>{"load", "evaluate_candidate", "time_baselines", "calibrate", "release_gpu"}));
  EXPECT_TRUE(free_now());  // released at the end
  EXPECT_GT(lock.held_seconds(), 0);
  held_for.clear();
  ASSERT_TRUE(judge.evaluate("problem.py", "// source", "k.cu").ok());
  ASSERT_FALSE(held_for.empty());
  EXPECT_EQ(held_for.front(), "load");
  EXPECT_EQ(held_for.back(), "release_gpu");
  fs::remove_all(*dir);
}

TEST_F(JudgeTest, ScreeningIsCheaperSaysSoAndLeavesTheFullSettingsAlone) {
  Scenario s;
  ASSERT_TRUE(evaluate(s).ok());
  auto screened = judge_->screen("problem.py", "// source", "k.cu", {{"TILE", "128"}});
  ASSERT_TRUE(screened.ok()) << screened.error().message;
  ASSERT_EQ(s.requests.size(), 2u);
  // The variant's defines reach the compiler.
  ASSERT_EQ(compiler_.requests.size(), 2u);
  EXPECT_EQ(compiler_.requests[1].defines, (std::vector<Define>{{"TILE", "128"}}));
  // One problem trial (plus signed and scaled) instead of two, fewer timed calls, no baselines.
  EXPECT_EQ(s.requests[1]["trials"].size(), s.requests[0]["trials"].size() - 1);
  EXPECT_EQ(s.requests[1]["runs"], 20);
  EXPECT_LE(s.requests[1]["warmup"].get<int>(), 3);
  EXPECT_EQ(s.requests[1]["generalize"], 0);  // the variant chosen is evaluated again in full, other shapes too
  // A rank, not a result: the worker's checks for other users of the GPU wait out no idle window.
  EXPECT_EQ(s.requests[1].value("screening", false), true);
  EXPECT_FALSE(s.requests[0].contains("screening"));
  EXPECT_TRUE(screened->baselines.empty());
  EXPECT_EQ(screened->to_json()["screening"], true);
  // The next full evaluation is as before.
  s.baseline_request = nullptr;
  auto full = judge_->evaluate("problem.py", "// source", "k.cu");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(s.requests[2]["runs"], 100);
  EXPECT_EQ(s.requests[2]["generalize"], 2);
  EXPECT_EQ(s.requests[2]["trials"].size(), s.requests[0]["trials"].size());
  EXPECT_FALSE(s.requests[2].contains("screening"));
  EXPECT_FALSE(s.baseline_request.is_null());
  EXPECT_FALSE(full->to_json().contains("screening"));
}

TEST(ScreeningOptions, KeepsAtLeastTenTimedCalls) {
  EvalOptions full;
  full.runs = 30;
  auto o = screening_options(full);
  EXPECT_EQ(o.runs, 10);
  EXPECT_EQ(o.trials, 1);
  EXPECT_EQ(o.generalize, 0);
  EXPECT_FALSE(o.baselines);
  EXPECT_TRUE(o.screening);
  full.runs = 5;
  EXPECT_EQ(screening_options(full).runs, 5);
}

// A time taken under a timing experiment's switch, or with calls that waited for a CPU, says so in the
// summary a user reads (the default judge's time is the promise; these are not quite it).
TEST_F(JudgeTest, TimingExperimentsAndBusyCallsAreNamedInTheSummary) {
  Scenario plain;
  plain.record = passing_record(1.0);
  auto quiet = evaluate(plain);
  ASSERT_TRUE(quiet.ok()) << quiet.error().message;
  EXPECT_EQ(quiet->summary().find("CUTEGEN_OVERRUN_CHECK"), std::string::npos);
  EXPECT_EQ(quiet->summary().find("waited for a CPU"), std::string::npos);
  EXPECT_EQ(quiet->summary().find("host computing"), std::string::npos);

  Scenario s;
  s.record = passing_record(1.0);
  s.record["calibration"]["overrun_check"] = "gather";
  s.record["calibration"]["sweep"] = "footprint";
  s.record["time"]["disturbed_calls"] = 3;
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->time.has_value());
  EXPECT_EQ(r->time->disturbed_calls, 3);
  EXPECT_EQ(r->time->to_json().at("disturbed_calls"), 3);
  auto text = r->summary();
  EXPECT_NE(text.find("CUTEGEN_OVERRUN_CHECK=gather"), std::string::npos) << text;
  EXPECT_NE(text.find("CUTEGEN_CALIBRATION_SWEEP=footprint"), std::string::npos) << text;
  EXPECT_NE(text.find("in 3 of the timed calls a process waited for a CPU"), std::string::npos) << text;
  EXPECT_EQ(quiet->summary().find("CUTEGEN_RUNNER_WAIT"), std::string::npos);
  EXPECT_EQ(quiet->summary().find("  session "), std::string::npos) << "no phase clock in the record, no line";

  // The blocking wait is the A/B setting now; the session's phase clock and a fused comparison are shown.
  Scenario hybrid;
  hybrid.record = passing_record(1.0);
  hybrid.record["calibration"]["runner_wait"] = "block";
  hybrid.record["phase_seconds"] = {{"runner_start", 0.25}, {"trials", 3.5}};
  hybrid.record["audits"]["compare"] = "fused";
  auto h = evaluate(hybrid);
  ASSERT_TRUE(h.ok()) << h.error().message;
  const std::string said = h->summary();
  EXPECT_NE(said.find("WARNING   timed with CUTEGEN_RUNNER_WAIT=block (the A/B setting, not the default"),
            std::string::npos) << said;
  // The default (hybrid) is not warned about.
  Scenario by_default;
  by_default.record = passing_record(1.0);
  by_default.record["calibration"]["runner_wait"] = "hybrid";
  auto d = evaluate(by_default);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->summary().find("CUTEGEN_RUNNER_WAIT"), std::string::npos) << d->summary();
  EXPECT_NE(said.find("  session   runner_start 0.25, trials 3.50 s (comparisons: fused)"),
            std::string::npos) << said;
  // The clock is kept in the record's session, where benchmarks/turnaround.py and eval_wall_time.sh read it.
  EXPECT_EQ(h->to_json().at("session").at("phase_seconds").at("trials"), 3.5);

  // The host-computing check off (the spinning wait's A/B) or unable to read the runner's CPU time.
  for (const char* host : {"spin", "unavailable", "costly_wait"}) {
    Scenario off;
    off.record = passing_record(1.0);
    off.record["calibration"]["host_cpu"] = host;
    off.record["calibration"]["wait_share"] = 0.62;
    auto o = evaluate(off);
    ASSERT_TRUE(o.ok()) << o.error().message;
    auto said = o->summary();
    EXPECT_NE(said.find("host computing was not judged"), std::string::npos) << said;
    EXPECT_EQ(said.find("CUTEGEN_RUNNER_WAIT=spin") != std::string::npos, std::string(host) == "spin") << said;
    EXPECT_EQ(said.find("costs 62% of the time waited") != std::string::npos, std::string(host) == "costly_wait") << said;
  }
}

// A busy CPU is measured again in a whole new session; the report says so. When it stays busy the
// evaluation is an error of the machine's kind, never a verdict on the kernel.
TEST_F(JudgeTest, ABusyMachineIsMeasuredAgainThenAnErrorNotAVerdict) {
  Scenario once;
  once.busy_answers = 1;
  auto r = evaluate(once);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::pass);
  EXPECT_EQ(once.requests.size(), 2u);
  // A new session: no input of the refused attempt repeats, and its work directory is not reused (a
  // kernel could have left cached answers there).
  EXPECT_FALSE(once.requests[0].contains("timing_seed"));  // the worker draws the timed calls' seeds itself
  EXPECT_NE(once.requests[0]["trials"], once.requests[1]["trials"]);
  EXPECT_NE(once.requests[0]["work_dir"], once.requests[1]["work_dir"]);
  EXPECT_EQ(once.requests[0]["library"], once.requests[1]["library"]);
  // The seeds recorded are those of the attempt that counted.
  std::vector<uint64_t> counted;
  for (const auto& t : once.requests[1]["trials"]) counted.push_back(t["seed"].get<uint64_t>());
  std::vector<uint64_t> recorded(r->seeds.end() - static_cast<std::ptrdiff_t>(counted.size()), r->seeds.end());
  std::sort(counted.begin(), counted.end());
  std::sort(recorded.begin(), recorded.end());
  EXPECT_EQ(recorded, counted);
  EXPECT_NE(r->summary().find("timed again 1 time(s): the CPU was too busy to time on the first time"), std::string::npos)
      << r->summary();
  // The user watching is told why it waits (a minute, on a loaded machine, is long enough to look hung).
  ASSERT_EQ(busy_notes_.size(), 1u);
  EXPECT_NE(busy_notes_[0].find("too busy to time on"), std::string::npos) << busy_notes_[0];
  EXPECT_NE(busy_notes_[0].find("measuring again in 0 s (attempt 2 of 3)"), std::string::npos) << busy_notes_[0];
  busy_notes_.clear();

  Scenario always;
  always.busy_answers = 100;
  auto busy = evaluate(always);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().kind, ErrorKind::machine_busy);
  EXPECT_EQ(always.requests.size(), 3u);  // the first try and one after each of the two pauses
  EXPECT_NE(busy.error().message.find("too busy to time on"), std::string::npos);
  EXPECT_NE(busy.error().message.find("(tried 3 times)"), std::string::npos) << busy.error().message;
  ASSERT_EQ(busy_notes_.size(), 2u);
  EXPECT_NE(busy_notes_[1].find("(attempt 3 of 3)"), std::string::npos) << busy_notes_[1];
}

// Another program's work on the GPU (python/cutegen_worker/gpu_share.py) is the same kind of refusal: measured
// again, then an error of the machine's kind naming what was found, never a verdict; the note says which.
TEST_F(JudgeTest, AGpuAnotherProgramWorksOnIsMeasuredAgainThenAnError) {
  const std::string gpu = "the GPU was too busy to time on: process 1234 (python) holds 20.1 GiB and the GPU was 97% "
                          "busy while the judge was idle (checked before the kernel was loaded). Time on a GPU no "
                          "other program uses, or once the other work is done";
  Scenario once;
  once.busy_answers = 1;
  once.busy_message = gpu;
  auto r = evaluate(once);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::pass);
  EXPECT_NE(r->summary().find("timed again 1 time(s): the GPU was too busy to time on the first time"), std::string::npos)
      << r->summary();
  EXPECT_EQ(r->record().details.at("session").at("busy_reasons"), nlohmann::json::array({gpu}));
  ASSERT_EQ(busy_notes_.size(), 1u);
  EXPECT_NE(busy_notes_[0].find("process 1234 (python) holds 20.1 GiB"), std::string::npos) << busy_notes_[0];

  Scenario always;
  always.busy_answers = 100;
  always.busy_message = gpu;
  auto busy = evaluate(always);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().kind, ErrorKind::machine_busy);
  EXPECT_EQ(busy.error().message, gpu + " (tried 3 times)");
}

// What the worker could not check for other users of the GPU is said where a time or hidden work is reported;
// a check that ran says nothing.
TEST_F(JudgeTest, AGpuShareCheckThatCouldNotRunIsWarned) {
  auto with_share = [](nlohmann::json record, const std::string& status) {
    record["gpu_share"] = {{"status", status}, {"source", "nvidia-smi"}, {"checks", nlohmann::json::array()},
                           {"note", "nvidia-smi gives no timestamped utilisation samples"}};
    return record;
  };
  for (const char* status : {"checked", "partial", "unavailable", "off"}) {
    Scenario s;
    s.record = with_share(passing_record(1.0), status);
    auto r = evaluate(s);
    ASSERT_TRUE(r.ok()) << r.error().message;
    auto said = r->summary();
    EXPECT_EQ(r->record().details.at("session").at("gpu_share").at("status"), status);
    const bool warned = said.find("could not be ruled out") != std::string::npos;
    EXPECT_EQ(warned, std::string(status) == "partial" || std::string(status) == "unavailable") << said;
    EXPECT_EQ(said.find("could not be ruled out in full") != std::string::npos, std::string(status) == "partial") << said;
    EXPECT_EQ(said.find("no timestamped utilisation samples") != std::string::npos, warned) << said;
    EXPECT_EQ(said.find("CUTEGEN_GPU_SHARE_CHECK=off") != std::string::npos, std::string(status) == "off") << said;
  }
  // Hidden work is what another program's kernels look like: the failure says the check was incomplete.
  // A wrong answer is wrong on any GPU, and says nothing of it.
  for (const char* verdict : {"hidden_work", "mismatch"}) {
    Scenario s;
    s.record = with_share(passing_record(1.0), "unavailable");
    s.record["verdict"] = verdict;
    s.record["reason"] = "each call took 3.000 ms by the worker's clock";
    s.record["time"] = nullptr;
    auto r = evaluate(s);
    ASSERT_TRUE(r.ok()) << r.error().message;
    auto said = r->summary();
    EXPECT_EQ(said.find("could not be ruled out") != std::string::npos, std::string(verdict) == "hidden_work") << said;
  }
}
