// `cutegen tune problem.py kernel.cu`: the kernel's knob variants compiled in parallel, each screened
// on the judge's timing path, the fastest judged in full and written out with its values baked in,
// beside a table of every variant (docs/tuning.md).
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/judge_stack.h"
#include "common/fs.h"
#include "common/json_text.h"
#include "tune/judge_tune_backend.h"
#include "tune/tuner.h"
#include "common/terminal_text.h"

namespace cutegen::cli {
namespace fs = std::filesystem;
namespace {

struct TuneArgs {
  std::string problem;
  std::string kernel;
  std::string out;
  std::size_t max_variants = 0;  // 0: the config's tune.max_variants
  int jobs = 0;                  // 0: the config's tune.jobs
  JudgeArgs judge;
};

int run_tune(const GlobalOptions& global, const TuneArgs& args) {
  auto config = load_config(global);
  if (!config) return fail(config.error().message);
  auto source = read_file(args.kernel);
  if (!source) return fail(source.error().message);
  const std::string name = fs::path(args.kernel).filename().string();
  // A kernel without knobs, or with a mistake in them, is told before the GPU and the worker start.
  auto spec = parse_knobs(*source);
  if (!spec) return fail(fmt::format("{}: {}", name, spec.error().message));
  if (spec->empty())
    return fail(fmt::format("{} declares no knobs: add `// cutegen:knob NAME in {{...}}` lines (docs/tuning.md)", name));
  TuneOptions to;
  to.max_variants = args.max_variants ? args.max_variants : config->tune.max_variants;
  to.jobs = args.jobs ? args.jobs : config->tune.jobs;
  to.display_name = name;
  to.progress = [](const std::string& line) { print_safe(stderr, "tune: {}\n", line); };
  if (auto plan = plan_variants(*spec, to.max_variants); !plan) return fail(plan.error().message);

  auto work = make_unique_dir(fs::temp_directory_path(), "cutegen-tune-");
  if (!work) return fail(work.error().message);
  auto stack = make_judge_stack(global, args.judge.arch, args.judge.eval_options(), *work);
  if (!stack) return fail(stack.error().message);
  // Made before the GPU time is spent, so an unwritable --out fails first.
  fs::path out = args.out.empty() ? fs::path(fs::path(args.kernel).stem().string() + "-tuned") : fs::path(args.out);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return fail(fmt::format("--out {}: cannot create it: {}", out.string(), ec.message()));
  JudgeTuneBackend backend(*(*stack)->compiler, *(*stack)->judge, args.problem);
  auto result = tune_kernel(*source, backend, to);
  if (!result) return fail(result.error().message);

  const fs::path kernel_out = out / name;
  for (auto [path, text] : {std::pair{kernel_out, result->source}, std::pair{out / "tune.md", result->markdown()},
                            std::pair{out / "tune.json", dump_json(result->to_json(), 2)}})
    if (auto w = write_file_atomic(path, text); !w) return fail(w.error().message);
  if (result->evaluation)
    if (auto w = write_file_atomic(out / "eval.json", dump_json(result->evaluation->to_json(), 2)); !w)
      return fail(w.error().message);
  print_safe(stdout, "{}\n", result->markdown());
  print_safe(stdout, "wrote {} (the chosen values as its defaults), tune.md, tune.json{}\n", kernel_out.string(),
             result->evaluation ? ", eval.json (its full evaluation)" : "");
  if (result->evaluation && !result->evaluation->passed())
    return fail(fmt::format("the kernel fails the judge with its default knobs too ({}: {}): fix it first",
                            to_string(result->evaluation->verdict), first_line(result->evaluation->reason, 160)));
  return 0;
}

}  // namespace

void add_tune_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto args = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand(
      "tune", "Try a kernel's knob values: compile the variants in parallel, screen them together on the judge, judge the "
              "fastest in full and write it out with a table of every variant (docs/tuning.md)");
  cmd->add_option("problem", args->problem, "KernelBench-format problem file")->required()->check(CLI::ExistingFile);
  cmd->add_option("kernel", args->kernel, "the candidate .cu file declaring `// cutegen:knob` lines")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--max-variants", args->max_variants,
                  "most variants to try, the default among them; more allowed combinations are sampled the same way "
                  "every run (default: config tune.max_variants, 32)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("-j,--jobs", args->jobs, "parallel compiles (default: config tune.jobs, 2)")->check(CLI::Range(1, 256));
  cmd->add_option("--out", args->out, "directory for the tuned kernel, tune.md, tune.json and eval.json "
                                      "(default: <kernel stem>-tuned)");
  add_judge_options(cmd, args->judge, "(for the full verification; screening uses one)");
  cmd->callback([&global, &exit_code, args] { exit_code = run_tune(global, *args); });
}

}  // namespace cutegen::cli
