// `cutegen profile problem.py kernel.cu`: evaluate the kernel (it must pass: counters of a wrong
// kernel mislead), then run Nsight Compute on the runner calling it on the evaluation's timing
// inputs, and print the summary the LLM would read.
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "common/json_text.h"
#include "cli/commands.h"
#include "cli/judge_stack.h"
#include "common/fs.h"
#include "common/locations.h"
#include "profile/ncu_profile_provider.h"
#include "run/judge.h"
#include "run/roofline.h"
#include "common/terminal_text.h"

namespace cutegen::cli {
namespace fs = std::filesystem;
namespace {

struct ProfileArgs {
  std::string problem;
  std::string kernel;
  std::string json_path;
  // No other shapes: the profile is about speed at the problem's own shape (`cutegen eval` runs them).
  JudgeArgs judge{.trials = 1, .runs = 20, .generalize = 0};
  int calls = 2;
  int launch_count = 50;
  int timeout_s = 600;
  std::string ncu;
};

int run_profile(const GlobalOptions& global, const ProfileArgs& args) {
  // Read (and announced) before anything runs: a refused config must stop the command first.
  if (auto config = load_config(global); !config) return fail(config.error().message);
  auto source = read_file(args.kernel);
  if (!source) return fail(source.error().message);
  auto work = make_unique_dir(fs::temp_directory_path(), "cutegen-profile-");
  if (!work) return fail(work.error().message);
  // Few checks and timed runs: this evaluation only has to establish that the kernel is right and
  // give the summary a time to place on the roofline; `cutegen eval` is the thorough judge.
  EvalOptions eo = args.judge.eval_options();
  eo.baselines = false;
  auto stack = make_judge_stack(global, args.judge.arch, eo, *work);
  if (!stack) return fail(stack.error().message);
  Judge& judge = *(*stack)->judge;
  std::string kernel_name = fs::path(args.kernel).filename().string();
  print_safe(stderr, "evaluating {} on {} ...\n", kernel_name, fs::path(args.problem).filename().string());
  auto report = judge.evaluate(args.problem, *source, kernel_name);
  if (!report) return fail(report.error().message);
  if (!report->passed()) {
    print_safe(stdout, "{}", report->summary());
    return fail(fmt::format("profile needs a kernel that passes evaluation ({}): fix it first (`cutegen eval` shows "
                            "the evidence)",
                            to_string(report->verdict)));
  }
  auto invocation = judge.profiling_run(args.problem, *report, args.calls);
  if (!invocation) return fail(invocation.error().message);

  ProfileRequest request;
  request.target = invocation->argv;
  request.target_result = invocation->result;
  request.work_dir = *work / "profile";
  request.context = context_from_evaluation(*report, args.calls);
  NcuOptions no;
  no.ncu = args.ncu;
  no.launch_count = args.launch_count;
  no.timeout = std::chrono::seconds(args.timeout_s);
  NcuProfileProvider provider((*stack)->runner, no);
  print_safe(stderr, "profiling {} call(s) with Nsight Compute (at most {} kernel launches) ...\n", args.calls,
             args.launch_count);
  auto profiled = provider.profile(request);
  if (!profiled) return fail(profiled.error().message);
  print_safe(stdout, "{}", profiled->summary);
  print_safe(stderr, "profiled in {:.1f} s after a {:.1f} s evaluation{}\n", profiled->seconds, report->seconds,
             profiled->log_path.empty() ? "" : "; ncu log: " + profiled->log_path.string());
  if (!args.json_path.empty()) {
    nlohmann::json j = {{"evaluation", report->to_json()}, {"profile", profiled->to_json()}};
    if (auto w = write_file_atomic(args.json_path, dump_json(j, 2)); !w) return fail(w.error().message);
  }
  if (!profiled->ok()) return fail(fmt::format("{}: {}", to_string(profiled->status), profiled->message));
  return 0;
}

}  // namespace

void add_profile_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto args = std::make_shared<ProfileArgs>();
  auto* cmd = app.add_subcommand(
      "profile", "Profile a passing kernel with Nsight Compute and print the summary the LLM reads");
  cmd->add_option("problem", args->problem, "KernelBench-format problem file (Model, get_inputs, get_init_inputs)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("kernel", args->kernel, "the candidate .cu file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--json", args->json_path, "write the evaluation and every parsed metric per kernel as JSON");
  add_judge_options(cmd, args->judge,
                    fmt::format("before profiling ({} here, {} in `cutegen eval`: the profile is about speed; "
                                "`cutegen eval` gives the verdict)",
                                ProfileArgs{}.judge.trials, JudgeArgs{}.trials));
  cmd->add_option("--calls", args->calls, "forward calls to profile (each kernel launch is profiled)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--launch-count", args->launch_count, "profile at most this many kernel launches")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--timeout", args->timeout_s, "seconds before ncu is stopped")->check(CLI::Range(1, 86400));
  cmd->add_option("--ncu", args->ncu, "the ncu executable (default: $CUTEGEN_NCU, PATH, /usr/local/cuda/bin)");
  cmd->callback([&global, &exit_code, args] { exit_code = run_profile(global, *args); });
}

}  // namespace cutegen::cli
