#pragma once
// Fakes for the loop's tests: a scripted LLM that checks which kind of prompt it was sent, a
// prompter whose prompts name their kind, an evaluator driven by markers in the kernel source, and
// a profiler that counts its calls.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "agent/evaluator.h"
#include "agent/profile_source.h"
#include "agent/prompter.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "llm/llm_types.h"
#include "tune/tuner.h"

namespace cutegen::testing {

// Each scripted answer names the prompt kind it expects ("synthesis", "diagnose", "repair", ...);
// the backend fails the call (an Error naming both) when the loop asks something else. Answers are
// given in order, except that one added with `for_text` goes to the first request whose last message
// contains that text: a step's candidates are asked at once, in no fixed order.
class ScriptedLlm : public LlmBackend {
 public:
  struct Turn {
    std::string expect_kind;
    std::string answer;
    FinishReason finish = FinishReason::stop;
    std::string for_text;
  };
  void add(std::string kind, std::string answer, FinishReason finish = FinishReason::stop) {
    turns_.push_back({std::move(kind), std::move(answer), finish, ""});
  }
  void add_for(std::string for_text, std::string kind, std::string answer) {
    turns_.push_back({std::move(kind), std::move(answer), FinishReason::stop, std::move(for_text)});
  }
  std::string kind() const override { return "scripted"; }
  std::string model() const override { return "scripted-model"; }
  Result<LlmResponse> complete(const LlmRequest& request) override {
    // With rendezvous > 1 each call of rendezvous_kind waits (at most 5 s) until that many were in
    // flight together, so a test shows calls were made at once rather than by luck.
    const std::string kind_asked = first_user_line(request.messages).substr(0, first_user_line(request.messages).find(' '));
    if (rendezvous > 1 && kind_asked == rendezvous_kind) {
      std::unique_lock lock(rendezvous_mu_);
      max_in_flight = std::max(max_in_flight, ++in_flight_);
      if (in_flight_ >= rendezvous) rendezvous_reached_ = true;
      rendezvous_cv_.notify_all();
      rendezvous_cv_.wait_for(lock, std::chrono::seconds(5), [this] { return rendezvous_reached_; });
      --in_flight_;
    }
    std::lock_guard lock(mu_);
    requests.push_back(request);
    if (turns_.empty()) return Error{"scripted LLM: no answer left for: " + first_user_line(request.messages)};
    const std::string& last = request.messages.back().text;
    auto it = std::find_if(turns_.begin(), turns_.end(), [&](const Turn& t) {
      return !t.for_text.empty() && last.find(t.for_text) != std::string::npos;
    });
    if (it == turns_.end()) it = turns_.begin();
    Turn t = *it;
    turns_.erase(it);
    // The prompt kind is the first user message's first word (see FakePrompter).
    std::string asked = first_user_line(request.messages);
    asked = asked.substr(0, asked.find(' '));
    if (asked != t.expect_kind)
      return Error{"scripted LLM: expected a '" + t.expect_kind + "' prompt, got '" + asked + "'"};
    LlmResponse r;
    r.text = t.answer;
    r.finish = t.finish;
    r.usage.input_tokens = 100;
    r.usage.output_tokens = 50;
    return r;
  }
  size_t remaining() const { return turns_.size(); }
  std::vector<LlmRequest> requests;
  int rendezvous = 0;
  std::string rendezvous_kind = "optimize";
  int max_in_flight = 0;  // of rendezvous_kind calls, when rendezvous > 1

 private:
  std::mutex rendezvous_mu_;
  std::condition_variable rendezvous_cv_;
  int in_flight_ = 0;
  bool rendezvous_reached_ = false;
  std::mutex mu_;
  std::deque<Turn> turns_;
};

// Prompts are "<kind> ..." plus what the loop put in them, so tests can check the content.
class FakePrompter : public Prompter {
 public:
  Result<std::string> system_prompt(const ProblemInfo&, PromptKind kind) override {
    return "rules for " + std::string(to_string(kind));
  }
  std::string example_shown(const ProblemInfo& p) override {
    return "library/" + std::string(to_string(p.facts.workload_class)) + ".cu";
  }
  std::vector<std::string> menu_items(const ProblemInfo&) override {
    return {"1. fuse", "2. vectorize", "3. unroll", "4. grid shape", "5. streaming stores"};
  }
  Result<std::string> candidate_share(const ProblemInfo&, const CandidateAsk& ask) override {
    std::string s = "\ncandidate " + std::to_string(ask.candidate) + " of " + std::to_string(ask.candidates) + ": " +
                    ask.item + "; siblings:";
    for (const auto& i : ask.siblings) s += " [" + i + "]";
    return s;
  }
  Result<std::string> synthesis(const ProblemInfo& p) override { return "synthesis " + p.name(); }
  Result<std::string> restart(const ProblemInfo& p, const std::vector<FailedAttempt>& failures) override {
    std::string s = "restart " + p.name();
    for (const auto& f : failures) s += "\nfailure: " + f.summary + (f.last ? " [" + to_string(f.last->verdict) + "]" : "");
    return s;
  }
  Result<std::string> diagnose(const ProblemInfo&, const std::string& kernel, const Evaluation& e,
                               const RepairContext& c) override {
    std::string s = "diagnose " + to_string(e.verdict) + "\n" + e.evidence + "\nchange: " + c.change_under_repair + "\n";
    for (const auto& a : c.attempts)
      s += "attempt: " + a.idea + " -> " + (a.verdict ? to_string(*a.verdict) : std::string(to_string(a.outcome))) + "\n";
    return s + kernel;
  }
  Result<std::string> repair(const ProblemInfo&, const std::string& kernel, const Evaluation&,
                             const std::string& diagnosis, const RepairContext&) override {
    return "repair\n" + diagnosis + "\n" + kernel;
  }
  Result<std::string> optimize(const ProblemInfo&, const std::string& kernel, const Evaluation& best,
                               const std::vector<StepRecord>& history, const std::string& profile, int step, int) override {
    std::string s = "optimize step " + std::to_string(step) + " best " + std::to_string(best.median_ms()) + "\n";
    for (const auto& h : history) {
      s += "history: " + std::to_string(h.n) + " " + h.idea + " " + std::string(to_string(h.outcome));
      if (h.verdict) s += " " + to_string(*h.verdict);
      if (!h.evidence.empty()) s += " evidence: " + h.evidence;
      s += "\n";
    }
    if (!profile.empty()) s += "profile: " + profile + "\n";
    return s + kernel;
  }
};

// Verdict by markers in the source: a line "// VERDICT: compile_error <reason>" fails with that
// verdict (evidence: the reason, then "evidence for <verdict>"); otherwise the kernel passes with
// "// TIME: <ms>" (default 1.0) and "// IQR: <ms>" (0.01).
// With `library_dir` set, a passing kernel gets a library file there, named by its source's hash,
// as the compile cache would give it.
class MarkerEvaluator : public Evaluator {
 public:
  Result<ProblemInfo> describe() override {
    ++describes;
    ProblemInfo p;
    p.source = "class Model: ...";
    p.facts.name = "relu";
    p.facts.workload_class = *parse_workload_class(workload_class);
    p.baselines.eager = BaselineTime{TimeStats{.median_ms = 2.0}, ""};
    p.baselines.compile = BaselineTime{TimeStats{.median_ms = 1.8}, ""};
    p.floor = Floor{.floor_ms = 0.5, .bound = "memory"};
    return p;
  }
  Result<std::string> fingerprint() override { return "problem-" + workload_class + problem_version; }
  Result<Evaluation> evaluate(const std::string& source, const std::string&, std::optional<double> bar_ms) override {
    ++evaluations;
    bars.push_back(bar_ms);
    auto e = judge(source, /*screening=*/false);
    // As the judge does: a passing kernel not below the bar skips the checks only a kept kernel needs.
    if (e && e->passed() && bar_ms && !(e->median_ms() < *bar_ms)) e->skipped_checks_bar_ms = *bar_ms;
    return e;
  }
  // The compile alone: a "// VERDICT: compile_error|rejected <reason>" kernel fails it, every other one
  // compiles. Counts how many run at once; with compile_rendezvous > 1 each waits (at most 5 s) until
  // that many were in flight together, so a test shows they ran in parallel rather than by luck.
  Result<std::optional<Evaluation>> compile(const std::string& source, const std::string&) override {
    {
      std::unique_lock lock(compile_mu_);
      ++compiles;
      max_compiles_in_flight = std::max(max_compiles_in_flight, ++compiles_in_flight_);
      if (compiles_in_flight_ >= compile_rendezvous) rendezvous_reached_ = true;
      compile_cv_.notify_all();
      compile_cv_.wait_for(lock, std::chrono::seconds(5), [this] { return rendezvous_reached_; });
      --compiles_in_flight_;
    }
    auto e = judge(source, false);
    if (!e) return e.error();
    if (e->verdict == Verdict::compile_error || e->verdict == Verdict::rejected) return std::optional<Evaluation>(*e);
    return std::optional<Evaluation>{};
  }
  // How many kernels each screen_all call was given: the loop screens a step's candidates in one batch.
  std::vector<std::size_t> screen_batches;
  Result<std::vector<Evaluation>> screen_all(const std::vector<std::string>& sources, const std::string& name) override {
    screen_batches.push_back(sources.size());
    return Evaluator::screen_all(sources, name);
  }
  // As evaluate(), with "// SCREEN: <ms>" as the screened time when the kernel has one.
  Result<Evaluation> screen(const std::string& source, const std::string&) override {
    ++screens;
    auto e = judge(source, true);
    if (!e) return e.error();
    if (auto pos = source.find("// SCREEN: "); e->passed() && pos != std::string::npos)
      e->time->stats.median_ms = std::stod(source.substr(pos + 11, source.find('\n', pos) - pos - 11));
    return e;
  }
  Result<Evaluation> judge(const std::string& source, bool screening) {
    if (fail_tool) return Error{"worker died"};
    Evaluation e;
    auto marker = [&](const std::string& name) -> std::optional<std::string> {
      auto pos = source.find("// " + name + ": ");
      if (pos == std::string::npos) return std::nullopt;
      pos += name.size() + 5;
      return source.substr(pos, source.find('\n', pos) - pos);
    };
    if (auto v = marker("VERDICT")) {
      auto verdict = parse_verdict(v->substr(0, v->find(' ')));
      if (!verdict) return Error{"MarkerEvaluator: unknown verdict in " + *v};
      e.verdict = *verdict;
      e.reason = v->find(' ') == std::string::npos ? *v : v->substr(v->find(' ') + 1);
      e.evidence = e.reason + "\nevidence for " + to_string(e.verdict);  // the judge leads with its reason
      return e;
    }
    e.verdict = Verdict::pass;
    e.time = CandidateTime{.stats = {.median_ms = marker("TIME") ? std::stod(*marker("TIME")) : 1.0,
                                     .iqr_ms = marker("IQR") ? std::stod(*marker("IQR")) : 0.01}};
    e.baselines.eager = BaselineTime{TimeStats{.median_ms = 2.0}, ""};
    e.baselines.compile = BaselineTime{TimeStats{.median_ms = 1.8}, ""};
    e.floor = Floor{.floor_ms = 0.5, .bound = "memory"};
    if (!library_dir.empty() && !screening) {
      auto lib = build(source);
      if (!lib) return lib.error();
      e.library = lib->path;
      e.compile_key = lib->key;
    }
    return e;
  }
  Result<Library> rebuild_library(const std::string& source, const std::string&) override {
    ++rebuilds;
    if (fail_rebuild) return Error{"nvcc not found"};
    if (library_dir.empty()) return Error{"no library_dir"};
    return build(source);
  }
  Result<Library> build(const std::string& source) {
    std::string key = sha256_hex(source + toolchain);
    auto path = library_dir / (key.substr(0, 12) + ".so");
    if (auto w = write_file_atomic(path, "library of " + source); !w) return w.error();
    return Library{path.string(), key};
  }
  std::string workload_class = "elementwise";
  std::string problem_version;  // changes the fingerprint, as an edited problem file would
  int describes = 0;
  int evaluations = 0;
  std::vector<std::optional<double>> bars;  // each evaluate()'s bar_ms, in order
  int screens = 0;
  int compiles = 0;
  int max_compiles_in_flight = 0;
  int compile_rendezvous = 0;
  bool fail_tool = false;
  std::filesystem::path library_dir;
  std::string toolchain;  // part of the compile key, as nvcc's version is
  int rebuilds = 0;
  bool fail_rebuild = false;

 private:
  std::mutex compile_mu_;
  std::condition_variable compile_cv_;
  int compiles_in_flight_ = 0;
  bool rendezvous_reached_ = false;
};

class CountingProfiler : public ProfileSource {
 public:
  Result<std::string> summary(const std::string&, const Evaluation& e) override {
    ++calls;
    library_existed = !e.library.empty() && std::filesystem::exists(e.library);
    if (fail) return Error{"ncu missing"};
    return "memory-bound, dram 91% at " + std::to_string(e.median_ms()) + " ms";
  }
  int calls = 0;
  bool fail = false;
  bool library_existed = false;  // at the last call
};

// Tuning by knob values: a variant whose values equal `fast` screens at `fast_screen_ms` and, baked in,
// judges at `fast_full_ms`; every other variant screens and judges at `other_ms`.
class FakeTuner : public TuneBackend {
 public:
  KnobValues fast;
  double fast_screen_ms = 0.4, fast_full_ms = 0.5, other_ms = 1.0;
  int compiles = 0, screens = 0, verifies = 0;

  Result<CompileOutcome> compile(const CompileRequest&) override {
    std::lock_guard lock(mu_);
    ++compiles;
    CompileOutcome o;
    o.verdict = CompileVerdict::ok;
    return o;
  }
  Result<Evaluation> screen(const CompileRequest& r) override {
    ++screens;
    KnobValues v;
    for (const auto& d : r.defines) v.push_back(std::stoll(d.value));
    return timed(v == fast ? fast_screen_ms : other_ms);
  }
  Result<Evaluation> verify(const std::string& source, const std::string&) override {
    ++verifies;
    auto spec = parse_knobs(source);
    if (!spec) return spec.error();
    return timed(spec->defaults() == fast ? fast_full_ms : other_ms);
  }

 private:
  static Evaluation timed(double ms) {
    Evaluation e;
    e.time = CandidateTime{.stats = {.median_ms = ms, .iqr_ms = 0.001}};
    return e;
  }
  std::mutex mu_;
};

}  // namespace cutegen::testing
