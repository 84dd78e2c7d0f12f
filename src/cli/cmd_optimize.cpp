#include <unistd.h>

#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "agent/judge_evaluator.h"
#include "agent/loop.h"
#include "agent/ncu_profile_source.h"
#include "agent/template_prompter.h"
#include "bench/optimize_result.h"
#include "bench/optimize_runner.h"
#include "cli/commands.h"
#include "cli/judge_stack.h"
#include "cli/loop_args.h"
#include "cli/optimize_seed.h"
#include "cli/seed_trace.h"
#include "cli/progress_line.h"
#include "common/exit_codes.h"
#include "common/fs.h"
#include "common/version.h"
#include "llm/backend_factory.h"
#include "llm/curl_transport.h"
#include "profile/ncu_profile_provider.h"
#include "report/best_dir.h"
#include "report/run_page.h"
#include "report/run_report.h"
#include "report/run_view.h"
#include "store/run_dir.h"
#include "tune/judge_tune_backend.h"
#include "common/terminal_text.h"

namespace cutegen::cli {
namespace fs = std::filesystem;
namespace {

struct OptimizeArgs {
  std::string problem;
  std::string spec;
  std::string out;
  bool resume = false;
  std::string record;
  LoopArgs loop;
  JudgeArgs judge = loop_judge_args();
  double max_cost = 0;
  long long max_tokens = 0;
  long long max_calls = 0;
  std::string gpu_lock;  // a device lock file shared with other tasks on this GPU (cutegen bench)
};


constexpr const char* kDefaultRunsDir = "cutegen-runs";

Result<RunDir> claim_run_dir(const OptimizeArgs& args) {
  const std::string version = fmt::format("{} ({})", CUTEGEN_VERSION, CUTEGEN_GIT_COMMIT);
  if (args.out.empty()) return RunDir::create_unique(kDefaultRunsDir, fs::path(args.problem).stem().string(), version);
  return RunDir::open(args.out, args.resume ? RunDir::Mode::resume : RunDir::Mode::fresh, version);
}

// Profiling measures on the GPU like the judge does, so it holds the same device lock (the judge's
// own hold inside profiling_run nests in this one), and like the judge it gives the worker's device
// memory back before the GPU goes to another task (the profile's staged buffers would stay otherwise).
class LockedProfileSource final : public ProfileSource {
 public:
  LockedProfileSource(ProfileSource& inner, DeviceLock& lock, Judge& judge) : inner_(inner), lock_(lock), judge_(judge) {}
  Result<std::string> summary(const std::string& kernel_source, const Evaluation& evaluation) override {
    auto hold = lock_.hold();
    if (!hold) return hold.error();
    auto summary = inner_.summary(kernel_source, evaluation);
    auto released = judge_.give_back_gpu();
    if (summary && !released) return released.error();
    return summary;
  }

 private:
  ProfileSource& inner_;
  DeviceLock& lock_;
  Judge& judge_;
};

// result.json: the run's outcome as cutegen bench reads it (bench/task_record.h).
Status write_task_result(const RunFiles& files, bench::TaskRecord r, const DeviceLock* lock, double wall_s) {
  if (lock) {
    r.gpu_busy_s = lock->held_seconds();
    r.gpu_wait_s = lock->waited_seconds();
  }
  r.wall_s = wall_s;
  return files.write(bench::kTaskResultFile, r.to_json().dump(2) + "\n");
}

Result<LlmConfig> llm_config(const GlobalOptions& global, const OptimizeArgs& args) {
  auto file = load_config(global);
  if (!file) return file.error();
  return merge_llm_config(file->llm, {.spec = args.spec, .record = args.record, .max_cost = args.max_cost,
                                      .max_tokens = args.max_tokens, .max_calls = args.max_calls});
}

nlohmann::json run_config(const OptimizeArgs& a, const LlmConfig& llm, const std::string& seed_pattern) {
  nlohmann::json j = {{"problem", fs::absolute(a.problem).string()}, {"llm", llm.backend + ":" + llm.model},
          {"steps", a.loop.steps}, {"repair_budget", a.loop.repair_budget}, {"restarts", a.loop.restarts}, {"plateau", a.loop.plateau}, {"candidates", a.loop.candidates},
          {"target_sol", a.loop.target_sol}, {"profile_from", a.loop.profile_from}, {"start", a.loop.start}, {"examples", a.loop.examples}, {"tune", a.loop.tune}, {"precision", a.judge.precision},
          {"trials", a.judge.trials}, {"runs", a.judge.runs}, {"generalize", a.judge.generalize}, {"seed", a.judge.seed},
          {"runner_timeout_s", a.judge.runner_timeout_s}, {"arch", a.judge.arch.empty() ? "sm_90a" : a.judge.arch},
          {"cutegen", fmt::format("{} ({})", CUTEGEN_VERSION, CUTEGEN_GIT_COMMIT)}};
  if (!seed_pattern.empty()) j["seed_pattern"] = seed_pattern;
  return j;
}

// No LLM named (--llm none, or no --llm and no llm.backend in the config): the seed path.
Result<bool> without_llm(const GlobalOptions& global, const OptimizeArgs& args) {
  if (args.spec == "none") return true;
  if (!args.spec.empty()) return false;
  auto file = load_config(global);
  if (!file) return file.error();
  return file->llm.backend.empty();
}

int run_optimize(const GlobalOptions& global, const OptimizeArgs& args) {
  auto no_llm = without_llm(global, args);
  if (!no_llm) return fail(no_llm.error().message);
  auto profile = ProfilePolicy::parse(args.loop.profile_from);
  if (!profile) return fail(profile.error().message);
  auto config = *no_llm ? Result<LlmConfig>(LlmConfig{.backend = "none", .model = "seed"}) : llm_config(global, args);
  if (!config) return fail(config.error().message);
  if (args.resume && args.out.empty()) return fail("--resume needs --out DIR naming the run to continue");
  // Without an LLM the seed is all there is: a problem without one stops here, in seconds, before a
  // run directory or a GPU is needed.
  std::optional<RunSeed> seed;
  if (*no_llm) {
    if (args.loop.start == "scratch") return fail("--start scratch needs an LLM to write the first kernel: give --llm");
    auto s = seed_for_run("auto", args.problem, "", parse_precision(args.judge.precision).value());
    if (!s) return fail(s.error().message);
    if (s->source.empty()) {
      (void)fail(s->note + "; give --llm");
      return kExitNoSeed;  // bench records the task as having no seed (bench/task_record.h)
    }
    seed = std::move(*s);
    print_safe(stderr, "seed: {}\n", seed->description);
  }

  // The directory is checked and locked before anything is written: a foreign directory is refused
  // untouched, and a second cutegen on the same run fails here, naming the first.
  auto run_dir = claim_run_dir(args);
  if (!run_dir) return fail(run_dir.error().message);
  const fs::path out = run_dir->path();
  // Until the loop starts, a failed fresh start (no GPU, no nvcc) takes its directory away again.
  auto give_up = [&run_dir](const std::string& why) {
    auto removed = run_dir->abandon();
    return fail(removed ? why : fmt::format("{} (and {})", why, removed.error().message));
  };

  const auto started = std::chrono::steady_clock::now();
  auto wall = [&started] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  EvalOptions eo = args.judge.eval_options();
  std::unique_ptr<DeviceLock> gpu_lock;
  if (!args.gpu_lock.empty()) {
    gpu_lock = std::make_unique<DeviceLock>(args.gpu_lock);
    eo.device_lock = gpu_lock.get();
  }
  // The log is read before the judge starts (seconds, with torch): a log that cannot be resumed is
  // refused at once.
  auto journal = Journal::open(out / "events.jsonl", args.resume);
  if (!journal) return give_up(journal.error().message);
  if (journal->nothing_recorded())
    print_safe(stderr, "resume: nothing was recorded in {} yet; starting from the beginning\n", out.string());
  else if (args.resume)  // where the replay must arrive, as the report reads the log
    print_safe(stderr, "resume: {}\n", journal->logged_history().summary_line());
  // Each evaluation gets its own directory under work/ (Judge::fresh_work_dir), and the lock keeps
  // every other run out of this one's work/.
  auto stack = make_judge_stack(global, args.judge.arch, eo, out / "work");
  if (!stack) return give_up(stack.error().message);
  // With an LLM, traced once the GPU is known to be there: a start that cannot run costs no tracing.
  if (!seed) {
    // --start seed without one ends as a run without an LLM does (kExitNoSeed); auto lets the LLM start.
    auto s = seed_for_run(args.loop.start == "seed" ? "auto" : args.loop.start, args.problem, "", eo.precision);
    if (!s) return give_up(s.error().message);
    if (args.loop.start == "seed" && s->source.empty()) {
      (void)give_up(s->note + "; use --start scratch");
      return kExitNoSeed;
    }
    seed = std::move(*s);
    if (!seed->pattern.empty())
      print_safe(stderr, "seed: {} (the first kernel; --start scratch has the LLM write it)\n", seed->description);
    else if (!seed->note.empty())
      print_safe(stderr, "{}: the LLM writes the first kernel\n", seed->note);
  }
  RunFiles files(out);
  // A resumed run keeps the config.json it started with. One that recorded nothing may have been
  // stopped before writing it: it starts from the beginning, so it gets this run's, as a fresh run does.
  if (!args.resume || (journal->nothing_recorded() && !fs::exists(out / "config.json")))
    if (auto w = files.write("config.json", run_config(args, *config, seed->pattern).dump(2)); !w) return give_up(w.error().message);

  JudgeEvaluator evaluator(*(*stack)->judge, *(*stack)->compiler, args.problem, eo.precision);

  CurlTransport http;
  PosixProcessRunner llm_runner;
  BackendDeps deps{http, llm_runner, real_sleep, [](const std::string& line) { print_safe(stderr, "llm: {}\n", line); }};
  auto client = *no_llm ? LlmClient::create(make_no_llm_backend(), PriceTable{}, {})
                        : make_llm_client(*config, deps, out / "usage.jsonl");
  if (!client) return give_up(client.error().message);

  // The prompts name the architecture the run really compiles for (--arch, else the configuration's).
  auto compile_options = resolve_compile_options(global, args.judge.arch);
  if (!compile_options) return give_up(compile_options.error().message);
  auto prompter = TemplatePrompter::create(
      {.precision = eo.precision,
       .arch = compile_options->arch,
       .show_example = args.loop.examples == "library",
       .other_shapes = eo.generalize});
  if (!prompter) return give_up(prompter.error().message);
  NcuOptions ncu_options;
  NcuProfileProvider provider((*stack)->runner, ncu_options);
  NcuProfileSource ncu_profiler(*(*stack)->judge, provider, {.problem = args.problem, .work_dir = out / "profiles"});
  std::optional<LockedProfileSource> locked_profiler;
  if (gpu_lock) locked_profiler.emplace(ncu_profiler, *gpu_lock, *(*stack)->judge);
  ProfileSource& profiler = locked_profiler ? static_cast<ProfileSource&>(*locked_profiler) : ncu_profiler;

  LoopOptions lo;
  args.loop.apply_to(lo);
  lo.profile = *profile;
  lo.seed_source = seed->source;
  lo.seed_pattern = seed->pattern;
  lo.seed_only = *no_llm;
  Budget task_budget(config->task_budget, "task");
  lo.task_budget = &task_budget;
  // The same judge (its compiler and cache, the loaded problem) screens and verifies tuned variants.
  JudgeTuneBackend tuner(*(*stack)->compiler, *(*stack)->judge, args.problem);
  if (args.loop.tune == "auto") {
    auto files_config = load_config(global);
    if (!files_config) return give_up(files_config.error().message);
    lo.tuner = &tuner;
    lo.tune.max_variants = files_config->tune.loop_max_variants;
    lo.tune.jobs = files_config->tune.jobs;
  }

  ProgressLine progress(isatty(STDERR_FILENO));
  std::optional<nlohmann::json> metadata;
  LoopObserver observer;
  observer.progress = [&progress](const LoopStatus& s, const std::string& line) { progress.update(s, line); };
  bool told_about_best = false;
  std::string told_export_note;
  // model_new.py builds the kernel as the judge did: its target, flags and headers (compile_options above).
  auto build = kernel_build_from(*compile_options);
  if (!build) return give_up(build.error().message);
  observer.new_best = [&](const Candidate& c) -> Status {
    auto written = write_best(files, BestKernel{c.source, c.evaluation, args.problem, *build});
    if (!written) return written.error();
    if (!written->note.empty() && !std::exchange(told_about_best, true)) print_safe(stderr, "note: {}\n", written->note);
    if (!written->export_note.empty() && written->export_note != std::exchange(told_export_note, written->export_note))
      print_safe(stderr, "note: {}\n", written->export_note);
    return ok_status();
  };
  print_safe(stderr, "optimizing {} with {} -> {}{}\n", fs::path(args.problem).filename().string(),
             *no_llm ? "no LLM (the seed alone)" : (*client)->backend().kind() + ":" + (*client)->backend().model(),
             out.string(), args.resume && !journal->nothing_recorded() ? " (resuming)" : "");
  Loop loop(**client, evaluator, **prompter, lo.profile.mode() == ProfilePolicy::Mode::never ? nullptr : &profiler,
            *journal, files, lo, observer);
  auto result = loop.run();
  progress.finish();
  // Everything up to the failure is in the event log: say how to continue from it.
  if (!result) {
    const std::string& why = result.error().message;
    // The outcome for cutegen bench: a problem file at fault is that task's verdict, anything else a
    // failed run (--resume may continue it).
    bench::TaskRecord failed = bench::task_record_from(result.error(), args.problem, (*client)->budget().spent());
    if (auto w = write_task_result(files, failed, gpu_lock.get(), wall()); !w)
      print_safe(stderr, "cutegen: {}\n", w.error().message);
    if (result.error().kind == ErrorKind::cannot_resume) return fail(why);
    return fail(fmt::format("{} (the run so far is kept: fix the cause, then add --resume --out {})", why, out.string()));
  }

  // report.md and report.html come from the run directory itself (the run view), as `cutegen report`
  // reads it: one source for both.
  auto view = load_run_view(out);
  if (!view) return fail(fmt::format("the run finished but its report cannot be written: {}", view.error().message));
  std::string report = render_run_report(view->summary);
  if (auto w = files.write("report.md", report); !w) return fail(w.error().message);
  if (auto w = files.write("report.html", render_run_page(*view)); !w) return fail(w.error().message);
  if (auto w = write_task_result(files, bench::task_record_from(*result, args.problem, (*client)->budget().spent()),
                                   gpu_lock.get(), wall()); !w)
    return fail(w.error().message);
  print_safe(stdout, "{}", report);
  if (result->stop_reason == "seed_failed")
    return fail(fmt::format("{} (a cutegen bug: please report it); {} keeps its evaluation; give --llm to have an "
                            "LLM write the kernel",
                            bench::seed_failure_line(result->stop_detail, result->failed_seed), out.string()));
  if (!result->best) return fail("no correct kernel was found; see " + (out / "report.md").string());
  return 0;
}

}  // namespace

void add_optimize_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto a = std::make_shared<OptimizeArgs>();
  auto* cmd = app.add_subcommand("optimize", "Generate, repair and optimize a CuTe kernel for a problem with an LLM");
  cmd->footer("The problem file is Python that cutegen imports and runs (its module code, get_inputs, Model): give "
              "only a file you would run yourself. It runs as you, without your API keys, with a private HOME and no "
              "network (CUTEGEN_WORKER_NETWORK=allow opens it; docs/sandbox.md).");
  cmd->add_option("problem", a->problem, "KernelBench-format problem file: Python that cutegen imports and runs")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--llm", a->spec, "openai:MODEL, anthropic:MODEL, exec:'COMMAND', replay:DIR, manual:DIR, or none: the seed kernel "
                  "alone, judged and exported (docs/seed.md; also without --llm when no llm.backend is configured)");
  cmd->add_option("--out", a->out,
                  "run directory: a new or empty one; with --resume, a run to continue (default: a new "
                  "cutegen-runs/<problem>-<date>-<time>-<ms>-<id>)");
  cmd->add_flag("--resume", a->resume, "continue the run in --out where it stopped (it must not be running)");
  cmd->add_option("--record", a->record, "record every LLM exchange as a cassette in DIR");
  add_loop_options(cmd, a->loop, "");
  add_judge_options(cmd, a->judge, loop_trials_help());
  cmd->add_option("--max-cost", a->max_cost, "stop when the LLM spend reaches this many US dollars")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-tokens", a->max_tokens, "stop when this many LLM tokens are spent")->check(CLI::PositiveNumber);
  cmd->add_option("--max-calls", a->max_calls, "stop after this many LLM calls")->check(CLI::PositiveNumber);
  cmd->add_option("--gpu-lock", a->gpu_lock,
                  "a lock file held while measuring on the GPU, shared with other runs on it (cutegen bench passes it)");
  cmd->callback([&global, &exit_code, a] { exit_code = run_optimize(global, *a); });
}

}  // namespace cutegen::cli
