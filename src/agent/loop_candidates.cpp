// An optimisation step with several candidates (--candidates N > 1): N requests at once, each asked
// for its own menu item; the usable kernels compiled at once and, when more than one compiled,
// screened; the fastest correct one judged in full and kept or rolled back as a single proposal is.
// When none is correct in screening, the first that failed gets the step's repair rounds.
//
// Every outside answer still goes through the journal, in candidate order: answers that arrive at once
// are held until all are in, then logged in that order, so a resumed run replays them one after the
// other and makes the calls the log lacks (the rest of the batch) at once again.
#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "agent/loop.h"
#include "common/json_text.h"
#include "common/sha256.h"
#include "common/unified_diff.h"
#include "prompt/menu_items.h"

namespace cutegen {
namespace {

constexpr std::size_t kNote = 160;

// Runs work(i) for every i on a thread of its own and waits for all of them.
void at_once(std::size_t n, const std::function<void(std::size_t)>& work) {
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (std::size_t i = 0; i < n; ++i) threads.emplace_back(work, i);
  for (auto& t : threads) t.join();
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : "; ") + i;
  return s;
}

}  // namespace

Result<std::vector<Loop::Asked<Loop::Proposal>>> Loop::ask_candidates(const std::vector<std::vector<Message>>& requests,
                                                                       const std::string& base) {
  // The truncation rule once, before the batch: calls made at once cannot stop each other.
  if (auto ok = truncations_.check(); !ok) {
    llm_stop_ = "truncated";
    return ok.error();
  }
  auto use = [this, &base](const Answer& a) { return read_optimize_answer(a, base); };
  const std::size_t n = requests.size();
  std::vector<Asked<Proposal>> out(n);
  std::size_t k = 0;
  // What the log holds comes first, in candidate order (a prefix of the batch when the run stopped
  // in the middle of it); a candidate whose conversation the log holds only in part finishes it here.
  for (; k < n && journal_.replaying(); ++k) {
    const int candidate = static_cast<int>(k) + 1;
    auto asked = converse<Proposal>(
        LlmPurpose::optimize, requests[k],
        [this, candidate](const std::vector<Message>& m) {
          return call_llm(LlmPurpose::optimize, m, {.candidate = candidate, .check_truncation = false});
        },
        use, [this](const std::string& line) { report(line); });
    if (!asked) return asked.error();
    out[k] = std::move(*asked);
  }
  if (k == n) return out;

  // The rest at once. Each thread keeps its calls and lines; nothing touches the journal, the files or
  // the progress display until all are back.
  struct Pending {
    std::vector<std::pair<std::vector<Message>, LlmCall>> calls;
    std::vector<std::string> said;
    std::optional<Result<Asked<Proposal>>> result;
  };
  std::vector<Pending> pending(n - k);
  at_once(pending.size(), [&](std::size_t i) {
    Pending& p = pending[i];
    p.result = converse<Proposal>(
        LlmPurpose::optimize, requests[k + i],
        [this, &p](const std::vector<Message>& m) -> Result<Answer> {
          auto call = call_live(m);
          if (!call) return call.error();
          p.calls.emplace_back(m, *call);
          return Answer{call->response.text, call->response.finish == FinishReason::length};
        },
        use, [&p](const std::string& line) { p.said.push_back(line); });
  });
  for (std::size_t i = 0; i < pending.size(); ++i) {
    const int candidate = static_cast<int>(k + i) + 1;
    for (const auto& [messages, call] : pending[i].calls)
      if (auto a = commit_live_answer(LlmPurpose::optimize, candidate, messages, call); !a) return a.error();
    for (const auto& line : pending[i].said) report(line);
    // A refused call (a budget) ends the task here; the later candidates' answers are not logged, so a
    // resumed run, replaying up to this point, is refused at the same call.
    if (!*pending[i].result) {
      const Error& e = pending[i].result->error();
      if (is_budget_exhausted(e)) llm_stop_ = "budget";
      return e;
    }
    out[k + i] = std::move(**pending[i].result);
  }
  return out;
}

Result<std::vector<Loop::Checked>> Loop::compile_and_screen(int step, const std::vector<std::pair<int, std::string>>& sources) {
  const std::size_t n = sources.size();
  auto label = [step](int candidate) { return AttemptLabel{.stage = AttemptStage::step, .step = step, .candidate = candidate}; };
  std::vector<Checked> out(n);
  std::vector<std::string> dirs(n);
  // Compiles: the logged ones in order, the rest at once (the compiler is safe to call from threads),
  // then logged in candidate order.
  std::size_t k = 0;
  std::vector<bool> known(n, false);
  for (; k < n && journal_.replaying(); ++k) {
    auto memo = journal_.recall<CompileEvent>(sha256_hex(sources[k].second));
    if (!memo) return memo.error();
    if (!*memo) break;
    out[k].failure = (*memo)->failure;
    known[k] = true;
  }
  std::vector<std::optional<Result<std::optional<Evaluation>>>> compiled(n);
  at_once(n - k, [&](std::size_t i) { compiled[k + i] = evaluator_.compile(sources[k + i].second, kKernelName); });
  for (std::size_t i = 0; i < n; ++i) {
    if (!known[i]) {
      if (!*compiled[i]) return compiled[i]->error();
      out[i].failure = **compiled[i];
      if (auto r = journal_.record(CompileEvent{sha256_hex(sources[i].second), label(sources[i].first), out[i].failure}); !r)
        return r.error();
    }
    dirs[i] = fmt::format("steps/{:03d}-cand-{}", ++artifact_seq_, label(sources[i].first).text());
    if (auto w = files_.write(dirs[i] + "/kernel.cu", sources[i].second); !w) return w.error();
    if (auto w = files_.write(dirs[i] + "/change.diff", unified_diff(best_->source, sources[i].second).text); !w)
      return w.error();
    if (out[i].failure) {
      if (auto w = files_.write(dirs[i] + "/compile.json", dump_json(out[i].failure->to_json(), 2)); !w) return w.error();
      report(fmt::format("step {} candidate {}: {} — {}", step, sources[i].first, to_string(out[i].failure->verdict),
                         first_line(out[i].failure->reason, kNote)));
    }
  }
  // Screening ranks; with one kernel left there is nothing to rank, and its full evaluation follows.
  std::size_t compiled_ok = std::count_if(out.begin(), out.end(), [](const Checked& c) { return !c.failure; });
  if (compiled_ok < 2) return out;
  // What the log holds is replayed; the rest are screened together (one session for all of them).
  std::vector<std::optional<Evaluation>> screened(n);
  std::vector<std::size_t> fresh;
  for (std::size_t i = 0; i < n; ++i) {
    if (out[i].failure) continue;
    auto memo = journal_.recall<ScreenEvent>(sha256_hex(sources[i].second));
    if (!memo) return memo.error();
    if (*memo)
      screened[i] = (*memo)->evaluation;
    else
      fresh.push_back(i);
  }
  if (!fresh.empty()) {
    std::vector<std::string> kernels;
    for (std::size_t i : fresh) kernels.push_back(sources[i].second);
    auto all = evaluator_.screen_all(kernels, kKernelName);
    if (!all) return all.error();
    if (all->size() != fresh.size())
      return Error{fmt::format("internal: {} screenings for {} kernels", all->size(), fresh.size())};
    for (std::size_t k = 0; k < fresh.size(); ++k) screened[fresh[k]] = std::move((*all)[k]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (out[i].failure) continue;
    Evaluation& e = *screened[i];
    if (std::find(fresh.begin(), fresh.end(), i) != fresh.end())
      if (auto r = journal_.record(ScreenEvent{sha256_hex(sources[i].second), label(sources[i].first), e}); !r)
        return r.error();
    if (auto w = files_.write(dirs[i] + "/screen.json", dump_json(e.to_json(), 2)); !w) return w.error();
    if (e.passed()) {
      report(fmt::format("step {} candidate {}: correct in screening, {:.4f} ms", step, sources[i].first, e.median_ms()));
      out[i].screened = std::move(e);
    } else {
      report(fmt::format("step {} candidate {}: {} in screening — {}", step, sources[i].first, to_string(e.verdict),
                         first_line(e.reason, kNote)));
      out[i].failure = std::move(e);
    }
  }
  return out;
}

Result<StepRecord> Loop::optimize_with_candidates(int step, int streak) {
  StepRecord rec{.kind = StepKind::optimization, .n = step};
  auto prompt = begin_optimize_step(step, streak);
  if (!prompt) return prompt.error();
  const std::string base = best_->source;
  const int n = options_.candidates;
  std::vector<std::string> items = items_for_step(prompter_.menu_items(problem_), step, n);
  if (items.empty()) items.assign(n, "the menu item the evidence points to");  // a menu without numbered items
  std::vector<std::vector<Message>> requests;
  for (int k = 0; k < n; ++k) {
    CandidateAsk ask{.step = step, .candidate = k + 1, .candidates = n, .item = items[k]};
    for (int j = 0; j < n; ++j)
      if (j != k) ask.siblings.push_back(items[j]);
    auto share = prompter_.candidate_share(problem_, ask);
    if (!share) return share.error();
    // The optimize prompt as one candidate alone would get it, then its share, a blank line between.
    std::string text = *prompt;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    share->erase(0, std::min(share->size(), share->find_first_not_of('\n')));
    requests.push_back(request_messages(system_prompts_.at(PromptKind::optimize), text + "\n\n" + *share));
  }
  report(fmt::format("step {}: {} candidates at once ({})", step, n, joined(items)));
  auto asked = ask_candidates(requests, base);
  if (!asked) return asked.error();

  // What each answer gave; the usable kernels go on, each distinct one once.
  std::vector<std::pair<int, std::string>> usable;  // candidate number, kernel
  for (int k = 0; k < n; ++k) {
    const Asked<Proposal>& a = (*asked)[k];
    CandidateRecord c{.n = k + 1, .item = items[k]};
    if (!a.value) {
      c.outcome = CandidateOutcome::unusable;
      c.note = first_line(a.unusable, 120);
    } else if (!a.value->declined.empty()) {
      c.outcome = CandidateOutcome::declined;
      c.note = first_line(a.value->declined, 300);
    } else {
      c.idea = a.value->idea;
      auto same = std::find_if(usable.begin(), usable.end(), [&](const auto& u) { return u.second == a.value->source; });
      if (same != usable.end()) {
        c.note = fmt::format("the same kernel as candidate {}", same->first);
      } else {
        usable.emplace_back(k + 1, a.value->source);
        c.outcome = CandidateOutcome::chosen;  // for now: settled below
      }
    }
    rec.candidates.push_back(std::move(c));
  }
  if (usable.empty()) {
    const bool all_declined = std::all_of(rec.candidates.begin(), rec.candidates.end(),
                                          [](const CandidateRecord& c) { return c.outcome == CandidateOutcome::declined; });
    rec.outcome = all_declined ? StepOutcome::declined : StepOutcome::unusable;
    if (!all_declined) rec.idea = "(no usable edit)";
    rec.note = all_declined ? rec.candidates.front().note
                            : fmt::format("none of the {} candidates gave a usable edit: {}", n,
                                          first_line(rec.candidates.front().note, 120));
    return rec;
  }

  auto checked = compile_and_screen(step, usable);
  if (!checked) return checked.error();
  // The fastest correct in screening (the only one compiled, when just one did); else the first
  // that failed, which gets the step's repair rounds with the failure it already has.
  std::optional<std::size_t> chosen;
  for (std::size_t i = 0; i < usable.size(); ++i) {
    const Checked& c = (*checked)[i];
    if (c.failure) continue;
    if (!chosen || (c.screened && (*checked)[*chosen].screened &&
                    c.screened->median_ms() < (*checked)[*chosen].screened->median_ms()))
      chosen = i;
  }
  const bool repairing = !chosen;
  if (!chosen) chosen = 0;
  for (std::size_t i = 0; i < usable.size(); ++i) {
    CandidateRecord& c = rec.candidates[usable[i].first - 1];
    const Checked& ch = (*checked)[i];
    if (ch.screened) c.screened_ms = ch.screened->median_ms();
    if (ch.failure) {
      c.verdict = ch.failure->verdict;
      c.note = first_line(ch.failure->reason, 120);
    }
    if (i == *chosen) {
      c.outcome = CandidateOutcome::chosen;
      if (repairing) c.note = "repaired after: " + c.note;
    } else if (ch.failure) {
      c.outcome = CandidateOutcome::failed;
    } else {
      c.outcome = CandidateOutcome::lost;
      c.note = fmt::format("slower in screening than candidate {}", usable[*chosen].first);
    }
  }

  const auto& [number, source] = usable[*chosen];
  rec.idea = rec.candidates[number - 1].idea;
  // The fastest screened no faster than the best at all: a full evaluation could only confirm the rollback
  // (keeping a kernel needs a gain beyond the noise, which a screen that slow leaves no room for), so the step
  // ends here. Its screened time stays a rank: the record has no time of its own.
  if (const auto& screened = (*checked)[*chosen].screened;
      !repairing && screened && screened->median_ms() >= best_->evaluation.median_ms()) {
    rec.outcome = StepOutcome::slower;
    rec.note = fmt::format("the fastest candidate screened at {:.4g} ms, no faster than the best's {:.4g} ms: "
                           "not judged in full", screened->median_ms(), best_->evaluation.median_ms());
    rec.candidates[number - 1].note = "no faster than the best in screening: not judged in full";
    report(fmt::format("step {}: {}", step, rec.note));
    return rec;
  }
  report(fmt::format("step {}: candidate {} ({}) is judged in full: {}", step, number, items[number - 1], rec.idea));
  Unrepaired failure;
  auto cand = make_correct(source, AttemptLabel{.stage = AttemptStage::step, .step = step, .candidate = number},
                           rec.idea, base, base, failure,
                           repairing ? (*checked)[*chosen].failure : std::optional<Evaluation>{});
  if (!cand) return cand.error();
  return settle_step(std::move(rec), *cand, failure);
}

}  // namespace cutegen
