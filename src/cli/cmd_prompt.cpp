// `cutegen prompt KIND PROBLEM [KERNEL]`: the conversation the loop would send, as the exec backend's
// command reads it on stdin (or, with --json, the request's messages), without a GPU. The problem is
// loaded on the CPU by the worker, as `bench --baselines-only --device cpu` does; whatever a run
// measures on the GPU is a labelled placeholder (agent/prompt_preview.h).
#include <filesystem>

#include <fmt/format.h>

#include "agent/prompt_preview.h"
#include "agent/template_prompter.h"
#include "cli/commands.h"
#include "common/json_text.h"
#include "common/fs.h"
#include "common/terminal_text.h"
#include "run/reference_worker.h"

namespace cutegen::cli {
namespace fs = std::filesystem;
namespace {

struct PromptArgs {
  std::string kind;
  std::string problem;
  std::string kernel;
  std::string base;
  std::string verdict = "compile_error";
  std::string evidence;
  std::string diagnosis;
  std::string precision = to_string(kDefaultPrecision);
  std::string arch;
  std::string examples = "library";
  int step = 1;
  int steps = 8;
  std::string profile_from = "auto";
  bool json = false;
};

// The problem's facts as the judge's `load` reports them, from the worker's `prompt_facts`: built and run on
// meta tensors (a KernelBench-size problem once needed its gigabytes on the CPU, and the out-of-memory
// killer ended the worker on a 24 GiB machine). No GPU name: the prompt shows a placeholder.
Result<ProblemInfo> describe_without_gpu(const fs::path& problem) {
  auto source = read_file(problem);
  if (!source) return source.error();
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-prompt-");
  if (!dir) return dir.error();
  Result<nlohmann::json> meta = Error{"the worker did not start"};
  {
    auto worker = PythonWorker::start({.log_path = *dir / "worker.log"});
    if (!worker) meta = worker.error();
    else
      meta = (*worker)->call("prompt_facts", {{"problem", fs::absolute(problem).string()}}, std::chrono::seconds(600));
  }
  std::error_code ec;
  fs::remove_all(*dir, ec);  // a temporary directory left behind is harmless; nothing to tell
  if (!meta) return meta.error();
  auto facts = ProblemFacts::from_json(*meta);
  if (!facts) return Error{"the worker's prompt_facts answer: " + facts.error().message + " (a worker bug)"};
  ProblemInfo info;
  info.source = std::move(*source);
  info.facts = std::move(*facts);
  info.facts.gpu.clear();
  return info;
}

Result<std::string> read_optional(const std::string& path, const char* what) {
  if (path.empty()) return std::string();
  auto text = read_file(path);
  if (!text) return Error{fmt::format("{}: {}", what, text.error().message)};
  return text;
}

int run_prompt(const GlobalOptions& global, const PromptArgs& args) {
  auto kind = parse_prompt_kind(args.kind);
  if (!kind) return fail(kind.error().message);
  auto precision = parse_precision(args.precision);
  if (!precision) return fail(precision.error().message);
  auto verdict = parse_verdict(args.verdict);
  if (!verdict) return fail(fmt::format("--verdict {}: not a verdict of the judge (e.g. compile_error, mismatch)",
                                        args.verdict));
  auto profile = ProfilePolicy::parse(args.profile_from);
  if (!profile) return fail(profile.error().message);
  if (args.step > args.steps) return fail(fmt::format("--step {} is beyond --steps {}", args.step, args.steps));
  PreviewInputs in{.kind = *kind, .verdict = *verdict, .step = args.step, .max_steps = args.steps, .profile = *profile};
  for (auto [into, path, what] : {std::tuple{&in.kernel, args.kernel, "KERNEL"}, std::tuple{&in.base, args.base, "--base"},
                                  std::tuple{&in.evidence, args.evidence, "--evidence"}}) {
    auto text = read_optional(path, what);
    if (!text) return fail(text.error().message);
    *into = std::move(*text);
  }
  in.diagnosis = args.diagnosis;
  if (auto ok = check_preview_inputs(in); !ok.ok()) return fail(ok.error().message);
  // The architecture the run would compile for: --arch, else the configuration's.
  auto compile = resolve_compile_options(global, args.arch);
  if (!compile) return fail(compile.error().message);
  auto prompter = TemplatePrompter::create({.precision = *precision,
                                            .arch = compile->arch,
                                            .show_example = args.examples == "library",
                                            .gpu_placeholders = true});
  if (!prompter) return fail(prompter.error().message);
  auto problem = describe_without_gpu(args.problem);
  if (!problem) return fail(problem.error().message);
  auto messages = preview_conversation(**prompter, *problem, in);
  if (!messages) return fail(messages.error().message);
  if (args.json) {
    print_safe(stdout, "{}\n", dump_json(nlohmann::json{{"messages", to_json(*messages)}, {"params", nlohmann::json::object()}}, 2));
  } else {
    print_safe(stdout, "{}", render_as_text(*messages));
  }
  return 0;
}

}  // namespace

void add_prompt_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto a = std::make_shared<PromptArgs>();
  auto* cmd = app.add_subcommand(
      "prompt",
      "Print the conversation the loop sends for one prompt (synthesis, diagnose, repair, optimize, restart) exactly "
      "as an exec:'COMMAND' backend reads it on stdin; needs no GPU (GPU measurements are labelled placeholders)");
  cmd->footer(
      "The problem is loaded on the CPU at its own size (a KernelBench-size problem needs that much memory). The "
      "problem file is Python that cutegen imports and runs: give only a file you would run yourself. "
      "docs/prompts.md says what each prompt contains.");
  cmd->add_option("kind", a->kind, "synthesis, diagnose, repair, optimize or restart")->required();
  cmd->add_option("problem", a->problem, "KernelBench-format problem file")->required()->check(CLI::ExistingFile);
  cmd->add_option("kernel", a->kernel, "the kernel the prompt is about (.cu): required for diagnose, repair, optimize")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", a->json, "print the request (its messages, with the cache mark on the system message) as JSON");
  cmd->add_option("--precision", a->precision, "strict, tf32 or bf16, as the run would use")
      ->check(CLI::IsMember(precision_names()))
      ->capture_default_str();
  cmd->add_option("--arch", a->arch, "the architecture the run compiles for (default: the configuration's, sm_90a)");
  cmd->add_option("--examples", a->examples, "library or none, as `optimize --examples`")
      ->check(CLI::IsMember({"library", "none"}))
      ->capture_default_str();
  cmd->add_option("--verdict", a->verdict, "diagnose, repair, restart: the failure's verdict word")
      ->capture_default_str();
  cmd->add_option("--evidence", a->evidence, "diagnose, repair, restart: a file with the judge's evidence to show")
      ->check(CLI::ExistingFile);
  cmd->add_option("--base", a->base,
                  "diagnose: the correct kernel an optimisation step changed into KERNEL (the prompt shows the diff)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--diagnosis", a->diagnosis, "repair: the diagnosis text to act on");
  cmd->add_option("--step", a->step, "optimize: the step number (decides whether a profile is shown)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--steps", a->steps, "optimize: the step budget")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--profile-from", a->profile_from, "optimize: auto, always, never or a step number, as `optimize`")
      ->capture_default_str();
  cmd->callback([&global, &exit_code, a] { exit_code = run_prompt(global, *a); });
}

}  // namespace cutegen::cli
