#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "common/json_text.h"
#include "cli/commands.h"
#include "cli/judge_stack.h"
#include "common/fs.h"
#include "common/locations.h"
#include "common/process.h"
#include "compile/nvcc_compiler.h"
#include "run/judge.h"
#include "common/terminal_text.h"

namespace cutegen::cli {
namespace fs = std::filesystem;
namespace {

struct EvalArgs {
  std::string problem;
  std::vector<std::string> kernels;
  std::string json_path;
  JudgeArgs judge;
  bool no_baselines = false;
};

// Where each kernel's JSON report goes: the file itself for one kernel; for several, DIR/<stem>.json
// (a stem met again gets -2, -3 ...).
std::vector<fs::path> json_paths(const std::string& json, const std::vector<std::string>& kernels) {
  if (json.empty()) return std::vector<fs::path>(kernels.size());
  if (kernels.size() == 1) return {json};
  std::vector<fs::path> paths;
  std::map<std::string, int> seen;
  for (const auto& k : kernels) {
    std::string stem = fs::path(k).stem().string();
    int n = ++seen[stem];
    paths.push_back(fs::path(json) / (n == 1 ? stem + ".json" : fmt::format("{}-{}.json", stem, n)));
  }
  return paths;
}

int run_eval(const GlobalOptions& global, const EvalArgs& args) {
  // Read (and announced) before anything runs: a refused config must stop the command first.
  if (auto config = load_config(global); !config) return fail(config.error().message);
  std::vector<std::string> sources;
  for (const auto& k : args.kernels) {
    auto source = read_file(k);
    if (!source) return fail(source.error().message);
    sources.push_back(*source);
  }
  auto outputs = json_paths(args.json_path, args.kernels);
  if (args.kernels.size() > 1 && !args.json_path.empty()) {
    std::error_code ec;
    fs::create_directories(args.json_path, ec);
    if (ec) return fail(fmt::format("--json {}: with several kernels this is a directory, and it cannot be made: {}",
                                    args.json_path, ec.message()));
  }
  auto work = make_unique_dir(fs::temp_directory_path(), "cutegen-eval-");
  if (!work) return fail(work.error().message);
  EvalOptions eo = args.judge.eval_options();
  eo.baselines = !args.no_baselines;
  auto stack = make_judge_stack(global, args.judge.arch, eo, *work);
  if (!stack) return fail(stack.error().message);
  Judge& judge = *(*stack)->judge;
  std::vector<std::string> failed;
  for (std::size_t i = 0; i < args.kernels.size(); ++i) {
    std::string name = fs::path(args.kernels[i]).filename().string();
    print_safe(stderr, "{}evaluating {} on {} (compile, {} trials + robustness, {}{} timed calls{}{}) ...\n",
               args.kernels.size() > 1 ? fmt::format("[{}/{}] ", i + 1, args.kernels.size()) : "", name,
               fs::path(args.problem).filename().string(), args.judge.trials,
               eo.timed_budget_s ? "up to " : "", args.judge.runs,
               args.judge.generalize ? fmt::format(", {} other shape(s)", args.judge.generalize) : "",
               args.no_baselines ? "" : ", eager and torch.compile baselines");
    // One worker serves every kernel (the problem is loaded once); the tool failing stops them all.
    auto report = judge.evaluate(args.problem, sources[i], name);
    if (!report) return fail(report.error().message);
    print_safe(stdout, "{}", report->summary());
    std::fflush(stdout);
    if (!outputs[i].empty()) {
      if (auto w = write_file_atomic(outputs[i], dump_json(report->to_json(), 2)); !w) return fail(w.error().message);
    }
    if (!report->passed())
      failed.push_back(args.kernels.size() > 1 ? fmt::format("{} ({})", name, to_string(report->verdict))
                                                : fmt::format("{}: {}", to_string(report->verdict), report->reason));
  }
  if (failed.empty()) return 0;
  if (args.kernels.size() == 1) return fail(failed.front());
  std::string list;
  for (const auto& f : failed) list += (list.empty() ? "" : ", ") + f;
  return fail(fmt::format("{} of {} kernels failed: {}", failed.size(), args.kernels.size(), list));
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
  auto* cmd = app.add_subcommand(
      "eval", "Judge kernels against a problem: correctness, timing, baselines, roofline (several kernels share one worker)");
  cmd->add_option("problem", args->problem, "KernelBench-format problem file (Model, get_inputs, get_init_inputs)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("kernels", args->kernels, "the candidate .cu file(s)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--json", args->json_path,
                  "write the full report as JSON to this file (several kernels: into this directory, one <stem>.json each)");
  add_judge_options(cmd, args->judge, "");
  cmd->add_flag("--no-baselines", args->no_baselines, "skip timing eager PyTorch and torch.compile");
  cmd->callback([&global, &exit_code, args] { exit_code = run_eval(global, *args); });
}

}  // namespace cutegen::cli
