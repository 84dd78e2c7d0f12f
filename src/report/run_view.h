#pragma once
// A finished (or interrupted) run as the reports see it, read from its directory: the event log
// (events.jsonl, the run's source of truth) and config.json, plus the kernel sources the step
// directories hold for people. report.md and the HTML page are both rendered from this one view, so a
// number cannot differ between them. Which kernels were accepted, rolled back or failed is the run's
// history (runlog/run_history.h), the same reading `--resume` checks its replay against; this view
// adds what only people need: costs and times per phase, the kernels' text and the steps' diffs.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/evaluation.h"
#include "common/result.h"
#include "common/step_record.h"
#include "report/run_report.h"
#include "runlog/run_history.h"

namespace cutegen {

// One evaluation the judge made, in log order.
struct Attempt {
  int index = 0;              // 1-based, in the order of the log
  std::string label;          // the loop's label: synthesis, restart, step3, step3-repair1, step3-c2, tune3 (the
                              // kernel tuning chose after step 3), ...
  AttemptLabel of;            // the same, typed
  int step = 0;               // the optimisation step it belongs to (or a tuning follows); 0 for synthesis and restarts
  bool tuning = false;        // the kernel a tuning of the knobs chose, judged in full
  Evaluation evaluation;
  AttemptFate fate = AttemptFate::failed;  // as the run's history settles it
  std::string source_sha256;  // the kernel's hash (the log's key for it)
  std::string kernel_file;    // relative path of its kernel.cu in the run directory; "" if not there
  std::optional<std::string> source;  // that file's text, when its hash matches the log
};

// An optimisation step with what it changed.
struct StepView {
  StepRecord record;
  std::vector<int> attempts;    // indexes of its evaluations (the step's kernel, then its repairs)
  std::optional<int> base;      // the attempt index of the best kernel the step started from
  std::string diff;             // unified diff: the step's last evaluated kernel against `base`
  std::string diff_missing;     // why there is no diff ("" when there is one, or nothing was evaluated)
  int lines_added = 0, lines_removed = 0;
};

// A profile summary as the LLM read it in an optimisation prompt.
struct ProfileShown {
  int first_step = 0;          // the optimisation step whose prompt first carried it
  std::optional<int> kernel;   // the attempt index of the best kernel it profiles
  std::string summary;
};

// Cost and time of one part of the run.
struct PhaseCost {
  std::string phase;        // describe, synthesis, repair, optimisation, tuning, profiling
  int llm_calls = 0;
  long long tokens = 0;     // input + output
  double cost_usd = 0;
  double llm_seconds = 0;   // the LLM's answer time (latency as measured per call)
  int evaluations = 0;
  double seconds = 0;       // wall time between the log's events, attributed to the event that ended it
};

struct RunView {
  std::filesystem::path dir;
  RunSummary summary;                 // what report.md renders
  std::optional<ProblemFacts> problem;
  std::string precision;              // the judge's precision policy (config.json)
  std::vector<Attempt> attempts;
  std::vector<StepView> steps;        // optimisation and tuning steps, in order (summary.history, with diffs)
  std::vector<ProfileShown> profiles;
  std::vector<PhaseCost> phases;
  std::optional<int> best_attempt;    // index of the best kernel's evaluation
  std::optional<int> first_profiled_step;
  double wall_seconds = 0;            // first logged event to last
  bool finished = false;              // the log ends with the loop's stop decision
  std::vector<std::string> notes;     // what the view could not read (a missing kernel file, ...)

  const Attempt* attempt(int index) const;
};

// Reads a run directory. Error (one line): not a directory, not a cutegen run, no events, a log of
// a format this cutegen does not read, or an event that does not read back (naming events.jsonl:LINE).
Result<RunView> load_run_view(const std::filesystem::path& dir);

}  // namespace cutegen
