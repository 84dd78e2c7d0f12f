#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "common/json_text.h"
#include "cli/commands.h"
#include "cli/judge_stack.h"
#include "common/fs.h"
#include "common/locations.h"
#include "common/process.h"
#include "compile/nvcc_compiler.h"
#include "run/judge.h"

namespace cutegen::cli {
namespace fs = std::filesystem;
namespace {

struct EvalArgs {
  std::string problem;
  std::string kernel;
  std::string json_path;
  JudgeArgs judge{.trials = 5, .runs = 100};
  bool no_baselines = false;
};

int run_eval(const GlobalOptions& global, const EvalArgs& args) {
  // Read (and announced) before anything runs: a refused config must stop the command first.
  if (auto config = load_config(global); !config) return fail(config.error().message);
  auto source = read_file(args.kernel);
  if (!source) return fail(source.error().message);
  auto work = make_unique_dir(fs::temp_directory_path(), "cutegen-eval-");
  if (!work) return fail(work.error().message);
  EvalOptions eo = args.judge.eval_options();
  eo.baselines = !args.no_baselines;
  auto stack = make_judge_stack(global, args.judge.arch, eo, *work);
  if (!stack) return fail(stack.error().message);
  Judge& judge = *(*stack)->judge;
  fmt::print(stderr, "evaluating {} on {} (compile, {} trials + robustness, {} timed runs{}) ...\n",
             fs::path(args.kernel).filename().string(), fs::path(args.problem).filename().string(), args.judge.trials, args.judge.runs,
             args.no_baselines ? "" : ", eager and torch.compile baselines");
  auto report = judge.evaluate(args.problem, *source, fs::path(args.kernel).filename().string());
  if (!report) return fail(report.error().message);
  fmt::print("{}", report->summary());
  if (!args.json_path.empty()) {
    if (auto w = write_file_atomic(args.json_path, dump_json(report->to_json(), 2)); !w) return fail(w.error().message);
  }
  if (report->passed()) return 0;
  return fail(fmt::format("{}: {}", to_string(report->verdict), report->reason));
}

}  // namespace

bool gpu_visible(std::string& why) {
  PosixProcessRunner runner;
  auto r = runner.run({.argv = {"nvidia-smi", "-L"}, .timeout = std::chrono::seconds(30)});
  if (!r) {
    why = "no NVIDIA driver is installed (nvidia-smi not found)";
    return false;
  }
  if (!r->succeeded() || r->out.find("GPU") == std::string::npos) {
    why = "nvidia-smi lists no GPU";
    return false;
  }
  return true;
}

void add_eval_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto args = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "Judge a kernel against a problem: correctness, timing, baselines, roofline");
  cmd->add_option("problem", args->problem, "KernelBench-format problem file (Model, get_inputs, get_init_inputs)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("kernel", args->kernel, "the candidate .cu file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--json", args->json_path, "write the full report as JSON to this file");
  add_judge_options(cmd, args->judge, "");
  cmd->add_flag("--no-baselines", args->no_baselines, "skip timing eager PyTorch and torch.compile");
  cmd->callback([&global, &exit_code, args] { exit_code = run_eval(global, *args); });
}

}  // namespace cutegen::cli
