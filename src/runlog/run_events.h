#pragma once
// The run log's events, typed. The loop records one event for each outside answer (the problem's
// description, an LLM answer, an evaluation, a tuning, a profile) and one for each decision it makes;
// `--resume` replays them (agent/journal.h) and the reports read them (run_history.h). JSON exists
// only at the file's edge: to_json writes an event's line, run_event_from_json reads it back.
//
// Format 3 (kRunLogFormat) states every label's parts as fields (an evaluation's stage, step,
// candidate and repair round; a decision's kind); format 2, written before it, held them in strings
// such as "step3-repair1" and "synthesis2", which run_event_from_json still reads, so old runs can be
// reported and resumed. Any other format is refused.
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "common/evaluation.h"
#include "common/problem_info.h"
#include "common/result.h"
#include "common/step_record.h"
#include "llm/llm_types.h"
#include "runlog/attempt_label.h"

namespace cutegen {

inline constexpr int kRunLogFormat = 3;        // what this cutegen writes
inline constexpr int kOldestRunLogFormat = 2;  // the oldest it reads

// What each LLM request of the loop asks for.
enum class LlmPurpose { synthesize, restart, diagnose, repair, optimize };
std::string_view to_string(LlmPurpose p);
std::optional<LlmPurpose> parse_llm_purpose(std::string_view word);

// --- outside answers: each has the key the journal matches it by ---------------------------------

struct ProblemEvent {  // the judge's description of the problem (key: "describe:" + its fingerprint)
  std::string key;
  ProblemInfo problem;
};

struct LlmEvent {  // one LLM answer (key: the hash of the request's messages)
  std::string key;
  LlmPurpose purpose = LlmPurpose::synthesize;
  int candidate = 0;  // optimize in a step with several candidates: which one (1-based); else 0
  LlmResponse response;
  double cost_usd = 0;
  bool capped_by_budget = false;   // a budget lowered the request's max_tokens
  std::optional<int> max_tokens;   // what the request was sent with
};

struct EvalEvent {  // the judge's full evaluation of a kernel (key: the source's sha256)
  std::string key;
  AttemptLabel label;
  Evaluation evaluation;
};

struct TuneEvent {  // one tuning of the best kernel's knobs (key: the tuned source's sha256)
  std::string key;
  int after_step = 0;          // the step the tuning followed (0: the first kernel)
  std::string summary;         // one line
  std::string markdown;        // the table as tune.md shows it
  std::string source;          // the chosen variant baked in (the tuned source when the defaults stay)
  bool default_kept = true;
  nlohmann::json table;        // the tuner's own table (tune/tuner.h, TuneResult::to_json), kept as it wrote it
  std::optional<Evaluation> evaluation;  // the chosen variant judged in full
  int variants_screened() const;         // rows of the table the judge screened
};

struct ProfileEvent {  // a profile summary of the best kernel (key: its source's sha256)
  std::string key;
  std::string summary;
};

// A step with several candidates (--candidates) compiles them together, then screens those that
// compiled (format 3 only).
struct CompileEvent {  // one candidate compiled alone (key: its source's sha256)
  std::string key;
  AttemptLabel label;
  std::optional<Evaluation> failure;  // how it failed (compile_error or rejected); absent: it compiled cleanly
};
struct ScreenEvent {  // one candidate under the judge's screening settings (key: its source's sha256)
  std::string key;
  AttemptLabel label;
  Evaluation evaluation;  // screened: ranks the candidates, never reported as a result
};

// --- the loop's decisions: a replay recomputes them and must reach the same ----------------------

struct ExampleDecision {  // which example kernel the first prompts show ("" for none)
  std::string file;
};
struct SeedDecision {  // --start seed: whether the seed passed the judge
  bool passed = false;
  std::optional<Verdict> verdict;  // how it failed
};
struct SynthesisDecision {  // one synthesis attempt (1-based), correct in the end or not
  int attempt = 1;
  bool correct = false;
  std::string summary;  // failed: how it ended, one line
};
struct StepDecision {  // an optimisation step (record.kind optimization) or a tuning (tuning)
  StepRecord record;
};
struct StopDecision {
  std::string reason;  // steps | plateau | target | declined | budget | truncated | no_correct_kernel | seed | ...
  std::string detail;
};

using RunEvent = std::variant<ProblemEvent, LlmEvent, EvalEvent, TuneEvent, ProfileEvent, CompileEvent, ScreenEvent,
                              ExampleDecision, SeedDecision, SynthesisDecision, StepDecision, StopDecision>;

enum class EventKind { problem, llm, eval, tune, profile, compile, screen, decision };
EventKind kind_of(const RunEvent& e);
std::string_view to_string(EventKind k);  // the line's "type"

// What the journal matches a replayed event by: the answer's key, or the decision's name
// ("example", "seed", "synthesis2", "step3", "tune3", "stop").
std::string event_key(const RunEvent& e);
// What a recomputed decision must reproduce beyond its key (an outcome or a stop reason); "" for
// outside answers and for the example.
std::string decision_outcome(const RunEvent& e);
// One line naming the event, for messages: "eval 3f2a1b… (step3-repair1)".
std::string describe(const RunEvent& e);

// The event's line without the format and time stamps, which the journal adds.
nlohmann::json to_json(const RunEvent& e);
// Reads a line of `format` (kOldestRunLogFormat..kRunLogFormat). Error: what is missing or wrong,
// without the file and line, which the caller adds.
Result<RunEvent> run_event_from_json(const nlohmann::json& j, int format);

}  // namespace cutegen
