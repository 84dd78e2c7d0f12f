#pragma once
// The autotuner: every variant of a kernel's knobs (knobs.h) compiled in parallel on the CPU, each
// timed once on the judge's timing path with screening settings (fewer trials and timed calls), the
// fastest passing one then judged in full, and written out with its values baked in as the defaults.
// A screened time ranks variants and is never reported as a result: only a full evaluation is.
// `cutegen tune` runs it on one kernel; the loop runs it after an accepted step (docs/tuning.md).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/evaluation.h"
#include "common/result.h"
#include "compile/compiler.h"
#include "tune/knobs.h"

namespace cutegen {

// What the tuner needs from the compile stage and the judge; tests script it.
class TuneBackend {
 public:
  virtual ~TuneBackend() = default;
  // Called from several threads at once (the -j workers). Error: the tool failed, not the variant.
  virtual Result<CompileOutcome> compile(const CompileRequest& request) = 0;
  // One variant (the source with its -D defines) under the judge's screening settings.
  virtual Result<Evaluation> screen(const CompileRequest& request) = 0;
  // Several variants screened together (the judge's screening groups: a session for up to eight, each call's
  // inputs staged once); one evaluation per request, in order. By default one screen() after another.
  virtual Result<std::vector<Evaluation>> screen_all(const std::vector<CompileRequest>& requests) {
    std::vector<Evaluation> out;
    for (const auto& r : requests) {
      auto e = screen(r);
      if (!e) return e.error();
      out.push_back(std::move(*e));
    }
    return out;
  }
  // A baked source under the judge's full settings: the result that may be reported.
  virtual Result<Evaluation> verify(const std::string& source, const std::string& display_name) = 0;
};

// The config's "tune" object: {"max_variants": N, "loop_max_variants": N, "jobs": N}. `cutegen tune`
// tries max_variants unless its command line says otherwise; the loop's tuning, which runs after
// every accepted step and screens each variant on the GPU, has the smaller budget loop_max_variants.
// Unknown keys are errors.
struct TuneConfig {
  std::size_t max_variants = 32;
  std::size_t loop_max_variants = 12;
  int jobs = 2;
};
Result<TuneConfig> apply_tune_config(TuneConfig base, const nlohmann::json& section);

struct TuneOptions {
  std::size_t max_variants = 64;
  int jobs = 2;                  // parallel compiles
  double min_gain = 0.02;        // a winner's screened time must beat the default's by this much (relative)
                                 // and by both variants' noise
  // The default is judged in full too, and a chosen variant must beat it there by the same noise
  // rule; false: the caller already holds the default's full evaluation and compares (the loop).
  bool verify_default = true;
  std::string display_name = "kernel.cu";
  std::function<void(const std::string&)> progress;  // one line per event worth showing
};

// One row of the table: a variant and how far it got.
struct VariantRow {
  KnobValues values;
  bool is_default = false;
  std::string compile = "not compiled";  // a CompileVerdict word
  std::string compile_note;              // the first error or violation, one line
  bool cache_hit = false;
  std::optional<Verdict> verdict;        // the screening's verdict (absent: not screened)
  std::string reason;                    // why it failed screening or full verification, one line
  std::optional<double> screened_ms, screened_noise_ms;
  // Full verification of this variant, when it was the chosen one: "passed", "failed" or "" (not run).
  std::string full;
  std::optional<double> full_ms;
};

struct TuneResult {
  KnobSpec spec;
  VariantPlan plan;
  std::vector<VariantRow> rows;      // plan.variants' order: the default first
  std::size_t chosen = 0;            // index into rows
  bool default_kept = true;          // no variant beat the default (or the winners failed full verification)
  std::string source;                // the chosen variant baked in (the original source when the default is kept)
  std::optional<Evaluation> evaluation;  // the chosen variant's full evaluation (absent: default kept without verify_default)
  std::string summary;               // one line: what tuning chose and why

  std::string markdown() const;      // the table for people (and the next prompt)
  nlohmann::json to_json() const;    // the table and the choice, for tools and the run log
};

// Error: the source declares no knobs or declares them wrongly, or a stage failed as a tool. A variant
// that fails (compile error, mismatch) is a row with its reason, never chosen.
Result<TuneResult> tune_kernel(const std::string& source, TuneBackend& backend, const TuneOptions& options);

// The -D list for a variant.
std::vector<Define> knob_defines(const KnobSpec& spec, const KnobValues& values);

}  // namespace cutegen
