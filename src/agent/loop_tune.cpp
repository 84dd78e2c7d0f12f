// The loop's tuning step (--tune auto): the best kernel's knobs tuned after an accepted step.
#include <fmt/format.h>

#include "agent/loop.h"
#include "common/json_text.h"
#include "common/sha256.h"

namespace cutegen {

Status Loop::tune_best(int after_step) {
  if (!options_.tuner || !best_) return ok_status();
  const std::string base = best_->source;
  StepRecord rec{.kind = StepKind::tuning, .n = after_step};
  auto spec = parse_knobs(base);
  if (spec && spec->empty()) return ok_status();  // nothing to tune: no step
  if (spec) {
    if (auto plan = plan_variants(*spec, options_.tune.max_variants); !plan) spec = plan.error();
  }
  // Knobs declared wrongly are the LLM's to fix: the next prompt says why they could not be tuned.
  if (!spec) {
    rec.idea = "tuning the knobs";
    rec.outcome = StepOutcome::unusable;
    rec.note = first_line(spec.error().message, 200);
    report("tuning: " + rec.note);
    history_.push_back(rec);
    return decide(StepDecision{rec});
  }
  // One outside answer for the whole tuning: resume replays the choice instead of re-timing every variant.
  const std::string key = sha256_hex(base);
  const std::string label = fmt::format("tune{}", after_step);
  auto memo = journal_.recall<TuneEvent>(key);
  if (!memo) return memo.error();
  TuneEvent t;
  if (*memo) {
    t = **memo;
  } else {
    report(fmt::format("tuning the best kernel's {} knobs (at most {} variants)", spec->knobs.size(),
                       options_.tune.max_variants));
    TuneOptions to = options_.tune;
    to.verify_default = false;  // the best's own evaluation is the default's
    to.display_name = kKernelName;
    to.progress = [this](const std::string& line) { report("tune: " + line); };
    auto r = tune_kernel(base, *options_.tuner, to);
    if (!r) return r.error();
    t = TuneEvent{.key = key, .after_step = after_step, .summary = r->summary, .markdown = r->markdown(),
                  .source = r->source, .default_kept = r->default_kept, .table = r->to_json(),
                  .evaluation = r->evaluation};
    if (auto w = journal_.record(t); !w) return w.error();
  }
  const std::string& summary = t.summary;
  const std::string& chosen_source = t.source;
  const std::optional<Evaluation>& evaluation = t.evaluation;
  const bool default_kept = t.default_kept;
  std::size_t variants = 0;
  if (t.table.contains("variants") && t.table["variants"].is_array()) variants = t.table["variants"].size();
  // Named like an evaluation's directory (the chosen kernel and its eval.json), so the run view finds
  // the tuned kernel the way it finds every other.
  std::string dir = fmt::format("steps/{:03d}-eval-{}", ++artifact_seq_, label);
  if (auto w = files_.write(dir + "/tune.md", t.markdown); !w) return w.error();
  if (auto w = files_.write(dir + "/tune.json", dump_json(t.table, 2)); !w) return w.error();
  if (auto w = files_.write(dir + "/kernel.cu", chosen_source); !w) return w.error();
  if (evaluation)
    if (auto w = files_.write(dir + "/eval.json", dump_json(evaluation->to_json(), 2)); !w) return w.error();

  rec.idea = fmt::format("tuned the knobs ({} variants)", variants);
  rec.note = first_line(summary, 300);
  rec.outcome = StepOutcome::slower;
  if (!default_kept && evaluation && evaluation->passed()) {
    rec.time_ms = evaluation->median_ms();
    rec.speedup = best_->evaluation.median_ms() / evaluation->median_ms();
    if (faster_than_best(*evaluation)) {
      rec.outcome = StepOutcome::accepted;
      if (auto r = set_best(Candidate{chosen_source, *evaluation}); !r) return r;
    } else {
      rec.note += fmt::format("; in full it was not faster than the best by more than the noise, so the defaults stay");
    }
  }
  report(fmt::format("tuning {}: {}", to_string(rec.outcome), rec.note));
  history_.push_back(rec);
  return decide(StepDecision{rec});
}

}  // namespace cutegen
