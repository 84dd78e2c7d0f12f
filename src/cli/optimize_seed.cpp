#include "cli/optimize_seed.h"

#include <filesystem>

#include <fmt/format.h>

#include "agent/judge_evaluator.h"
#include "cli/seed_trace.h"
#include "common/json_text.h"
#include "common/version.h"
#include "report/best_dir.h"
#include "report/run_report.h"
#include "store/run_dir.h"
#include "store/run_files.h"

namespace cutegen::cli {
namespace fs = std::filesystem;

int run_seed_optimize(const GlobalOptions& global, const SeedOptimizeArgs& args) {
  if (args.resume)
    return fail("--resume continues an LLM run; a run without an LLM has nothing to resume: run it again without "
                "--resume");
  // Matched before a run directory or a GPU is touched: an unmatched problem costs seconds and leaves nothing.
  seed::SeedOutcome seed;
  {
    auto worker = TraceWorker::start();
    if (!worker) return fail(worker.error().message);
    auto outcome = worker->seed(args.problem);
    if (!outcome) return fail(outcome.error().message);
    seed = std::move(*outcome);
  }
  if (!seed.found()) return fail(seed.match.no_seed_line() + "; give --llm");
  const std::string& pattern = seed.match.pointwise->pattern;
  fmt::print(stderr, "seed: pointwise chain y = {}\n", pattern);

  const std::string version = fmt::format("{} ({})", CUTEGEN_VERSION, CUTEGEN_GIT_COMMIT);
  auto run_dir = args.out.empty()
                     ? RunDir::create_unique("cutegen-runs", fs::path(args.problem).stem().string(), version)
                     : RunDir::open(args.out, RunDir::Mode::fresh, version);
  if (!run_dir) return fail(run_dir.error().message);
  const fs::path out = run_dir->path();
  auto give_up = [&run_dir](const std::string& why) {
    auto removed = run_dir->abandon();
    return fail(removed ? why : fmt::format("{} (and {})", why, removed.error().message));
  };
  EvalOptions eo = args.judge.eval_options();
  auto stack = make_judge_stack(global, args.judge.arch, eo, out / "work");
  if (!stack) return give_up(stack.error().message);

  RunFiles files(out);
  nlohmann::json config = {{"problem", fs::absolute(args.problem).string()}, {"llm", "none"},
                           {"seed", {{"kind", "pointwise"}, {"pattern", pattern}}},
                           {"precision", args.judge.precision}, {"trials", args.judge.trials},
                           {"runs", args.judge.runs}, {"seed_value", args.judge.seed},
                           {"arch", args.judge.arch.empty() ? "sm_90a" : args.judge.arch}, {"cutegen", version}};
  if (auto w = files.write("config.json", config.dump(2)); !w) return give_up(w.error().message);
  if (auto w = files.write("seed.cu", seed.source); !w) return give_up(w.error().message);

  JudgeEvaluator evaluator(*(*stack)->judge, *(*stack)->compiler, args.problem, eo.precision);
  fmt::print(stderr, "describing the problem (metadata, eager and torch.compile baselines, roofline floor)\n");
  auto problem = evaluator.describe();
  if (!problem) return fail(problem.error().message);
  fmt::print(stderr, "evaluating the seed kernel ({})\n", (out / "seed.cu").string());
  auto evaluation = evaluator.evaluate(seed.source, "seed.cu");
  if (!evaluation) return fail(evaluation.error().message);
  if (auto w = files.write("seed-eval.json", dump_json(evaluation->to_json(), 2)); !w) return fail(w.error().message);

  RunSummary summary;
  summary.problem_name = problem->name();
  summary.workload_class = problem->facts.workload_class;
  summary.baselines = problem->baselines;
  summary.floor = problem->floor;
  summary.stop_reason = "seed";
  summary.stop_detail = pattern;
  summary.llm = "none";
  summary.profile_policy = "never";
  if (evaluation->passed()) {
    summary.best = *evaluation;
    auto written = write_best(files, BestKernel{seed.source, *evaluation, args.problem});
    if (!written) return fail(written.error().message);
    if (!written->note.empty()) fmt::print(stderr, "note: {}\n", written->note);
  }
  std::string report = render_run_report(summary);
  if (auto w = files.write("report.md", report); !w) return fail(w.error().message);
  fmt::print("{}", report);
  if (!evaluation->passed())
    // A seed is generated to be correct: one that fails is a cutegen bug worth reporting.
    return fail(fmt::format("the seed kernel failed the judge ({}: {}); {} keeps it and its evaluation; give --llm to "
                            "start from scratch, and please report this",
                            to_string(evaluation->verdict), evaluation->reason, out.string()));
  return 0;
}

}  // namespace cutegen::cli
