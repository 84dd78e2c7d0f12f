#include "runlog/run_events.h"

#include <gtest/gtest.h>

#include "runlog/run_log.h"

using namespace cutegen;
using json = nlohmann::json;

namespace {

Evaluation passing(double ms) {
  Evaluation e;
  e.verdict = Verdict::pass;
  e.time = CandidateTime{.stats = {.median_ms = ms, .iqr_ms = 0.01}};
  return e;
}

// One event of every kind, with the fields that matter set to something other than their defaults.
std::vector<RunEvent> one_of_each() {
  ProblemInfo problem;
  problem.source = "class Model: ...";
  problem.facts.name = "relu";
  problem.baselines.eager = BaselineTime{TimeStats{.median_ms = 2.0}, ""};
  problem.floor = Floor{.floor_ms = 0.5, .bound = "memory"};
  LlmResponse response;
  response.text = "OPTIMIZATION: vectorise";
  response.usage.input_tokens = 1200;
  response.usage.cached_input_tokens = 800;
  response.usage.output_tokens = 300;
  response.finish = FinishReason::length;
  response.model = "m";
  response.latency_s = 2.5;
  Evaluation failed;
  failed.verdict = Verdict::mismatch;
  failed.reason = "max error 3.2 at [7]";
  StepRecord step{.kind = StepKind::optimization, .n = 3, .idea = "vectorise", .outcome = StepOutcome::slower,
                  .time_ms = 0.9, .speedup = 0.98, .note = "needed more than the noise"};
  step.candidates = {
      {.n = 1, .item = "1. fuse", .idea = "fuse", .outcome = CandidateOutcome::lost, .screened_ms = 0.95,
       .note = "slower in screening than candidate 2"},
      {.n = 2, .item = "2. vectorise", .idea = "vectorise", .outcome = CandidateOutcome::chosen, .screened_ms = 0.9},
      {.n = 3, .item = "3. unroll", .idea = "unroll", .outcome = CandidateOutcome::failed,
       .verdict = Verdict::compile_error, .note = "12 errors"},
      {.n = 4, .item = "4. grid", .outcome = CandidateOutcome::declined, .note = "at the floor"},
  };
  Evaluation compile_failure;
  compile_failure.verdict = Verdict::compile_error;
  compile_failure.reason = "12 errors";
  StepRecord tuning{.kind = StepKind::tuning, .n = 3, .idea = "tuned the knobs (4 variants)",
                    .outcome = StepOutcome::accepted};
  return {
      ProblemEvent{"describe:abc", problem},
      LlmEvent{.key = "k1", .purpose = LlmPurpose::optimize, .candidate = 2, .response = response, .cost_usd = 0.0125,
               .capped_by_budget = true, .max_tokens = 4096},
      EvalEvent{"sha1", {.stage = AttemptStage::step, .step = 3, .candidate = 2, .repair = 1}, failed},
      TuneEvent{.key = "sha2", .after_step = 3, .summary = "chose TILE=256", .markdown = "| TILE |", .source = "tuned",
                .default_kept = false, .table = json{{"variants", json::array({json{{"verdict", "pass"}}})}},
                .evaluation = passing(0.7)},
      ProfileEvent{"sha3", "memory-bound, dram 91%"},
      CompileEvent{"sha4", {.stage = AttemptStage::step, .step = 3, .candidate = 3}, compile_failure},
      CompileEvent{"sha5", {.stage = AttemptStage::step, .step = 3, .candidate = 2}, std::nullopt},
      ScreenEvent{"sha5", {.stage = AttemptStage::step, .step = 3, .candidate = 2}, passing(0.9)},
      ExampleDecision{"library/elementwise.cu"},
      SeedDecision{.passed = false, .verdict = Verdict::compile_error},
      SynthesisDecision{.attempt = 2, .correct = false, .summary = "mismatch after 4 repair rounds"},
      StepDecision{step},
      StepDecision{tuning},
      StopDecision{"declined", "the kernel is at the floor"},
  };
}

}  // namespace

TEST(RunEvents, EveryKindRoundTripsThroughItsLine) {
  for (const RunEvent& e : one_of_each()) {
    const json line = run_log_line(e, 1700000000.5);
    EXPECT_EQ(line["v"], kRunLogFormat);
    auto back = run_event_from_json(json::parse(line.dump()), kRunLogFormat);
    ASSERT_TRUE(back.ok()) << line.dump() << ": " << back.error().message;
    EXPECT_EQ(back->index(), e.index()) << line.dump();
    // The typed event writes the same line again: nothing was lost or changed on the way.
    EXPECT_EQ(to_json(*back), to_json(e)) << line.dump();
    EXPECT_EQ(event_key(*back), event_key(e));
    EXPECT_EQ(decision_outcome(*back), decision_outcome(e));
  }
}

TEST(RunEvents, TypedFieldsSurviveTheRoundTrip) {
  auto events = one_of_each();
  auto llm = std::get<LlmEvent>(*run_event_from_json(to_json(events[1]), kRunLogFormat));
  EXPECT_EQ(llm.purpose, LlmPurpose::optimize);
  EXPECT_EQ(llm.candidate, 2);
  EXPECT_EQ(llm.response.usage.cached_input_tokens, 800);
  EXPECT_EQ(llm.response.finish, FinishReason::length);
  EXPECT_EQ(llm.max_tokens, 4096);
  EXPECT_TRUE(llm.capped_by_budget);
  auto eval = std::get<EvalEvent>(*run_event_from_json(to_json(events[2]), kRunLogFormat));
  EXPECT_EQ(eval.label.text(), "step3-c2-repair1");
  EXPECT_EQ(eval.evaluation.verdict, Verdict::mismatch);
  auto tune = std::get<TuneEvent>(*run_event_from_json(to_json(events[3]), kRunLogFormat));
  EXPECT_EQ(tune.after_step, 3);
  EXPECT_EQ(tune.variants_screened(), 1);
  ASSERT_TRUE(tune.evaluation);
  EXPECT_DOUBLE_EQ(tune.evaluation->median_ms(), 0.7);
  auto compiled = std::get<CompileEvent>(*run_event_from_json(to_json(events[5]), kRunLogFormat));
  EXPECT_EQ(compiled.label.text(), "step3-c3");
  ASSERT_TRUE(compiled.failure);
  EXPECT_EQ(compiled.failure->verdict, Verdict::compile_error);
  EXPECT_FALSE(std::get<CompileEvent>(*run_event_from_json(to_json(events[6]), kRunLogFormat)).failure);
  auto step = std::get<StepDecision>(*run_event_from_json(to_json(events[11]), kRunLogFormat));
  ASSERT_EQ(step.record.candidates.size(), 4u);
  EXPECT_EQ(step.record.candidates[2].verdict, Verdict::compile_error);
  EXPECT_EQ(step.record.candidates[0].screened_ms, 0.95);
  EXPECT_EQ(step.record.candidates[3].outcome, CandidateOutcome::declined);
  EXPECT_EQ(event_key(events[11]), "step3");
  EXPECT_EQ(event_key(events[12]), "tune3");
  EXPECT_EQ(event_key(events[10]), "synthesis2");
  EXPECT_EQ(decision_outcome(events[11]), "slower");
  EXPECT_EQ(decision_outcome(events[13]), "declined");
}

// Format 2 held the labels only in strings; the same events read back from them.
TEST(RunEvents, Format2LinesReadIntoTheSameEvents) {
  auto eval = run_event_from_json(
      json{{"type", "eval"}, {"key", "s"}, {"what", "step3-repair1"}, {"evaluation", passing(1.0).to_json()}}, 2);
  ASSERT_TRUE(eval.ok()) << eval.error().message;
  EXPECT_EQ(std::get<EvalEvent>(*eval).label, (AttemptLabel{.stage = AttemptStage::step, .step = 3, .repair = 1}));
  auto synthesis = run_event_from_json(json{{"type", "decision"}, {"key", "synthesis2"}, {"outcome", "failed"},
                                            {"summary", "no usable kernel"}},
                                       2);
  ASSERT_TRUE(synthesis.ok()) << synthesis.error().message;
  EXPECT_EQ(std::get<SynthesisDecision>(*synthesis).attempt, 2);
  EXPECT_FALSE(std::get<SynthesisDecision>(*synthesis).correct);
  auto tune = run_event_from_json(json{{"type", "tune"}, {"key", "s"}, {"what", "tune4"},
                                       {"tune", {{"summary", ""}, {"markdown", ""}, {"source", "x"},
                                                 {"default_kept", true}, {"table", json::object()}}}},
                                  2);
  ASSERT_TRUE(tune.ok()) << tune.error().message;
  EXPECT_EQ(std::get<TuneEvent>(*tune).after_step, 4);
  // Format 3 wants the typed fields, not the strings.
  auto no_attempt = run_event_from_json(
      json{{"type", "eval"}, {"key", "s"}, {"what", "step3"}, {"evaluation", passing(1.0).to_json()}}, 3);
  ASSERT_FALSE(no_attempt.ok());
  EXPECT_NE(no_attempt.error().message.find("\"attempt\" is missing"), std::string::npos) << no_attempt.error().message;
}

TEST(RunEvents, AWrongFieldIsNamed) {
  struct Case {
    json line;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{{"type", "llm"}, {"key", "k"}, {"what", "optimize"}, {"response", "x"}}, "\"response\" is string"},
      {{{"type", "llm"}, {"key", "k"}, {"what", "ponder"}, {"response", json::object()}}, "purpose \"ponder\" is unknown"},
      {{{"type", "decision"}, {"key", "stop"}, {"decision", "stop"}}, "\"reason\" is missing"},
      {{{"type", "decision"}, {"key", "step3"}, {"decision", "step"}, {"step", 4}, {"kind", "optimization"},
        {"idea", ""}, {"outcome", "accepted"}},
       "does not name its step"},
      {{{"type", "wish"}, {"key", "k"}}, "type \"wish\" is unknown"},
  };
  for (const auto& c : cases) {
    auto r = run_event_from_json(c.line, kRunLogFormat);
    ASSERT_FALSE(r.ok()) << c.line.dump();
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
  }
}
