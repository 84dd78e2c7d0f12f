#include "runlog/run_history.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/sha256.h"

namespace cutegen {

std::string_view to_string(AttemptFate f) {
  switch (f) {
    case AttemptFate::accepted: return "accepted";
    case AttemptFate::rolled_back: return "rolled back";
    case AttemptFate::failed: return "failed";
  }
  return "?";
}

const HistoryAttempt* RunHistory::attempt(int index) const {
  if (index < 1 || index > static_cast<int>(attempts.size())) return nullptr;
  return &attempts[index - 1];
}

std::vector<int> RunHistory::rolled_back() const {
  std::vector<int> out;
  for (const auto& a : attempts)
    if (a.fate == AttemptFate::rolled_back) out.push_back(a.index);
  return out;
}

std::string RunHistory::summary_line() const {
  std::string s = fmt::format("{} evaluation{}, {} step{} decided", attempts.size(), attempts.size() == 1 ? "" : "s",
                              steps.size(), steps.size() == 1 ? "" : "s");
  if (const HistoryAttempt* b = best_attempt())
    s += fmt::format("; best: {} ({:.4g} ms)", b->label.text(), b->evaluation.median_ms());
  else
    s += "; no correct kernel yet";
  std::string back;
  for (int i : rolled_back()) back += (back.empty() ? "" : ", ") + attempts[i - 1].label.text();
  if (!back.empty()) s += "; rolled back: " + back;
  return s;
}

namespace {

// Walks the log once. Fates of kernels that passed are settled by the decisions that follow them: a
// kernel is accepted when a decision makes it the best, and every other correct kernel was rolled back.
class HistoryReader {
 public:
  RunHistory read(const std::vector<LoggedEvent>& events) {
    for (const auto& e : events) std::visit([this](const auto& ev) { on(ev); }, e.event);
    for (auto& a : h_.attempts)
      if (a.evaluation.passed())
        a.fate = std::find(ever_best_.begin(), ever_best_.end(), a.index) != ever_best_.end() ? AttemptFate::accepted
                                                                                              : AttemptFate::rolled_back;
    return std::move(h_);
  }

 private:
  void on(const ProblemEvent& e) { h_.problem = e.problem; }
  void on(const LlmEvent&) { ++artifact_; }
  void on(const ProfileEvent& e) { pending_profiles_.push_back(e.summary); }
  // A step candidate's kernel directory (steps/NNN-cand-<label>/) is numbered at its compile; its
  // screening adds to that directory. Neither is an attempt: the step's record lists its candidates.
  void on(const CompileEvent&) { ++artifact_; }
  void on(const ScreenEvent&) {}
  void on(const EvalEvent& e) {
    add_attempt(e.label, e.evaluation, e.key);
  }
  void on(const TuneEvent& e) {
    // The kernel a tuning chose, when it was judged in full, is an attempt; the tuning's decision
    // after it says whether it was kept. (Its directory is numbered even when nothing was judged.)
    if (!e.evaluation) {
      ++artifact_;
      return;
    }
    add_attempt(AttemptLabel{.stage = AttemptStage::tune, .step = e.after_step}, *e.evaluation, sha256_of_source(e));
  }
  void on(const ExampleDecision& d) { h_.example_shown = d.file; }
  void on(const SeedDecision& d) {
    const HistoryAttempt* last = last_attempt();
    const bool seed_judged = last && last->label.stage == AttemptStage::seed;
    if (d.passed && seed_judged && last->evaluation.passed()) {
      make_best(last->index);
      h_.seed_passed = true;
    }
    if (!d.passed && seed_judged && !last->evaluation.passed()) h_.failed_seed = last->evaluation;
  }
  void on(const SynthesisDecision& d) {
    ++h_.syntheses;
    const HistoryAttempt* last = last_attempt();
    if (d.correct && last && last->evaluation.passed()) make_best(last->index);
  }
  void on(const StepDecision& d) {
    HistoryStep step{.record = d.record, .base = h_.best};
    const bool tuning = d.record.kind == StepKind::tuning;
    for (const auto& a : h_.attempts)
      if (a.label.stage == (tuning ? AttemptStage::tune : AttemptStage::step) && a.label.step == d.record.n &&
          std::find(claimed_.begin(), claimed_.end(), a.index) == claimed_.end())
        step.attempts.push_back(a.index);
    claimed_.insert(claimed_.end(), step.attempts.begin(), step.attempts.end());
    if (!step.attempts.empty() && d.record.outcome == StepOutcome::accepted &&
        h_.attempts[step.attempts.back() - 1].evaluation.passed())
      make_best(step.attempts.back());
    if (!tuning) {
      for (auto& summary : pending_profiles_)
        h_.profiles.push_back({.first_step = d.record.n, .kernel = step.base, .summary = std::move(summary)});
      pending_profiles_.clear();
    }
    h_.steps.push_back(std::move(step));
  }
  void on(const StopDecision& d) { h_.stop = d; }

  static std::string sha256_of_source(const TuneEvent& e) { return sha256_hex(e.source); }
  void add_attempt(const AttemptLabel& label, const Evaluation& e, std::string sha) {
    HistoryAttempt a{.index = static_cast<int>(h_.attempts.size()) + 1, .label = label, .evaluation = e,
                     .fate = AttemptFate::failed, .source_sha256 = std::move(sha), .artifact = ++artifact_};
    h_.attempts.push_back(std::move(a));
  }
  const HistoryAttempt* last_attempt() const { return h_.attempts.empty() ? nullptr : &h_.attempts.back(); }
  void make_best(int index) {
    h_.best = index;
    ever_best_.push_back(index);
  }

  RunHistory h_;
  int artifact_ = 0;
  std::vector<int> ever_best_;       // every attempt that was the best kernel at some point
  std::vector<int> claimed_;         // attempts already given to a step (a step number can repeat: tune0 after a seed and a synthesis)
  std::vector<std::string> pending_profiles_;  // logged before the optimise prompt that carries them
};

}  // namespace

RunHistory run_history(const std::vector<LoggedEvent>& events) { return HistoryReader().read(events); }

}  // namespace cutegen
