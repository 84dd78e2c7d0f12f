#pragma once
// The CuTeGen loop for one task:
//   synthesize -> verify -> (diagnose -> repair)* -> optimisation steps, each one idea, verified with
//   the same repair loop, measured, kept only when it beats the best by more than the noise.
// Every outside answer (LLM, judge, profiler) goes through the journal, so a run killed at any point
// resumes by replaying its log (journal.h).
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/evaluator.h"
#include "agent/journal.h"
#include "agent/profile_policy.h"
#include "agent/profile_source.h"
#include "agent/prompter.h"
#include "runlog/run_events.h"
#include "store/run_files.h"
#include "llm/llm_client.h"
#include "llm/truncation_guard.h"
#include "tune/tuner.h"

namespace cutegen {

struct LoopOptions {
  int max_steps = 8;            // optimisation steps
  // --candidates: proposals per optimisation step, asked at once, each for its own menu item (1..8;
  // kMaxCandidates). 1 is the paper's loop, unchanged. More: they are compiled together, screened, and
  // the fastest correct one is judged in full and kept or rolled back as one proposal would be.
  int candidates = 1;
  int repair_budget = 4;        // diagnose+repair rounds for one candidate
  int max_restarts = 2;         // fresh syntheses after the first one failed
  int answer_retries = 2;       // unusable answers (no code, bad anchors, cut off) fed back per request
  int plateau_steps = 4;        // stop after this many steps in a row without a new best
  std::optional<double> target_sol_pct;  // stop once the best reaches this % of the roofline floor
  double min_gain = 0.02;       // an accepted step must also be this much faster (relative)
  ProfilePolicy profile;
  Budget* task_budget = nullptr;  // this task's own limits (llm.task_budget), on top of the run's
  // --start seed (docs/seed.md): the first kernel, judged before any synthesis. When it passes, the
  // optimisation steps start from it; when it fails, the LLM synthesises as if there were none.
  std::string seed_source;
  std::string seed_pattern;  // what the seed computes: the stop detail of a seed-only run
  // No LLM (`optimize --llm none`): judge the seed and stop, "seed" when it passed, "seed_failed" when
  // not. No LLM call is ever made.
  bool seed_only = false;
  // --tune auto: after each accepted step (and the first correct kernel), a best kernel that declares
  // knobs is tuned (tune/tuner.h) with `tune`'s budget; nullptr: --tune never.
  TuneBackend* tuner = nullptr;
  TuneOptions tune;
};

inline constexpr int kMaxCandidates = 8;

struct Candidate {
  std::string source;
  Evaluation evaluation;
};

enum class LoopPhase { describe, synthesize, repair, optimize, done };
std::string to_string(LoopPhase p);

// Live state for progress displays.
struct LoopStatus {
  LoopPhase phase = LoopPhase::describe;
  int step = 0;
  int max_steps = 0;
  std::optional<double> best_ms, best_speedup_eager, best_sol_pct;
  long long tokens = 0;
  double cost_usd = 0;
  bool replaying = false;
};

struct LoopObserver {
  std::function<void(const LoopStatus&, const std::string& line)> progress;  // a line worth showing
  std::function<Status(const Candidate&)> new_best;                          // e.g. write best/
};

struct LoopResult {
  std::optional<Candidate> best;
  // steps | plateau | target | declined | budget | truncated | no_correct_kernel
  std::string stop_reason;
  std::string stop_detail;   // declined: the LLM's reason
  ProblemInfo problem;       // as described at the start
  std::string example_shown; // the example kernel the synthesis prompt showed ("" for none)
  std::vector<StepRecord> history;
  int syntheses = 0;
  int llm_calls = 0;
  bool started_from_seed = false;  // the seed passed and was the first best kernel
  std::string seed_pattern;          // the seed tried first ("" when none was)
  std::optional<double> seed_ms;     // its median time when it passed: the seed alone, against the final best
  std::optional<Evaluation> failed_seed;  // its evaluation when it failed the judge (seed_failed says why with it)
};

// Where one of the loop's LLM calls sits: its candidate (0: a step with one), and whether the
// truncation rule is asked before it (not inside a batch of candidates, which it is asked once before).
struct CallPlace {
  int candidate = 0;
  bool check_truncation = true;
};

class Loop {
 public:
  Loop(LlmClient& llm, Evaluator& evaluator, Prompter& prompter, ProfileSource* profiler, Journal& journal,
       RunFiles& files, LoopOptions options, LoopObserver observer = {});
  // Error: the tool failed (a stage could not do its job, or the log diverged); a kernel that never
  // becomes correct or a spent budget is a result with its stop_reason.
  Result<LoopResult> run();

 private:
  // The name every candidate is compiled and shown under (tuning variants too).
  static constexpr const char* kKernelName = "kernel.cu";

  struct Answer {
    std::string text;
    bool truncated = false;
  };
  // One request (system + prompt), with `retry` deciding whether the answer is usable; an unusable
  // answer is sent back with the reason, up to answer_retries times. Returns the parsed value or the
  // last reason as `unusable`.
  template <class T>
  struct Asked {
    std::optional<T> value;
    std::string unusable;  // why the last answer could not be used
  };
  template <class T>
  Result<Asked<T>> ask(LlmPurpose purpose, PromptKind kind, const std::string& prompt,
                       const std::function<Result<T>(const Answer&)>& use);
  // The same conversation over any way of calling: `call` answers one request, `say` takes the
  // progress lines (a step's candidates converse on threads of their own and say them afterwards).
  using Caller = std::function<Result<Answer>(const std::vector<Message>&)>;
  template <class T>
  Result<Asked<T>> converse(LlmPurpose purpose, std::vector<Message> messages, const Caller& call,
                            const std::function<Result<T>(const Answer&)>& use,
                            const std::function<void(const std::string&)>& say) const;
  // One call through the journal: the logged answer while replaying, else a real call, logged.
  Result<Answer> call_llm(LlmPurpose purpose, const std::vector<Message>& messages, CallPlace place = {});
  // A real call, not yet logged (thread-safe: it changes nothing of the loop's); commit_live_answer
  // logs it, in the loop's thread.
  Result<LlmCall> call_live(const std::vector<Message>& messages);
  Result<Answer> commit_live_answer(LlmPurpose purpose, int candidate, const std::vector<Message>& messages,
                                    const LlmCall& call);
  // Counts an answer (replayed or live) and writes its prompt and answer under steps/.
  Result<Answer> answered(LlmPurpose purpose, int candidate, const std::vector<Message>& messages,
                          const LlmResponse& response);

  Result<ProblemInfo> describe();
  // `base`: the kernel `source` was edited from ("" for a whole new file); the step directory then
  // records the change as change.diff, for people reading the run.
  Result<Evaluation> evaluate(const std::string& source, const AttemptLabel& label, const std::string& base);
  // How make_correct ended when it could not make the kernel correct.
  struct Unrepaired {
    std::string summary;             // one line
    std::optional<Evaluation> last;  // the failing evaluation it ended with
    bool undone = false;             // a repair turned the kernel back into `origin`: the change failed
  };
  // Makes `source` correct with at most repair_budget diagnose+repair rounds; when it cannot,
  // `failure` says how it ended. `origin` (optimisation steps: the best kernel the change was made to)
  // is never evaluated again: a repair that only undoes the change ends the rounds as `undone`.
  // `known_failure`: how `source` already failed (a candidate's compile or screening), so the rounds
  // start with its diagnosis instead of evaluating it again.
  Result<std::optional<Candidate>> make_correct(std::string source, const AttemptLabel& label,
                                                const std::string& change, std::string base, const std::string& origin,
                                                Unrepaired& failure, std::optional<Evaluation> known_failure = {});
  Result<std::optional<Candidate>> synthesize(const std::vector<FailedAttempt>& failures, FailedAttempt& failure);
  Result<StepRecord> optimize_step(int step, int non_improving_streak);
  // The step's outcome from the kernel make_correct ended with (none: `failure` says how it failed).
  Result<StepRecord> settle_step(StepRecord rec, const std::optional<Candidate>& cand, const Unrepaired& failure);

  // --- a step with several candidates (--candidates N > 1; loop_candidates.cpp) ---
  struct Proposal {
    std::string source, idea;  // the edited kernel and its OPTIMIZATION name; empty when declined
    std::string declined;      // the NO_FURTHER_CHANGE reason
  };
  Result<Proposal> read_optimize_answer(const Answer& a, const std::string& base) const;
  Result<StepRecord> optimize_with_candidates(int step, int non_improving_streak);
  // The N conversations of one step: those the log holds replayed in order, the rest at once.
  Result<std::vector<Asked<Proposal>>> ask_candidates(const std::vector<std::vector<Message>>& requests,
                                                      const std::string& base);
  // Compiles (all at once) and, when more than one compiled, screens the step's usable kernels; each
  // gets its steps/NNN-cand-<label>/ directory. Index i of the result is `sources[i]`'s: its failing
  // evaluation (compile or screen), or its screened evaluation (absent: it compiled and was not screened).
  struct Checked {
    std::optional<Evaluation> failure;
    std::optional<Evaluation> screened;
  };
  Result<std::vector<Checked>> compile_and_screen(int step, const std::vector<std::pair<int, std::string>>& sources);
  Result<std::string> profile_summary(int step, int non_improving_streak);
  // Optimisation step `step` begins: the phase shown, and its prompt (with the profile where due).
  Result<std::string> begin_optimize_step(int step, int non_improving_streak);
  // Tunes the best kernel's knobs (when it declares any and tuning is on) and records it in history_
  // as a tuning step after `after_step`; a faster tuned variant becomes the best.
  Status tune_best(int after_step);
  // Whether a decline at this point hands over to a profile first (docs/internals.md, "The loop").
  bool decline_hands_over_to_profile() const;
  bool faster_than_best(const Evaluation& e) const;
  // The time an attempt's kernel must beat to be kept (nullopt: it needs none, or none is known yet): the
  // judge tries other shapes only for a kernel below it (Evaluator::evaluate).
  std::optional<double> keep_bar(const AttemptLabel& attempt) const;
  Status decide(const RunEvent& decision);
  Status set_best(Candidate c);
  Status export_best();  // the observer's new_best for best_
  // Rebuilds best_'s library when it has left the compile cache (the log, not the cache, is what a
  // run keeps), so exporting and profiling the best never fail forever on a pruned cache.
  Status ensure_best_library();
  void report(const std::string& line);

  LlmClient& llm_;
  Evaluator& evaluator_;
  Prompter& prompter_;
  ProfileSource* profiler_;
  Journal& journal_;
  RunFiles& files_;
  LoopOptions options_;
  LoopObserver observer_;

  ProblemInfo problem_;
  // The system message of each kind of request, built once at the start: a broken prompt file stops the
  // run before the first call, and each kind's calls share its bytes as a cacheable prefix.
  std::map<PromptKind, std::string> system_prompts_;
  std::optional<Candidate> best_;
  std::vector<StepRecord> history_;
  // Profile summaries by kernel source hash: a step that is rolled back leaves the best unchanged,
  // and profiling it again would cost an ncu run for the same answer. A failure is kept too, so a
  // resumed run asks the journal exactly as often as the original did.
  std::map<std::string, std::string> profiles_;
  bool profile_shown_ = false;      // some optimise prompt has carried a profile summary
  bool force_profile_ = false;      // the LLM declined before seeing one: the next step shows it
  std::string decline_reason_;      // set when a decline ended the optimisation
  LoopStatus status_;
  int llm_calls_ = 0;
  int artifact_seq_ = 0;
  // Set when the LLM layer refused a call for a reason that ends the task with a result rather than an
  // error: "budget" (a budget is spent) or "truncated" (answers keep being cut off).
  std::string llm_stop_;
  TruncationGuard truncations_;  // this task's run of cut-off answers, replayed ones included
  bool best_export_pending_ = false;  // a best set while replaying, not yet exported
};

}  // namespace cutegen
