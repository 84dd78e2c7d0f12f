// The judge's decisions on scripted evidence: a fake compiler, a fake worker and a fake runner process
// (which writes the result file a real runner would), so every verdict path runs without a GPU.
#include "run/judge.h"

#include <gtest/gtest.h>

#include "common/fake_process_runner.h"
#include "common/fs.h"
#include "run/runner_job.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

class FakeCompiler final : public Compiler {
 public:
  CompileOutcome outcome;
  Result<CompileOutcome> compile(const CompileRequest&) override { return outcome; }
};

CompileOutcome built() {
  CompileOutcome o;
  o.verdict = CompileVerdict::ok;
  o.library = "/fake/kernel.so";
  return o;
}

nlohmann::json tensor_ref() { return {{"dtype", "float32"}, {"shape", {4}}, {"stride", {1}}, {"nbytes", 16}, {"data_ptr", 64}}; }

nlohmann::json passing_check(int trial) {
  return {{"trial", trial}, {"kind", "problem"}, {"pass", true}, {"reason", "ok"}, {"outputs", nlohmann::json::array()}};
}

struct Scenario {
  nlohmann::json runner_result;   // what the fake runner writes to --result
  ProcessResult runner_process = FakeProcessRunner::exited(0);
  std::function<nlohmann::json(int)> check = passing_check;
  nlohmann::json timing_check = {{"pass", true}, {"reason", "ok"}};
  nlohmann::json memory = nlohmann::json::object();  // the load answer's memory estimate
  std::vector<nlohmann::json> prepares;             // every prepare request
  int runner_calls = 0;
  bool runner_called = false;
};

class JudgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-judge-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    compiler_.outcome = built();
    auto cal = write_file_atomic(dir_ / "cache/calibration/Fake_GPU.json",
                                 R"({"gpu":"Fake GPU","hbm_gbps":4000,"tflops":{"fp32":50,"tf32":400,"fp16":700,"bf16":700}})");
    ASSERT_TRUE(cal.ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result<EvalReport> evaluate(Scenario& s) {
    worker_ = std::make_unique<FakeReferenceWorker>([&s](const std::string& op, const nlohmann::json& args) -> Result<nlohmann::json> {
      if (op == "load")
        return nlohmann::json{{"name", "relu"},         {"gpu", "Fake GPU"},   {"dtype", "float32"},
                              {"min_bytes", 8000000}, {"flops", 1000000}, {"memory", s.memory}};
      if (op == "check_timing") return s.timing_check;
      if (op == "prepare") {
        s.prepares.push_back(args);
        nlohmann::json trials = nlohmann::json::array();
        for (std::size_t i = 0; i < args["trials"].size(); ++i)
          trials.push_back({{"index", i}, {"inputs", {tensor_ref()}}, {"outputs", {{tensor_ref()}, {tensor_ref()}}}});
        nlohmann::json timing = nlohmann::json::array();
        for (int i = 0; i < args["timing_sets"].get<int>(); ++i)
          timing.push_back({{"inputs", {tensor_ref()}}, {"outputs", {tensor_ref()}}});
        return nlohmann::json{{"trials", trials}, {"timing", timing}};
      }
      if (op == "check") return s.check(args["trial"].get<int>());
      if (op == "time_baselines")
        return nlohmann::json{{"eager", {{"median_ms", 4.0}}}, {"compile", {{"median_ms", 3.0}}}};
      return Error{"unexpected op " + op};
    });
    runner_ = std::make_unique<FakeProcessRunner>([&s](const ProcessSpec& spec) -> Result<ProcessResult> {
      s.runner_called = true;
      ++s.runner_calls;
      std::string result_path = spec.argv.at(4);
      if (!s.runner_result.is_null()) {
        EXPECT_TRUE(write_file_atomic(result_path, s.runner_result.dump()).ok());
      }
      return s.runner_process;
    });
    EvalOptions o;
    o.trials = 2;
    o.runner = "/fake/cutegen-runner";
    o.work_dir = dir_ / "work";
    o.cache_root = dir_ / "cache";
    o.seed = 42;
    judge_ = std::make_unique<Judge>(compiler_, *worker_, *runner_, o);
    return judge_->evaluate("problem.py", "// source", "k.cu");
  }

  static nlohmann::json finished(double event_ms, double host_ms) {
    return {{"phase", "done"}, {"failure", nullptr},
            {"timing", {{"event", {{"median_ms", event_ms}, {"min_ms", event_ms}, {"iqr_ms", 0.0}, {"runs", 10}}},
                        {"host", {{"median_ms", host_ms}}}}}};
  }

  fs::path dir_;
  FakeCompiler compiler_;
  std::unique_ptr<FakeReferenceWorker> worker_;
  std::unique_ptr<FakeProcessRunner> runner_;
  std::unique_ptr<Judge> judge_;
};

}  // namespace

TEST_F(JudgeTest, PassingKernelGetsSpeedupsAndSol) {
  Scenario s;
  s.runner_result = finished(2.0, 2.02);
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::pass) << r->reason;
  EXPECT_EQ(r->checks.size(), 5u);  // 2 problem trials + signed + scaled, then the timed runs' outputs
  EXPECT_EQ(r->seeds.size(), 4u);
  auto j = r->to_json();
  EXPECT_DOUBLE_EQ(j["speedup"]["eager"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["speedup"]["compile"].get<double>(), 1.5);
  ASSERT_TRUE(r->floor.has_value());
  EXPECT_NEAR(r->floor->floor_ms, 8e6 / 4000e9 * 1e3, 1e-12);
  EXPECT_NEAR(j["sol_pct"].get<double>(), 100 * r->floor->floor_ms / 2.0, 1e-9);
  EXPECT_NE(r->summary().find("PASS relu"), std::string::npos);
  EXPECT_NE(r->summary().find("SOL"), std::string::npos);
  // Every phase an evaluation goes through is accounted for, and together they fit in the wall time.
  double sum = 0;
  for (const char* phase : {"compile", "load", "prepare", "runner", "check", "baselines", "roofline"}) {
    ASSERT_TRUE(r->phase_seconds.contains(phase)) << phase;
    sum += r->phase_seconds.at(phase);
  }
  EXPECT_LE(sum, r->seconds + 1e-6);
  EXPECT_TRUE(j["phase_seconds"].contains("runner"));
  EXPECT_NE(r->summary().find("s wall (baselines"), std::string::npos) << r->summary();
}

TEST_F(JudgeTest, CompileFailureNeverReachesTheWorkerOrRunner) {
  compiler_.outcome = CompileOutcome{};
  compiler_.outcome.verdict = CompileVerdict::rejected;
  compiler_.outcome.violations = {{"forbidden-import", "imports cublasSgemm_v2: calls cuBLAS"}};
  Scenario s;
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::rejected);
  EXPECT_NE(r->reason.find("cublasSgemm_v2"), std::string::npos);
  EXPECT_TRUE(worker_->ops.empty());
  EXPECT_FALSE(s.runner_called);
  // The report of a kernel that never reached the problem still renders (it once threw on null metadata).
  EXPECT_NE(r->summary().find("FAIL"), std::string::npos);
  EXPECT_EQ(r->to_json()["verdict"], "rejected");
}

TEST_F(JudgeTest, RunnerCrashIsNamed) {
  Scenario s;
  s.runner_result = {{"phase", "correctness"}, {"failure", nullptr}};
  s.runner_process.exit_code = -1;
  s.runner_process.term_signal = 11;
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::crash);
  EXPECT_NE(r->reason.find("signal 11"), std::string::npos);
  EXPECT_NE(r->reason.find("correctness"), std::string::npos);
}

TEST_F(JudgeTest, HangIsATimeout) {
  Scenario s;
  s.runner_result = {{"phase", "correctness"}};
  s.runner_process.timed_out = true;
  s.runner_process.wall_seconds = 120;
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::timeout);
}

TEST_F(JudgeTest, IllegalAddressIsACudaError) {
  Scenario s;
  s.runner_result = {{"phase", "correctness"}, {"failure", "cuda_error"},
                     {"message", "CUDA error while running the kernel: cudaErrorIllegalAddress: an illegal memory access"}};
  s.runner_process = FakeProcessRunner::exited(4);
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::cuda_error);
  EXPECT_NE(r->reason.find("cudaErrorIllegalAddress"), std::string::npos);
}

TEST_F(JudgeTest, PrintingIsRejectedEvenWhenEverythingElsePasses) {
  Scenario s;
  s.runner_result = finished(1.0, 1.0);
  s.runner_process = FakeProcessRunner::exited(0, "thread 0 says hi\nthread 1 says hi\n");
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::printed_output);
  EXPECT_NE(r->reason.find("thread 0 says hi"), std::string::npos);
}

TEST_F(JudgeTest, UnwrittenOutputsCarryTheMismatchEvidence) {
  Scenario s;
  s.runner_result = finished(1.0, 1.0);
  s.check = [](int trial) {
    if (trial < 2) return passing_check(trial);
    return nlohmann::json{{"trial", trial}, {"kind", "signed"}, {"seed", 7}, {"pass", false}, {"reason", "unwritten"},
                          {"outputs", {{{"index", 0}, {"bad_count", 16}, {"total", 64}, {"bad_fraction", 0.25},
                                        {"unwritten_count", 16}, {"max_abs_err", 1.0}, {"rel_l2_err", 0.5},
                                        {"first_bad", {{{"index", {48}}, {"got", "nan"}, {"expected", 0.25}}}}}}}};
  };
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::unwritten);
  EXPECT_NE(r->reason.find("signed"), std::string::npos);
  EXPECT_NE(r->evidence.find("16 unwritten"), std::string::npos) << r->evidence;
  EXPECT_NE(r->evidence.find("[48] got \"nan\""), std::string::npos) << r->evidence;
  EXPECT_TRUE(r->baselines.is_null());  // no baseline timing for a wrong kernel
}

TEST_F(JudgeTest, WorkHiddenFromTheLaunchStreamIsFlagged) {
  Scenario s;
  s.runner_result = finished(0.01, 3.0);  // events saw nothing, the device was busy for 3 ms
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::hidden_work);
}

TEST_F(JudgeTest, ProblemErrorsAreErrorsNotVerdicts) {
  Scenario s;
  worker_.reset();
  auto failing = std::make_unique<FakeReferenceWorker>([](const std::string&, const nlohmann::json&) -> Result<nlohmann::json> {
    return Error{"problem.py: get_inputs() is missing"};
  });
  FakeProcessRunner runner([](const ProcessSpec&) -> Result<ProcessResult> { return FakeProcessRunner::exited(0); });
  EvalOptions o;
  o.work_dir = dir_ / "w";
  o.cache_root = dir_ / "cache";
  Judge judge(compiler_, *failing, runner, o);
  auto r = judge.evaluate("problem.py", "// src", "k.cu");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("get_inputs"), std::string::npos);
}

TEST(ClassifyRunner, OrderOfCauses) {
  ProcessResult ok = FakeProcessRunner::exited(0);
  EXPECT_EQ(classify_runner(ok, {{"phase", "done"}}, 1).verdict, Verdict::pass);
  EXPECT_EQ(classify_runner(ok, {{"phase", "timing"}}, 1).verdict, Verdict::crash);  // stopped early
  auto load = classify_runner(FakeProcessRunner::exited(3), {{"phase", "setup"}, {"failure", "load"}, {"message", "undefined symbol: foo"}}, 1);
  EXPECT_EQ(load.verdict, Verdict::load_failed);
  EXPECT_NE(load.reason.find("undefined symbol"), std::string::npos);
  auto ke = classify_runner(FakeProcessRunner::exited(4), {{"failure", "kernel_error"}, {"message", "returned 1000"}}, 1);
  EXPECT_EQ(ke.verdict, Verdict::kernel_error);
  ProcessResult flood = FakeProcessRunner::exited(0, std::string(100, 'x'));
  flood.output_truncated = true;
  auto pf = classify_runner(flood, {{"phase", "done"}}, 1);
  EXPECT_EQ(pf.verdict, Verdict::printed_output);
  // The runner itself stops a printing kernel after its first call and says so in the result file.
  auto early = classify_runner(FakeProcessRunner::exited(4),
                               {{"phase", "correctness"}, {"failure", "printed_output"},
                                {"message", "the kernel printed 4096 bytes (first line: \"element 0\")"}},
                               4);
  EXPECT_EQ(early.verdict, Verdict::printed_output);
  auto reuse = classify_runner(FakeProcessRunner::exited(6),
                               {{"phase", "reuse_check"}, {"failure", "result_reuse"},
                                {"message", "output 0 with another call's inputs ... reuses results"}},
                               4);
  EXPECT_EQ(reuse.verdict, Verdict::result_reuse);
  EXPECT_EQ(to_string(reuse.verdict), "result_reuse");
  EXPECT_NE(early.reason.find("element 0"), std::string::npos);
  EXPECT_NE(pf.reason.find("more than 100"), std::string::npos);
}

TEST_F(JudgeTest, LargeProblemsRunTheirTrialsInBatchesWithTimingInTheLast) {
  Scenario s;
  s.runner_result = finished(2.0, 2.02);
  // 100 bytes free: 80 usable, 10 for the timing sets (4 x 2), 2 params, 0 workspace -> 2 trials (30 each).
  s.memory = {{"bytes_per_trial", 30}, {"bytes_per_timing_set", 2}, {"bytes_params", 2}, {"check_workspace_bytes", 0},
              {"device_free_bytes", 100}};
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::pass) << r->reason;
  ASSERT_EQ(s.prepares.size(), 2u);  // 4 trials in batches of 2
  EXPECT_EQ(s.prepares[0]["trials"].size(), 2u);
  EXPECT_EQ(s.prepares[0]["timing_sets"], 0);
  EXPECT_EQ(s.prepares[1]["trials"].size(), 2u);
  EXPECT_EQ(s.prepares[1]["timing_sets"], 4);
  EXPECT_EQ(s.runner_calls, 2);
  EXPECT_EQ(r->checks.size(), 5u);
}

TEST_F(JudgeTest, WrongOutputsDuringTimingFailTheKernel) {
  Scenario s;
  s.runner_result = finished(2.0, 2.02);
  s.timing_check = {{"pass", false}, {"reason", "unwritten"}};
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::unwritten);
  EXPECT_NE(r->reason.find("timed runs"), std::string::npos) << r->reason;
}

TEST(JudgeBatching, TrialsPerBatchLeavesRoomForTimingParamsAndWorkspace) {
  nlohmann::json m = {{"bytes_per_trial", 10}, {"bytes_per_timing_set", 5}, {"bytes_params", 4},
                      {"check_workspace_bytes", 6}, {"device_free_bytes", 1000}};
  EXPECT_EQ(trials_per_batch(m, 4), (800 - 4 - 6 - 20) / 10);
  m["device_free_bytes"] = 10;
  EXPECT_EQ(trials_per_batch(m, 4), 1);  // never zero: the worker says clearly when one does not fit
  EXPECT_GT(trials_per_batch(nlohmann::json::object(), 4), 1000);  // no estimate: one batch
}

TEST(JudgeBatching, RobustnessScaleKeepsHalfPrecisionFinite) {
  EXPECT_DOUBLE_EQ(robustness_scale("float32"), 100.0);
  EXPECT_DOUBLE_EQ(robustness_scale("bfloat16"), 100.0);
  // A K=4096 fp16 GEMM of signed inputs sums ~sqrt(K) terms of size scale^2: must stay far below 65504.
  EXPECT_GT(robustness_scale("float16"), 1.0);
  EXPECT_LT(robustness_scale("float16") * robustness_scale("float16") * 64, 65504.0 / 8);
}

TEST_F(JudgeTest, ProfilingRunReplaysTheTimingInputsWithoutChecks) {
  Scenario s;
  s.runner_result = finished(2.0, 2.02);
  auto r = evaluate(s);
  ASSERT_TRUE(r.ok() && r->passed());
  auto inv = judge_->profiling_run("problem.py", "/fake/kernel.so", 3);
  ASSERT_TRUE(inv.ok()) << inv.error().message;
  EXPECT_EQ(inv->argv, (std::vector<std::string>{"/fake/cutegen-runner", "--job", inv->job.string(), "--result",
                                                  inv->result.string()}));
  auto text = read_file(inv->job);
  ASSERT_TRUE(text.ok());
  auto j = nlohmann::json::parse(*text);
  EXPECT_EQ(j["library"], "/fake/kernel.so");
  EXPECT_TRUE(j["trials"].empty());
  EXPECT_EQ(j["timing"]["runs"], 3);
  EXPECT_EQ(j["timing"]["warmup"], 0);
  EXPECT_EQ(j["timing"]["flush_bytes"], 0);
  auto job = parse_runner_job(j);
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->timing_sets.size(), static_cast<size_t>(EvalOptions{}.timing_sets));  // all of the last prepare
  EXPECT_EQ(job->runs, 3);
  EXPECT_FALSE(job->reuse_check);  // its extra calls would be profiled as launches
}

TEST_F(JudgeTest, ProfilingWithNothingPreparedLoadsTheProblemAndPreparesTimingInputs) {
  // As after a resumed run, whose evaluations were all replayed: no prepare in this process.
  compiler_.outcome = CompileOutcome{};
  compiler_.outcome.verdict = CompileVerdict::compile_error;
  Scenario s;
  auto r = evaluate(s);  // fails to compile: never reaches the worker
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(s.prepares.empty());
  auto inv = judge_->profiling_run("problem.py", "/fake/kernel.so", 2);
  ASSERT_TRUE(inv.ok()) << inv.error().message;
  ASSERT_EQ(s.prepares.size(), 1u);
  EXPECT_TRUE(s.prepares[0]["trials"].empty());
  EXPECT_EQ(s.prepares[0]["timing_sets"], EvalOptions{}.timing_sets);
  auto job = parse_runner_job(nlohmann::json::parse(*read_file(inv->job)));
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->timing_sets.size(), static_cast<size_t>(EvalOptions{}.timing_sets));
}

TEST(JudgeProfiling, WithNothingPreparedAWorkerFailureIsTheError) {
  FakeCompiler compiler;
  FakeReferenceWorker worker([](const std::string&, const nlohmann::json&) -> Result<nlohmann::json> {
    return Error{"problem.py: get_inputs() is missing"};
  });
  FakeProcessRunner runner([](const ProcessSpec&) -> Result<ProcessResult> { return Error{"x"}; });
  Judge judge(compiler, worker, runner, EvalOptions{});
  auto inv = judge.profiling_run("problem.py", "/fake/kernel.so", 2);
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.error().message, "problem.py: get_inputs() is missing");
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
