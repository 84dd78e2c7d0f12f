// The evaluation record: its JSON (one layout for the worker's answers, the run log, eval.json and
// --json) reads back what it wrote, rejects what it cannot type with the field's name, and derives
// speedups and SOL the one way every consumer sees them.
#include "common/evaluation.h"

#include <gtest/gtest.h>

#include <type_traits>

#include "common/problem_info.h"
#include "common/step_record.h"

namespace cutegen {
namespace {

// The worker's load answer for problems/layernorm.py (docs/worker-protocol.md).
nlohmann::json layernorm_load_answer() {
  return nlohmann::json::parse(R"J({"name": "layernorm",
    "inputs": [{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [4096, 8192]}],
    "params": [{"name": "norm.weight", "kind": "tensor", "dtype": "float32", "shape": [8192], "buffer": false},
               {"name": "norm.bias", "kind": "tensor", "dtype": "float32", "shape": [8192], "buffer": false},
               {"name": "gain", "kind": "tensor", "dtype": "float32", "shape": [8192], "buffer": true}],
    "outputs": [{"kind": "tensor", "dtype": "float32", "shape": [4096, 8192]}],
    "init_inputs": [{"name": "hidden", "kind": "scalar", "dtype": "int64", "value": 8192},
                    {"name": "eps", "kind": "scalar", "dtype": "float64", "value": 1e-05, "default": true},
                    {"name": "shape", "kind": "other", "value": "(64, 256)"}],
    "aten_ops": ["aten::native_layer_norm", "aten::mul"], "workload_class": "reduction",
    "flops": 100663296, "min_bytes": 268533760, "dtype": "float32", "reference_dtype": "float64",
    "gpu": "NVIDIA H200", "torch_version": "2.11.0", "memory": {"slot_bytes": 1}})J");
}

// The worker's `generalization` record for a kernel verified at its own shape and a smaller one, that refused
// a larger one (docs/worker-protocol.md); `changed` and `runner` are for people and stay untyped.
nlohmann::json generalization_answer() {
  return nlohmann::json::parse(R"J({"asked": 2, "varied": ["rows"], "notes": [], "seconds": 1.5,
    "trials": [{"kind": "smaller", "config": {"rows": 1023}, "changed": "rows=1023", "inputs": [[1023, 8192], null],
                "outputs": [[1023, 8192]], "outcome": "pass", "verdict": "pass", "reason": "", "seconds": 0.7,
                "runner": {"end": "exit code 0"}},
               {"kind": "larger", "config": {"rows": 4099}, "changed": "rows=4099", "inputs": [[4099, 8192], null],
                "outputs": [[4099, 8192]], "outcome": "refused", "verdict": "kernel_error",
                "reason": "cutegen_forward returned 1001 (CUTEGEN_ERROR_UNSUPPORTED)", "seconds": 0.6}],
    "verified": [{"config": {"rows": 4096}, "inputs": [[4096, 8192], null], "outputs": [[4096, 8192]]},
                 {"config": {"rows": 1023}, "inputs": [[1023, 8192], null], "outputs": [[1023, 8192]]}]})J");
}

Evaluation passing() {
  Evaluation e;
  e.precision = Precision::tf32;
  e.problem = *ProblemFacts::from_json(layernorm_load_answer());
  e.time = CandidateTime{.stats = {.median_ms = 0.5, .iqr_ms = 0.01, .min_ms = 0.49, .max_ms = 0.6, .runs = 100},
                         .slower_kind = "signed",
                         .per_kind = {{"signed", {.median_ms = 0.5}}, {"problem", {.median_ms = 0.48}}},
                         .overhead_ms = 0.07,
                         .event_median_ms = 0.42,
                         .span_median_ms = 0.46};
  e.baselines.eager = BaselineTime{TimeStats{.median_ms = 1.0, .runs = 100}, ""};
  e.baselines.compile = BaselineTime{std::nullopt, "torch.compile failed: no triton"};
  e.floor = Floor{.memory_ms = 0.0625, .floor_ms = 0.0625, .bound = "memory", .rate = "fp32", .hbm_gbps = 4300};
  e.library = "/cache/ab/kernel.so";
  e.compile_key = "abcdef";
  e.details = {{"seeds", {1, 2, 3}}, {"checks", nlohmann::json::array()}};
  e.generalization = *Generalization::from_json(generalization_answer());
  return e;
}

}  // namespace

TEST(Evaluation, TheWorkersLoadAnswerIsTyped) {
  auto f = ProblemFacts::from_json(layernorm_load_answer());
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->workload_class, WorkloadClass::reduction);
  ASSERT_EQ(f->params.size(), 3u);
  EXPECT_TRUE(f->params[2].buffer);
  EXPECT_EQ(f->params[2].shape, (std::vector<int64_t>{8192}));
  ASSERT_EQ(f->init_inputs.size(), 3u);
  EXPECT_EQ(f->init_inputs[0].name, "hidden");
  EXPECT_EQ(f->init_inputs[0].kind, ValueFacts::Kind::scalar);
  EXPECT_EQ(f->init_inputs[0].value, "8192");
  EXPECT_FALSE(f->init_inputs[0].is_default);
  EXPECT_TRUE(f->init_inputs[1].is_default);
  EXPECT_EQ(f->init_inputs[1].value, "1e-05");
  EXPECT_EQ(f->init_inputs[2].kind, ValueFacts::Kind::other);
  EXPECT_EQ(f->init_inputs[2].value, "(64, 256)");
  EXPECT_EQ(f->min_bytes, 268533760u);
  EXPECT_EQ(f->aten_ops.size(), 2u);

  auto bad = layernorm_load_answer();
  bad["workload_class"] = "quantum";
  EXPECT_NE(ProblemFacts::from_json(bad).error().message.find("unknown workload class \"quantum\""), std::string::npos);
  bad = layernorm_load_answer();
  bad["inputs"][0].erase("shape");
  EXPECT_NE(ProblemFacts::from_json(bad).error().message.find("tensor 'x' has no shape"), std::string::npos);
  bad = layernorm_load_answer();
  bad["min_bytes"] = "lots";
  EXPECT_NE(ProblemFacts::from_json(bad).error().message.find("\"min_bytes\" is string where a number was expected"),
            std::string::npos);
}

TEST(Evaluation, JsonRoundTripKeepsEveryTypedField) {
  const Evaluation e = passing();
  auto j = e.to_json();
  auto back = Evaluation::from_json(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->verdict, Verdict::pass);
  EXPECT_EQ(back->precision, Precision::tf32);
  EXPECT_EQ(back->problem->to_json(), e.problem->to_json());
  EXPECT_EQ(back->time->to_json(), e.time->to_json());
  EXPECT_EQ(back->baselines.to_json(), e.baselines.to_json());
  EXPECT_EQ(back->floor->to_json(), e.floor->to_json());
  EXPECT_EQ(back->library, e.library);
  EXPECT_EQ(back->compile_key, e.compile_key);
  EXPECT_EQ(back->details, e.details);
  EXPECT_EQ(back->generalization->to_json(), e.generalization->to_json());
  EXPECT_EQ(back->to_json(), j);
}

TEST(Evaluation, TheVerifiedShapesAreTypedForExports) {
  auto g = Generalization::from_json(generalization_answer());
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->asked, 2);
  EXPECT_EQ(g->varied, std::vector<std::string>{"rows"});
  ASSERT_EQ(g->verified.size(), 2u);  // the problem's own first, then the smaller shape that passed
  EXPECT_EQ(g->verified[0].config.at("rows"), 4096);
  EXPECT_EQ(g->verified[1].inputs[0], (std::vector<int64_t>{1023, 8192}));
  EXPECT_FALSE(g->verified[1].inputs[1].has_value()) << "a Python scalar argument has no shape";
  EXPECT_EQ(g->verified[1].outputs, (std::vector<std::vector<int64_t>>{{1023, 8192}}));
  ASSERT_EQ(g->trials.size(), 2u);
  EXPECT_EQ(g->trials[1].outcome, ShapeOutcome::refused);
  EXPECT_EQ(g->trials[1].verdict, Verdict::kernel_error);
  EXPECT_EQ(g->refused(), 1);
  EXPECT_EQ(g->to_json()["verified"][1]["inputs"], nlohmann::json::parse("[[1023, 8192], null]"));
  // A record before the trials has none; one that names what cannot be typed is an error naming the field.
  auto j = passing().to_json();
  j.erase("generalization");
  EXPECT_FALSE(Evaluation::from_json(j)->generalization);
  j = passing().to_json();
  j["generalization"]["trials"][0]["outcome"] = "maybe";
  EXPECT_NE(Evaluation::from_json(j).error().message.find("outcome is \"maybe\""), std::string::npos);
  j = passing().to_json();
  j["generalization"]["verified"][0]["inputs"] = nlohmann::json::parse("[[4096, 1.5]]");
  EXPECT_NE(Evaluation::from_json(j).error().message.find("not an integer"), std::string::npos);
  j = passing().to_json();
  j["generalization"]["verified"][0]["config"]["rows"] = "many";
  EXPECT_NE(Evaluation::from_json(j).error().message.find("\"config\""), std::string::npos);
}

TEST(Evaluation, TheLayoutIsTheOneScriptsRead) {
  // scripts/gpu_suite.py and the judge's --json readers use these keys.
  auto j = passing().to_json();
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_EQ(j["time"]["median_ms"], 0.5);
  EXPECT_EQ(j["time"]["event_median_ms"], 0.42);
  EXPECT_EQ(j["time"]["span_median_ms"], 0.46);
  EXPECT_EQ(j["time"]["slower_kind"], "signed");
  EXPECT_EQ(j["speedup"]["eager"], 2.0);
  EXPECT_FALSE(j["speedup"].contains("compile"));  // torch.compile failed: no speedup over it
  EXPECT_EQ(j["baselines"]["compile"]["error"], "torch.compile failed: no triton");
  EXPECT_DOUBLE_EQ(j["sol_pct"].get<double>(), 12.5);
  EXPECT_EQ(j["roofline"]["floor_ms"], 0.0625);
  EXPECT_EQ(j["seeds"], nlohmann::json({1, 2, 3}));  // details sit beside the typed fields
}

TEST(Evaluation, DerivedNumbersFollowTheirRules) {
  Evaluation e = passing();
  EXPECT_EQ(e.median_ms(), 0.5);
  EXPECT_EQ(e.noise_ms(), 0.01);
  EXPECT_EQ(e.speedup_eager(), 2.0);
  EXPECT_FALSE(e.speedup_compile());
  EXPECT_DOUBLE_EQ(*e.sol_pct(), 12.5);
  e.roofline_warning = "below the physical floor";
  EXPECT_FALSE(e.sol_pct()) << "a time below the floor is never a SOL record";
  Evaluation failed{.verdict = Verdict::mismatch, .reason = "trial 2 failed"};
  EXPECT_FALSE(failed.passed());
  EXPECT_EQ(failed.median_ms(), 0);
  EXPECT_FALSE(failed.speedup_eager());
  auto j = failed.to_json();
  EXPECT_FALSE(j.contains("time"));
  EXPECT_FALSE(j.contains("problem"));
  EXPECT_EQ(Evaluation::from_json(j)->verdict, Verdict::mismatch);
}

TEST(Evaluation, TheVerdictLineIsOneLineWithTheReasonWhenThereIsOne) {
  Evaluation failed{.verdict = Verdict::mismatch, .reason = "trial 3 (scaled inputs) failed: mismatch\nat [0, 1]"};
  EXPECT_EQ(failed.verdict_line(), "mismatch: trial 3 (scaled inputs) failed: mismatch");
  EXPECT_EQ(Evaluation{.verdict = Verdict::timeout}.verdict_line(), "timeout");
}

TEST(Evaluation, WhatCannotBeTypedIsAnErrorNamingTheField) {
  auto j = passing().to_json();
  j["verdict"] = "maybe";
  EXPECT_NE(Evaluation::from_json(j).error().message.find("unknown verdict \"maybe\""), std::string::npos);
  j = passing().to_json();
  j.erase("verdict");
  EXPECT_NE(Evaluation::from_json(j).error().message.find("\"verdict\" is missing"), std::string::npos);
  j = passing().to_json();
  j.erase("time");
  EXPECT_NE(Evaluation::from_json(j).error().message.find("passed a kernel without a time"), std::string::npos);
  j = passing().to_json();
  j["precision"] = "fp8";
  EXPECT_NE(Evaluation::from_json(j).error().message.find("unknown precision policy \"fp8\""), std::string::npos);
  j = passing().to_json();
  j["roofline"] = 3;
  EXPECT_NE(Evaluation::from_json(j).error().message.find("\"roofline\" is number where an object was expected"),
            std::string::npos);
  EXPECT_FALSE(Evaluation::from_json(nlohmann::json::array()).ok());
}

TEST(Evaluation, EnumsRoundTripAndRejectUnknownWords) {
  for (int v = static_cast<int>(Verdict::pass); v <= static_cast<int>(kLastVerdict); ++v)
    EXPECT_EQ(parse_verdict(to_string(static_cast<Verdict>(v))), static_cast<Verdict>(v));
  EXPECT_FALSE(parse_verdict("pass "));
  for (Precision p : {Precision::strict, Precision::tf32, Precision::bf16}) EXPECT_EQ(*parse_precision(to_string(p)), p);
  EXPECT_FALSE(parse_precision("fp16").ok());
  for (WorkloadClass c : all_workload_classes()) EXPECT_EQ(*parse_workload_class(to_string(c)), c);
}

// JSON never turns into the record by itself: a consumer that takes the record cannot be handed an
// object read by key.
static_assert(!std::is_convertible_v<nlohmann::json, Evaluation>);
static_assert(!std::is_convertible_v<nlohmann::json, ProblemFacts>);

TEST(StepRecord, TheRunLogKeepsTheWordsScriptsRead) {
  StepRecord accepted{.n = 1, .idea = "vectorise", .outcome = StepOutcome::accepted, .time_ms = 0.5, .speedup = 2.0};
  auto j = accepted.to_json();
  EXPECT_EQ(j["outcome"], "accepted");  // scripts/gpu_demo.py
  EXPECT_EQ(j["step"], 1);
  EXPECT_EQ(j["kind"], "optimization");
  StepRecord undone{.n = 2, .outcome = StepOutcome::undone, .verdict = Verdict::mismatch, .evidence = "12 bad"};
  j = undone.to_json();
  EXPECT_EQ(j["outcome"], "undone");
  EXPECT_EQ(j["verdict"], "mismatch");
  EXPECT_EQ(j["evidence"], "12 bad");
  EXPECT_EQ(to_string(StepOutcome::slower), "slower");
  EXPECT_EQ(to_string(StepOutcome::declined), "declined");
}

TEST(StepRecord, ReadsBackWhatItWrote) {
  StepRecord undone{.kind = StepKind::optimization, .n = 3, .idea = "streaming stores", .outcome = StepOutcome::undone,
                    .verdict = Verdict::mismatch, .note = "12 elements differ", .evidence = "index 7: 1 vs 0"};
  auto back = StepRecord::from_json(undone.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->n, 3);
  EXPECT_EQ(back->idea, "streaming stores");
  EXPECT_EQ(back->outcome, StepOutcome::undone);
  EXPECT_EQ(back->verdict, Verdict::mismatch);
  EXPECT_EQ(back->note, "12 elements differ");
  EXPECT_EQ(back->evidence, "index 7: 1 vs 0");
  EXPECT_FALSE(back->time_ms);
  StepRecord accepted{.n = 1, .idea = "vectorise", .outcome = StepOutcome::accepted, .time_ms = 0.5, .speedup = 2.0};
  back = StepRecord::from_json(accepted.to_json());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->time_ms, 0.5);
  EXPECT_EQ(back->speedup, 2.0);
  EXPECT_FALSE(back->verdict);
}

TEST(StepRecord, ABadFieldIsAnErrorNamingIt) {
  auto j = StepRecord{.n = 1}.to_json();
  j["outcome"] = "faster";
  auto r = StepRecord::from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("\"faster\""), std::string::npos) << r.error().message;
  j = StepRecord{.n = 1}.to_json();
  j["time_ms"] = "fast";
  r = StepRecord::from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("\"time_ms\""), std::string::npos) << r.error().message;
}

}  // namespace cutegen

// Runs the worker left out of a baseline for a CPU wait travel with it (and are absent when none were).
TEST(Evaluation, DisturbedBaselineRunsAreTypedAndOnlyWrittenWhenThereAreAny) {
  auto b = cutegen::Baselines::from_json(nlohmann::json::parse(R"({"cached": false,
      "eager": {"median_ms": 3.0, "iqr_ms": 0.01, "min_ms": 2.9, "max_ms": 3.2, "runs": 97, "disturbed_runs": 3},
      "compile": {"median_ms": 2.5, "iqr_ms": 0.01, "min_ms": 2.4, "max_ms": 2.6, "runs": 100}})"));
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->eager->stats->disturbed_runs, 3);
  EXPECT_EQ(b->compile->stats->disturbed_runs, 0);
  auto j = b->to_json();
  EXPECT_EQ(j["eager"]["disturbed_runs"], 3);
  EXPECT_FALSE(j["compile"].contains("disturbed_runs"));
  auto bad = cutegen::Baselines::from_json(nlohmann::json::parse(
      R"({"eager": {"median_ms": 3.0, "disturbed_runs": "three"}})"));
  EXPECT_FALSE(bad.ok());
}

// What measuring each baseline cost travels with it (cutegen bench holds the GPU for it), and a
// description keeps its own time and phases through the run log; older records have neither.
TEST(Evaluation, BaselineSecondsAndTheDescriptionsTimeRoundTrip) {
  auto b = cutegen::Baselines::from_json(nlohmann::json::parse(R"({"cached": false,
      "eager": {"median_ms": 3.0, "iqr_ms": 0.01, "min_ms": 2.9, "max_ms": 3.2, "runs": 30},
      "compile": {"median_ms": 2.5, "iqr_ms": 0.01, "min_ms": 2.4, "max_ms": 2.6, "runs": 30},
      "seconds": {"eager": 1.25, "compile": 6.5}})"));
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_DOUBLE_EQ(b->seconds.at("compile"), 6.5);
  EXPECT_EQ(b->to_json()["seconds"]["eager"], 1.25);
  EXPECT_FALSE(cutegen::Baselines::from_json(nlohmann::json::parse(R"({"seconds": {"eager": "slow"}})")).ok());
  EXPECT_FALSE(cutegen::Baselines::from_json(nlohmann::json::parse(R"({"seconds": [1]})")).ok());

  cutegen::ProblemInfo p;
  p.source = "class Model: pass";
  p.facts.name = "relu";
  p.baselines = *b;
  EXPECT_EQ(p.timing_summary(), "") << "an untimed description says nothing";
  p.seconds = 9.04;
  p.phase_seconds = {{"load", 1.2}, {"baselines", 7.75}, {"roofline", 0.04}};
  EXPECT_EQ(p.timing_summary(), "described in 9.0 s: load 1.2, baselines 7.8 (compile 6.5, eager 1.2), roofline 0.0");
  auto back = cutegen::ProblemInfo::from_json(p.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_DOUBLE_EQ(back->seconds, 9.04);
  EXPECT_EQ(back->phase_seconds, p.phase_seconds);
  EXPECT_EQ(back->timing_summary(), p.timing_summary());
  auto old = p.to_json();
  old.erase("seconds");
  old.erase("phase_seconds");
  auto recorded_before = cutegen::ProblemInfo::from_json(old);
  ASSERT_TRUE(recorded_before.ok()) << recorded_before.error().message;
  EXPECT_EQ(recorded_before->seconds, 0);
  auto bad = p.to_json();
  bad["phase_seconds"]["load"] = "fast";
  ASSERT_FALSE(cutegen::ProblemInfo::from_json(bad).ok());
  EXPECT_NE(cutegen::ProblemInfo::from_json(bad).error().message.find("phase_seconds.load"), std::string::npos);
}
