// `cutegen bench`: a suite of problems, each task one `cutegen optimize` run (or, with
// --baselines-only, the worker's baselines), over every GPU of the host or as a Slurm array job.
// Parsing and wiring only: discovery, the suite directory, the scheduler, the runners, Slurm and the
// tables are src/bench/ (docs/bench.md is the user's page).
#include <unistd.h>

#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "bench/baseline_runner.h"
#include "bench/lanes.h"
#include "bench/optimize_runner.h"
#include "bench/problem_set.h"
#include "bench/scheduler.h"
#include "bench/slurm.h"
#include "bench/summary.h"
#include "report/suite_page.h"
#include "report/suite_view.h"
#include "cli/commands.h"
#include "cli/judge_stack.h"
#include "cli/loop_args.h"
#include "cli/progress_line.h"
#include "common/exit_codes.h"
#include "common/fs.h"
#include "common/locations.h"
#include "common/terminal_text.h"

namespace cutegen::cli {
namespace fs = std::filesystem;
using namespace cutegen::bench;
namespace {


int bad_argument(const std::string& message) {
  print_safe(stderr, "cutegen: {}\n", message);
  return kExitBadArgument;
}

struct BenchArgs {
  std::vector<std::string> problems;
  std::string out;
  std::string spec;
  bool baselines_only = false;
  std::string device = "cuda";
  std::string gpus = "all";
  int jobs = 0;
  std::vector<std::string> filters, excludes;
  int limit = 0;
  std::string shard;
  // Passed to each task's optimize.
  LoopArgs loop;
  JudgeArgs judge = loop_judge_args();
  double max_cost = 0;
  long long max_tokens = 0, max_calls = 0;
  // The suite's.
  double suite_max_cost = 0;
  long long suite_max_tokens = 0;
  double suite_max_hours = 0;
  int task_timeout_s = 0;
  bool retry_crashed = false;
  bool quiet = false;
  // Slurm.
  bool slurm = false;
  std::vector<std::string> sbatch_args;
  int shards = 0;
  std::string gres;
  bool dry_run = false;
};

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string duration(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{}m{:02d}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return fmt::format("{}h{:02d}m", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
}

// The options each task's optimize gets; also the manifest's settings, so a rerun with other ones is refused.
std::vector<std::string> task_args(const BenchArgs& a) {
  std::vector<std::string> v{"--llm", a.spec,
                             "--steps", std::to_string(a.loop.steps),
                             "--repair-budget", std::to_string(a.loop.repair_budget),
                             "--restarts", std::to_string(a.loop.restarts),
                             "--plateau", std::to_string(a.loop.plateau),
                             "--profile-from", a.loop.profile_from,
                             "--tune", a.loop.tune,
                             "--start", a.loop.start,
                             "--precision", a.judge.precision,
                             "--trials", std::to_string(a.judge.trials),
                             "--runner-timeout", std::to_string(a.judge.runner_timeout_s)};
  // Only when given: a task told --runs runs exactly that many timed calls, without the staging budget.
  if (a.judge.runs_given) v.insert(v.end(), {"--runs", std::to_string(a.judge.runs)});
  // Only when not the default, so the settings of suites started before --examples existed still match.
  if (a.loop.examples != "library") v.insert(v.end(), {"--examples", a.loop.examples});
  if (a.loop.candidates != 1) v.insert(v.end(), {"--candidates", std::to_string(a.loop.candidates)});
  if (a.loop.target_sol > 0) v.insert(v.end(), {"--target-sol", fmt::format("{}", a.loop.target_sol)});
  if (a.judge.seed) v.insert(v.end(), {"--seed", std::to_string(a.judge.seed)});
  // Only when not the default: a suite begun before the option existed still resumes with its settings.
  if (a.judge.generalize != JudgeArgs{}.generalize)
    v.insert(v.end(), {"--generalize", std::to_string(a.judge.generalize)});
  if (!a.judge.arch.empty()) v.insert(v.end(), {"--arch", a.judge.arch});
  if (a.max_cost > 0) v.insert(v.end(), {"--max-cost", fmt::format("{}", a.max_cost)});
  if (a.max_tokens > 0) v.insert(v.end(), {"--max-tokens", std::to_string(a.max_tokens)});
  if (a.max_calls > 0) v.insert(v.end(), {"--max-calls", std::to_string(a.max_calls)});
  return v;
}

Manifest manifest(const BenchArgs& a, const std::vector<ProblemTask>& tasks) {
  Manifest m;
  m.mode = a.baselines_only ? "baselines" : "optimize";
  m.tasks = tasks;
  if (a.baselines_only) {
    m.settings = {{"device", a.device}, {"precision", a.judge.precision}, {"runs", a.judge.runs}};
  } else {
    m.llm = a.spec;
    auto args = task_args(a);
    nlohmann::json s = nlohmann::json::object();
    for (size_t i = 0; i + 1 < args.size(); i += 2)
      if (args[i] != "--llm") s[args[i].substr(2)] = args[i + 1];
    // Recorded whether given or not, as suites begun before the staging budget recorded it, so they resume.
    if (!s.contains("runs")) s["runs"] = std::to_string(a.judge.runs);
    m.settings = s;
  }
  return m;
}

Result<std::vector<ProblemTask>> resolve_tasks(const BenchArgs& a) {
  auto found = discover_problems(a.problems);
  if (!found) return found.error();
  Selection sel;
  for (const auto& f : a.filters) {
    auto t = parse_terms(f);
    if (!t) return Error{"--filter " + t.error().message};
    sel.include.insert(sel.include.end(), t->begin(), t->end());
  }
  for (const auto& f : a.excludes) {
    auto t = parse_terms(f);
    if (!t) return Error{"--exclude " + t.error().message};
    sel.exclude.insert(sel.exclude.end(), t->begin(), t->end());
  }
  if (a.limit > 0) sel.limit = a.limit;
  auto tasks = select_tasks(*found, sel);
  if (tasks.empty())
    return Error{fmt::format("no task left: {} problems found, none passes --filter/--exclude", found->size())};
  return tasks;
}

// One summary, four renderings: the tables and the suite's HTML page cannot disagree.
Status write_summary(const SuiteDir& suite, const SuiteSummary& s) {
  if (auto w = write_file_atomic(suite.path() / "summary.md", render_markdown(s)); !w) return w;
  if (auto w = write_file_atomic(suite.path() / "summary.csv", render_csv(s)); !w) return w;
  if (auto w = write_file_atomic(suite.path() / "summary.json", s.to_json().dump(2) + "\n"); !w) return w;
  return write_file_atomic(suite.path() / "report.html", render_suite_page(make_suite_view(s, suite.path())));
}

// Each damaged record is said on stderr, one line, and left out of the summary (whose counts say so).
Result<SuiteSummary> summary_of(const SuiteDir& suite) {
  auto collected = suite.collect();
  for (const auto& d : collected.damaged) print_safe(stderr, "bench: skipped {}\n", d.line());
  return summarize(suite.manifest().mode, suite.manifest().llm, std::move(collected.records),
                   std::move(collected.damaged));
}

int submit_to_slurm(const GlobalOptions&, const BenchArgs& a, const std::vector<ProblemTask>& tasks) {
  auto argv = own_command_line();
  if (!argv) return fail(argv.error().message);
  SlurmPlan plan;
  plan.shards = a.shards > 0 ? std::min<int>(a.shards, static_cast<int>(tasks.size())) : static_cast<int>(tasks.size());
  // CPU shards ask for no GPU; "none" drops the request for GPU shards too (a site that assigns GPUs otherwise).
  std::string gres = a.gres.empty() ? (a.device == "cpu" ? "none" : "gpu:1") : a.gres;
  plan.gres = gres == "none" ? "" : gres;
  plan.sbatch_args = a.sbatch_args;
  plan.suite_dir = fs::absolute(a.out);
  plan.workdir = fs::current_path();
  plan.command = strip_submission_options(*argv);
  std::string script = sbatch_script(plan);
  if (a.dry_run) {
    print_safe(stdout, "{}", script);
    return 0;
  }
  auto suite = SuiteDir::open(a.out, manifest(a, tasks));
  if (!suite) return fail(suite.error().message);
  fs::path file = suite->path() / "slurm" / "bench.sbatch";
  if (auto w = write_file_atomic(file, script); !w) return fail(w.error().message);
  PosixProcessRunner runner;
  auto job = submit(runner, file);
  if (!job) return fail(job.error().message);
  if (auto w = write_file_atomic(suite->path() / "slurm" / "job", *job + "\n"); !w) return fail(w.error().message);
  print_safe(stdout, "submitted Slurm array job {} ({} shards, {} tasks) from {}\nfollow it with: cutegen bench status {}\n", *job,
             plan.shards, tasks.size(), file.string(), a.out);
  return 0;
}

std::vector<std::string> status_lines(const SchedulerView& v, double cost) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("suite: {}/{} done ({} failed, {} skipped), {} running, {} waiting | {} elapsed{} | ${:.2f}",
                              v.done, v.total, v.failed, v.skipped, v.running, v.waiting, duration(v.elapsed_s),
                              v.eta_s ? ", ETA " + duration(*v.eta_s) : "", cost));
  for (const auto& l : v.lanes) {
    std::string tasks;
    for (const auto& [name, secs] : l.running) tasks += fmt::format("{}{} {}", tasks.empty() ? "" : ", ", name, duration(secs));
    lines.push_back(fmt::format("  {}: {}", l.lane, tasks.empty() ? "idle" : tasks));
  }
  return lines;
}

int run_bench(const GlobalOptions& global, const BenchArgs& a) {
  if (a.out.empty()) return bad_argument("--out DIR is required: the suite directory (new, or a suite to continue)");
  if (a.baselines_only && !a.spec.empty()) return bad_argument("--baselines-only runs no LLM; drop --llm");
  if (!a.baselines_only && a.spec.empty())
    return bad_argument("--llm SPEC is required (or --baselines-only for baselines without an LLM)");
  if (a.device != "cuda" && a.device != "cpu") return bad_argument(fmt::format("--device {} is not cuda or cpu", a.device));
  if (a.device == "cpu" && !a.baselines_only)
    return bad_argument("--device cpu runs only --baselines-only (kernels are judged on a GPU)");
  if (!a.slurm && (a.dry_run || !a.sbatch_args.empty() || a.shards > 0 || !a.gres.empty()))
    return bad_argument("--dry-run, --sbatch-arg, --shards and --gres go with --slurm");
  if (a.slurm && !a.shard.empty()) return bad_argument("--shard is for one shard's run; --slurm writes --shard per array task");
  std::optional<Shard> shard;
  if (!a.shard.empty()) {
    auto s = parse_shard(a.shard);
    if (!s) return bad_argument(s.error().message);
    shard = *s;
  }
  auto tasks = resolve_tasks(a);
  if (!tasks) return bad_argument(tasks.error().message);
  if (a.slurm) return submit_to_slurm(global, a, *tasks);

  PosixProcessRunner processes;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  auto lanes = resolve_lanes(a.device, a.gpus, visible, a.device == "cuda" ? list_gpus(processes) : "");
  if (!lanes) return fail(lanes.error().message);
  if (auto d = ensure_device_lock_dir(lanes->front().lock_file.parent_path()); !d) return fail(d.error().message);
  if (a.baselines_only && a.device == "cuda") {
    // The worker's own check of the GPU comes per task; a missing nvidia driver is told here, once.
    std::string why;
    if (!gpu_visible(why)) return fail(fmt::format("no GPU: {}; --device cpu runs a CPU-only smoke suite", why));
  }
  auto suite = SuiteDir::open(a.out, manifest(a, *tasks));
  if (!suite) return fail(suite.error().message);
  std::vector<ProblemTask> share = shard ? shard_tasks(*tasks, *shard) : *tasks;
  const int jobs = a.jobs > 0 ? a.jobs : static_cast<int>(lanes->size()) * (a.baselines_only ? 1 : 2);

  std::unique_ptr<TaskRunner> runner;
  if (a.baselines_only) {
    BaselineRunnerOptions bo;
    // On the CPU only eager is timed: torch.compile's C++ build takes minutes there, for numbers
    // that mean nothing for a GPU anyway.
    if (a.device == "cpu") bo.modes = {"eager"};
    bo.runs = a.judge.runs;
    bo.precision = a.judge.precision;
    bo.cache_root = cache_root();
    fs::path logs = suite->path() / "logs";
    std::string tag = fmt::format("{}-{}", host_name(), ::getpid());
    runner = std::make_unique<BaselineTaskRunner>(bo, jobs, [logs, tag](int slot) -> Result<std::unique_ptr<ReferenceWorker>> {
      auto w = PythonWorker::start({.log_path = logs / fmt::format("worker-{}-{}.log", tag, slot)});
      if (!w) return w.error();
      return std::unique_ptr<ReferenceWorker>(std::move(*w));
    });
  } else {
    OptimizeRunnerOptions oo;
    // CUTEGEN_BENCH_TASK_EXE: a stand-in for `cutegen optimize` (the CPU tests of the scheduler).
    if (const char* exe = std::getenv("CUTEGEN_BENCH_TASK_EXE"); exe && *exe) {
      oo.executable = exe;
    } else {
      std::error_code ec;
      oo.executable = fs::read_symlink("/proc/self/exe", ec);
      if (ec) return fail("cannot find this executable (/proc/self/exe) to run the tasks with");
    }
    if (!global.config_path.empty()) oo.global_args = {"--config", fs::absolute(global.config_path).string()};
    oo.task_args = task_args(a);
    oo.timeout = std::chrono::seconds(a.task_timeout_s);
    runner = std::make_unique<OptimizeTaskRunner>(processes, *suite, oo);
  }

  SchedulerOptions so;
  so.jobs = jobs;
  so.lanes = *lanes;
  so.retry_crashed = a.retry_crashed;
  so.host = host_name();
  if (shard) so.shard = fmt::format("{}/{}", shard->index, shard->count);
  if (a.suite_max_cost > 0) so.budget.max_cost_usd = a.suite_max_cost;
  if (a.suite_max_tokens > 0) so.budget.max_tokens = a.suite_max_tokens;
  if (a.suite_max_hours > 0) so.budget.max_wall_s = a.suite_max_hours * 3600;

  ProgressBoard board(!a.quiet && isatty(STDERR_FILENO));
  std::mutex board_mu;
  double cost = suite->spend().cost_usd;
  int ticks = 0;
  SchedulerObserver observer;
  observer.event = [&](const SchedulerView& v, const std::string& line, bool ended) {
    std::lock_guard<std::mutex> g(board_mu);
    // Quiet (batch jobs): one line per finished task, no live lines.
    if (a.quiet) {
      if (ended) print_safe(stderr, "{}\n", line);
      return;
    }
    cost = suite->spend().cost_usd;
    board.update(status_lines(v, cost), line);
  };
  observer.tick = [&](const SchedulerView& v) {
    if (a.quiet) return;
    std::lock_guard<std::mutex> g(board_mu);
    if (++ticks % 10 == 0) cost = suite->spend().cost_usd;
    board.update(status_lines(v, cost), "");
  };
  print_safe(stderr, "bench: {} tasks{} -> {} ({} {}, {} in flight)\n", share.size(),
             shard ? fmt::format(" (shard {}/{} of {})", shard->index, shard->count, tasks->size()) : "",
             suite->path().string(), lanes->size(), lanes->size() == 1 ? "lane" : "lanes", jobs);
  // Each lane times with two processes that must get a CPU at once; each task beside them may be
  // compiling (two or three processes, bench::cpu_oversubscription_warning). More than the host has and the judge refuses measurements as "too busy"
  // (docs/judge.md): say so before hours are spent.
  if (!a.baselines_only)
    if (auto w = bench::cpu_oversubscription_warning(jobs, static_cast<int>(lanes->size()),
                                                     std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN))))
      print_safe(stderr, "bench: warning: {}\n", *w);
  Scheduler scheduler(*suite, *runner, so, observer);
  auto result = scheduler.run(share);
  board.finish();
  if (!result) return fail(result.error().message);

  auto summary = summary_of(*suite);
  if (!summary) return fail(summary.error().message);
  if (auto w = write_summary(*suite, *summary); !w) return fail(w.error().message);
  if (!a.quiet) {
    print_safe(stdout, "{}", render_markdown(*summary));
    print_safe(stderr, "bench: the suite page: {}\n", (suite->path() / "report.html").string());
  }
  if (!result->stopped.empty())
    return fail(fmt::format("stopped starting tasks: {}; {} not started (re-run the same command to continue)",
                            result->stopped, result->not_started));
  return 0;
}

int run_status(const std::string& dir) {
  auto suite = SuiteDir::open_existing(dir);
  if (!suite) return fail(suite.error().message);
  auto s = summary_of(*suite);
  if (!s) return fail(s.error().message);
  Spend spent = suite->spend();
  print_safe(stdout, "{}: {} tasks ({}), {} finished\n", dir, s->total, s->mode, s->finished);
  if (s->mode == "optimize")
    print_safe(stdout, "  {} correct, {} without a correct kernel, ", s->correct, s->no_correct);
  else
    print_safe(stdout, "  {} measured, ", s->measured);
  print_safe(stdout, "{} problem errors, {} crashed, {} running, {} not started{}\n", s->problem_errors, s->crashed,
             s->running, s->not_started,
             s->skipped.empty() ? "" : fmt::format("; {} skipped (damaged record)", s->skipped.size()));
  if (s->mode == "optimize") print_safe(stdout, "  LLM: {} calls, {} tokens, ${:.2f}\n", spent.calls, spent.tokens, spent.cost_usd);
  if (s->tasks_per_hour) print_safe(stdout, "  {:.1f} tasks/hour\n", *s->tasks_per_hour);
  for (const auto& t : s->tasks) {
    if (t.verdict == TaskVerdict::running)
      print_safe(stdout, "  running      {} (scheduler pid {})\n", terminal_safe(t.name), FileLock::holder(suite->lock_path(t.name)));
    else if (t.verdict == TaskVerdict::problem_error || t.verdict == TaskVerdict::crashed ||
             (t.verdict == TaskVerdict::not_started && !t.detail.empty()))
      print_safe(stdout, "  {:<12} {}: {}\n", to_string(t.verdict), terminal_safe(t.name), terminal_safe(clip_utf8(t.detail, 200)));
  }
  return 0;
}

int run_suite_report(const std::string& dir, const std::string& format) {
  auto suite = SuiteDir::open_existing(dir);
  if (!suite) return fail(suite.error().message);
  auto s = summary_of(*suite);
  if (!s) return fail(s.error().message);
  if (auto w = write_summary(*suite, *s); !w) return fail(w.error().message);
  if (format == "html") print_safe(stdout, "{}\n", (suite->path() / "report.html").string());
  else if (format == "csv") print_safe(stdout, "{}", render_csv(*s));
  // ASCII JSON: every control and non-ASCII character a \u escape, so it is safe on a terminal and still JSON.
  else if (format == "json") fmt::print("{}\n", s->to_json().dump(2, ' ', true, nlohmann::json::error_handler_t::replace));
  else print_safe(stdout, "{}", render_markdown(*s));
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Run a suite of problems (optimize each, or --baselines-only) over every GPU, or on Slurm");
  cmd->footer("Subcommands: `cutegen bench status DIR`, `cutegen bench report DIR`. docs/bench.md has the details.\n"
              "Problem files are Python that cutegen imports and runs (their module code, get_inputs, Model): "
              "give only files you would run yourself. They run as you, without your API keys, with a private "
              "HOME and no network (CUTEGEN_WORKER_NETWORK=allow opens it; docs/sandbox.md).");
  cmd->add_option("problems", a->problems,
                  "problem files, directories of them (KernelBench's level1/), or globs: Python that cutegen "
                  "imports and runs, every file of a directory");
  cmd->add_option("--out", a->out, "the suite directory: new, or a suite to continue (re-running continues it)");
  cmd->add_option("--llm", a->spec, "openai:MODEL, anthropic:MODEL, exec:'COMMAND', replay:DIR, manual:DIR, or none: each problem's seed alone (docs/seed.md)");
  cmd->add_flag("--baselines-only", a->baselines_only,
                "no LLM: per problem eager and torch.compile times, bytes, FLOPs, roofline floor, the speedup physics allows");
  cmd->add_option("--device", a->device,
                  "cuda (default) or cpu: cpu times --baselines-only on the CPU with the wall clock, for tests and CPU-only "
                  "smoke runs (never GPU numbers)");
  cmd->add_option("--gpus", a->gpus, "all (default: every visible GPU, CUDA_VISIBLE_DEVICES respected) or indices like 0,2");
  cmd->add_option("-j,--jobs", a->jobs, "tasks in flight in total (default: 2 per GPU; 1 per GPU with --baselines-only)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--filter", a->filters, "keep tasks matching a term: a name substring, a number or a range like 19-32 "
                                          "(comma-separated; repeatable)");
  cmd->add_option("--exclude", a->excludes, "drop tasks matching a term (as --filter)");
  cmd->add_option("--limit", a->limit, "only the first N tasks (by name) after filtering")->check(CLI::Range(1, 1000000));
  cmd->add_option("--shard", a->shard, "I/N: run only shard I of N (tasks I, I+N, ... by name); Slurm array tasks get this");
  add_loop_options(cmd, a->loop, "per task: ");
  add_judge_options(cmd, a->judge, loop_trials_help());
  cmd->add_option("--max-cost", a->max_cost, "per task: US dollars of LLM spend")->check(CLI::PositiveNumber);
  cmd->add_option("--max-tokens", a->max_tokens, "per task: LLM tokens")->check(CLI::PositiveNumber);
  cmd->add_option("--max-calls", a->max_calls, "per task: LLM calls")->check(CLI::PositiveNumber);
  cmd->add_option("--suite-max-cost", a->suite_max_cost,
                  "no task starts once the suite's LLM spend (all shards) reaches this many US dollars")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--suite-max-tokens", a->suite_max_tokens, "no task starts once the suite has spent this many tokens")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--suite-max-hours", a->suite_max_hours, "no task starts after this many hours of this run")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--task-timeout", a->task_timeout_s, "seconds one task may take before it is killed (crashed; default none)")
      ->check(CLI::Range(1, 100000000));
  cmd->add_flag("--retry-crashed", a->retry_crashed, "run crashed tasks again (resuming them) instead of keeping their verdict");
  cmd->add_flag("--quiet", a->quiet, "no live lines, one line per finished task (batch jobs; Slurm shards use it)");
  cmd->add_flag("--slurm", a->slurm, "write DIR/slurm/bench.sbatch (an array job, one task per shard) and submit it with sbatch");
  cmd->add_option("--sbatch-arg", a->sbatch_args, "with --slurm: an #SBATCH line for the script, e.g. --sbatch-arg=--time=12:00:00 "
                                                  "(repeatable; comes after cutegen's own, so it overrides them)");
  cmd->add_option("--shards", a->shards, "with --slurm: array tasks (default: one per task)")->check(CLI::Range(1, 100000));
  cmd->add_option("--gres", a->gres, "with --slurm: the GPU request per shard (default gpu:1; none with --device cpu); none drops it");
  cmd->add_flag("--dry-run", a->dry_run, "with --slurm: print the script instead of writing and submitting it");

  auto dir = std::make_shared<std::string>();
  auto* status = cmd->add_subcommand("status", "What a suite directory holds now: finished, running, failed, not started (all shards)");
  status->add_option("dir", *dir, "the suite directory")->required();
  auto format = std::make_shared<std::string>("md");
  auto* report = cmd->add_subcommand("report", "The suite's tables from whatever has finished (all shards): writes summary.md, "
                                               ".csv, .json and report.html (the suite page) and prints one");
  report->add_option("dir", *dir, "the suite directory")->required();
  report->add_option("--format", *format, "what to print: md (default), csv, json, or html (the path of DIR/report.html)")
      ->check(CLI::IsMember({"md", "csv", "json", "html"}));
  status->callback([&exit_code, dir] { exit_code = run_status(*dir); });
  report->callback([&exit_code, dir, format] { exit_code = run_suite_report(*dir, *format); });
  cmd->callback([&global, &exit_code, a, cmd, status, report] {
    if (cmd->got_subcommand(status) || cmd->got_subcommand(report)) return;
    exit_code = run_bench(global, *a);
  });
}

}  // namespace cutegen::cli
