#include "tune/tuner.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "common/json_text.h"

namespace cutegen {
namespace {

std::string compile_note(const CompileOutcome& c) {
  if (c.ok()) return "";
  if (!c.violations.empty()) return first_line(c.violations.front().message, 160);
  if (!c.diagnostic.errors.empty()) return first_line(c.diagnostic.errors.front().message, 160);
  return first_line(c.feedback(), 160);
}

// Compiles every variant with `jobs` threads. The first tool failure stops the others' next pick.
Status compile_all(const KnobSpec& spec, const std::string& source, TuneBackend& backend, const TuneOptions& o,
                   std::vector<VariantRow>& rows) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex mu;
  std::optional<Error> failure;
  auto work = [&] {
    for (;;) {
      {
        std::lock_guard lock(mu);
        if (failure) return;
      }
      std::size_t i = next++;
      if (i >= rows.size()) return;
      auto out = backend.compile({source, o.display_name, knob_defines(spec, rows[i].values)});
      std::lock_guard lock(mu);
      if (!out) {
        if (!failure) failure = out.error();
        return;
      }
      rows[i].compile = to_string(out->verdict);
      rows[i].compile_note = compile_note(*out);
      rows[i].cache_hit = out->cache_hit;
      std::size_t n = ++done;
      if (o.progress)
        o.progress(fmt::format("[{}/{}] compiled {}: {}{}", n, rows.size(), spec.describe(rows[i].values),
                               rows[i].compile, out->cache_hit ? " (cached)" : ""));
    }
  };
  const int jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(rows.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (failure) return *failure;
  return ok_status();
}

std::string ms(const std::optional<double>& v) { return v ? fmt::format("{:.4f}", *v) : "—"; }

}  // namespace

Result<TuneConfig> apply_tune_config(TuneConfig c, const nlohmann::json& j) {
  if (!j.is_object()) return Error{"config: \"tune\" must be an object"};
  for (const auto& [key, v] : j.items()) {
    if (key == "max_variants" || key == "loop_max_variants") {
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 100000)
        return Error{fmt::format("config: tune.{} must be a whole number from 1 to 100000", key)};
      (key == "max_variants" ? c.max_variants : c.loop_max_variants) = v.get<std::size_t>();
    } else if (key == "jobs") {
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 256)
        return Error{"config: tune.jobs must be a whole number from 1 to 256"};
      c.jobs = v.get<int>();
    } else {
      return Error{fmt::format("config: unknown key tune.{} (known: max_variants, loop_max_variants, jobs)", key)};
    }
  }
  return c;
}

std::vector<Define> knob_defines(const KnobSpec& spec, const KnobValues& values) {
  std::vector<Define> d;
  for (std::size_t i = 0; i < spec.knobs.size(); ++i) d.push_back({spec.knobs[i].name, std::to_string(values.at(i))});
  return d;
}

Result<TuneResult> tune_kernel(const std::string& source, TuneBackend& backend, const TuneOptions& o) {
  auto spec = parse_knobs(source);
  if (!spec) return Error{fmt::format("{}: {}", o.display_name, spec.error().message)};
  if (spec->empty())
    return Error{fmt::format("{} declares no knobs: add `// cutegen:knob NAME in {{...}}` lines (docs/tuning.md)",
                             o.display_name)};
  auto plan = plan_variants(*spec, o.max_variants);
  if (!plan) return plan.error();
  TuneResult r;
  r.spec = *spec;
  r.plan = *plan;
  for (const auto& v : plan->variants) r.rows.push_back({.values = v, .is_default = r.rows.empty()});
  if (o.progress)
    o.progress(fmt::format("{} knobs, {} combinations, {} allowed by the constraints, {} variants to try{}",
                           spec->knobs.size(), plan->combinations, plan->feasible, plan->variants.size(),
                           plan->sampled ? " (a fixed sample, with the default)" : ""));

  if (auto c = compile_all(*spec, source, backend, o, r.rows); !c) return c.error();

  // Every variant that built, screened together (the judge groups them: one session for up to eight).
  std::vector<std::size_t> built;
  std::vector<CompileRequest> requests;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    if (r.rows[i].compile != "ok") continue;
    built.push_back(i);
    requests.push_back({source, o.display_name, knob_defines(*spec, r.rows[i].values)});
  }
  if (o.progress && !requests.empty()) o.progress(fmt::format("screening {} variants together", requests.size()));
  auto screened = backend.screen_all(requests);
  if (!screened) return screened.error();
  if (screened->size() != built.size())
    return Error{fmt::format("internal: {} screenings for {} variants", screened->size(), built.size())};
  for (std::size_t k = 0; k < built.size(); ++k) {
    const std::size_t i = built[k];
    VariantRow& row = r.rows[i];
    const Evaluation& e = (*screened)[k];
    row.verdict = e.verdict;
    if (e.passed()) {
      row.screened_ms = e.median_ms();
      row.screened_noise_ms = e.noise_ms();
    } else {
      row.reason = first_line(e.reason, 160);
    }
    if (o.progress)
      o.progress(fmt::format("[{}/{}] screened {}: {}", i + 1, r.rows.size(), spec->describe(row.values),
                             e.passed() ? fmt::format("{:.4f} ms", e.median_ms()) : to_string(e.verdict)));
  }

  // Passing variants, fastest first; the default's screened time is the bar a winner must clear.
  std::vector<std::size_t> ranked;
  for (std::size_t i = 0; i < r.rows.size(); ++i)
    if (r.rows[i].screened_ms) ranked.push_back(i);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](std::size_t a, std::size_t b) { return *r.rows[a].screened_ms < *r.rows[b].screened_ms; });
  const VariantRow& def = r.rows.front();
  auto beats_default = [&](const VariantRow& row) {
    if (!def.screened_ms) return true;  // a default that fails is beaten by any variant that passes
    double noise = std::max({*def.screened_noise_ms, *row.screened_noise_ms, o.min_gain * *def.screened_ms});
    return *row.screened_ms < *def.screened_ms - noise;
  };

  std::string why_default = ranked.empty() ? "no variant passed screening"
                                            : "no variant beat the default by more than the noise";
  for (std::size_t i : ranked) {
    if (i == 0 || !beats_default(r.rows[i])) break;
    VariantRow& row = r.rows[i];
    std::string baked = bake_knobs(source, *spec, row.values);
    if (o.progress) o.progress(fmt::format("full verification of {}", spec->describe(row.values)));
    auto e = backend.verify(baked, o.display_name);
    if (!e) return e.error();
    if (e->passed()) {
      row.full = "passed";
      row.full_ms = e->median_ms();
      r.chosen = i;
      r.default_kept = false;
      r.source = std::move(baked);
      r.evaluation = *e;
      break;
    }
    row.full = "failed";
    row.reason = fmt::format("full verification: {} — {}", to_string(e->verdict), first_line(e->reason, 120));
    why_default = "the variants that beat the default failed full verification";
    if (o.progress) o.progress(fmt::format("{} failed full verification ({}): trying the next", spec->describe(row.values),
                                           to_string(e->verdict)));
  }

  // The default judged in full: what `cutegen tune` reports when it is kept, and the bar a chosen
  // variant must clear in full too (a screened lead can be noise). The loop has this evaluation already.
  std::optional<Evaluation> def_full;
  if (o.verify_default) {
    if (o.progress) o.progress(fmt::format("full verification of the default {}", spec->describe(def.values)));
    auto e = backend.verify(source, o.display_name);
    if (!e) return e.error();
    VariantRow& d = r.rows.front();
    d.full = e->passed() ? "passed" : "failed";
    if (e->passed()) d.full_ms = e->median_ms();
    else d.reason = fmt::format("full verification: {} — {}", to_string(e->verdict), first_line(e->reason, 120));
    def_full = *e;
  }
  if (!r.default_kept && def_full && def_full->passed()) {
    const Evaluation& w = *r.evaluation;
    double noise = std::max({def_full->noise_ms(), w.noise_ms(), o.min_gain * def_full->median_ms()});
    if (!(w.median_ms() < def_full->median_ms() - noise)) {
      why_default = fmt::format("{} led in screening but was not faster in full ({:.4f} ms vs {:.4f} ms, noise {:.3g} ms)",
                                spec->describe(r.rows[r.chosen].values), w.median_ms(), def_full->median_ms(), noise);
      r.default_kept = true;
    }
  }
  if (r.default_kept) {
    r.chosen = 0;
    r.source = source;
    r.evaluation = def_full;
    r.summary = fmt::format("kept the default ({}): {}", spec->describe(def.values), why_default);
  } else {
    const VariantRow& w = r.rows[r.chosen];
    r.summary = fmt::format("chose {} over the default ({}): screened {:.4f} ms vs {}, {:.4f} ms in full{}",
                            spec->describe(w.values), spec->describe(def.values), *w.screened_ms,
                            def.screened_ms ? fmt::format("{:.4f} ms", *def.screened_ms) : "a failing default",
                            *w.full_ms,
                            def_full ? def_full->passed() ? fmt::format(" vs {:.4f} ms", def_full->median_ms())
                                                          : std::string(" (the default fails in full)")
                                     : std::string());
  }
  return r;
}

std::string TuneResult::markdown() const {
  std::string s = "| variant |";
  for (const auto& k : spec.knobs) s += fmt::format(" {} |", k.name);
  s += " compile | screened ms | verdict | full | note |\n|---|";
  for (std::size_t i = 0; i < spec.knobs.size(); ++i) s += "---|";
  s += "---|---|---|---|---|\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const VariantRow& row = rows[i];
    std::string name = fmt::format("{}{}{}", i, row.is_default ? " (default)" : "", i == chosen ? " **chosen**" : "");
    s += fmt::format("| {} |", name);
    for (int64_t v : row.values) s += fmt::format(" {} |", v);
    std::string full = row.full.empty() ? "" : row.full_ms ? fmt::format("{} {:.4f} ms", row.full, *row.full_ms) : row.full;
    std::string note = !row.compile_note.empty() ? row.compile_note : row.reason;
    // A table cell ends at '|': keep notes readable.
    std::replace(note.begin(), note.end(), '|', '/');
    s += fmt::format(" {}{} | {} | {} | {} | {} |\n", row.compile, row.cache_hit ? " (cached)" : "", ms(row.screened_ms),
                     row.verdict ? to_string(*row.verdict) : "—", full, note);
  }
  s += "\n" + summary + "\n";
  return s;
}

nlohmann::json TuneResult::to_json() const {
  nlohmann::json knobs = nlohmann::json::array();
  for (const auto& k : spec.knobs) knobs.push_back({{"name", k.name}, {"values", k.values}, {"default", k.default_value}});
  nlohmann::json constraints = nlohmann::json::array();
  for (const auto& c : spec.constraints) constraints.push_back(c.text);
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& row : rows) {
    nlohmann::json values = nlohmann::json::object();
    for (std::size_t i = 0; i < spec.knobs.size(); ++i) values[spec.knobs[i].name] = row.values.at(i);
    nlohmann::json v = {{"values", values}, {"default", row.is_default}, {"compile", row.compile},
                        {"cache_hit", row.cache_hit}};
    if (!row.compile_note.empty()) v["compile_note"] = row.compile_note;
    if (row.verdict) v["verdict"] = to_string(*row.verdict);
    if (!row.reason.empty()) v["reason"] = row.reason;
    if (row.screened_ms) v["screened_ms"] = *row.screened_ms;
    if (row.screened_noise_ms) v["screened_noise_ms"] = *row.screened_noise_ms;
    if (!row.full.empty()) v["full_verification"] = row.full;
    if (row.full_ms) v["full_ms"] = *row.full_ms;
    variants.push_back(std::move(v));
  }
  nlohmann::json chosen_values = nlohmann::json::object();
  for (std::size_t i = 0; i < spec.knobs.size(); ++i) chosen_values[spec.knobs[i].name] = rows.at(chosen).values.at(i);
  return {{"knobs", knobs},
          {"constraints", constraints},
          {"combinations", plan.combinations},
          {"feasible", plan.feasible},
          {"sampled", plan.sampled},
          {"variants", variants},
          {"chosen", chosen},
          {"chosen_values", chosen_values},
          {"default_kept", default_kept},
          {"summary", summary},
          // Screened times rank variants; only full_ms (a full evaluation) is a result.
          {"note", "screened_ms comes from the judge's screening settings and only ranks variants"}};
}

}  // namespace cutegen
