#include "bench/optimize_runner.h"

#include <unistd.h>

#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/fs.h"
#include "store/run_dir.h"

namespace cutegen::bench {
namespace fs = std::filesystem;

std::string failure_line(const std::string& err) {
  std::stringstream ss(err);
  std::string line, last, tagged;
  while (std::getline(ss, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    last = line;
    if (line.rfind("cutegen: ", 0) == 0) tagged = line.substr(9);
  }
  return tagged.empty() ? last : tagged;
}

Result<std::optional<TaskRecord>> read_task_result(const fs::path& run_dir) {
  return read_task_record(run_dir / kTaskResultFile);
}

std::vector<std::string> OptimizeTaskRunner::command(const ProblemTask& task, const Lane& lane, bool resume) const {
  std::vector<std::string> argv{options_.executable.string()};
  argv.insert(argv.end(), options_.global_args.begin(), options_.global_args.end());
  argv.insert(argv.end(), {"optimize", task.path.string(), "--out", suite_.task_dir(task.name).string()});
  if (resume) argv.push_back("--resume");
  argv.insert(argv.end(), options_.task_args.begin(), options_.task_args.end());
  argv.insert(argv.end(), {"--gpu-lock", lane.lock_file.string()});
  return argv;
}

TaskRun OptimizeTaskRunner::run(const ProblemTask& task, const Lane& lane, int) {
  TaskRun out;
  TaskRecord& rec = out.record;
  const fs::path dir = suite_.task_dir(task.name);
  // A run that ended (its result.json) while no record was written (the scheduler was killed just
  // then) is adopted rather than replayed. A crashed one is continued.
  if (auto prior = read_task_result(dir); prior && *prior && (*prior)->verdict != TaskVerdict::crashed &&
                                          inspect_run_dir(dir).kind == RunDirKind::cutegen_run) {
    rec = **prior;
    return out;
  }
  const bool resume = inspect_run_dir(dir).kind == RunDirKind::cutegen_run;
  // A stale result.json of an earlier attempt must not be read as this attempt's.
  std::error_code ec;
  fs::remove(dir / kTaskResultFile, ec);
  // The task writes straight into its log (`tail -f` it while it runs): the shell only redirects, then
  // becomes the task (exec), so the task's parent is still this process.
  const fs::path log = suite_.log_path(task.name);
  std::vector<std::string> argv = command(task, lane, resume);
  (void)suite_.append_log(task.name, fmt::format("==== {} attempt: {}\n", resume ? "resumed" : "first", fmt::join(argv, " ")));
  std::error_code size_ec;
  const auto log_start = fs::file_size(log, size_ec);
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "exec \"$0\" \"$@\" >>\"$CUTEGEN_TASK_LOG\" 2>&1"};
  spec.argv.insert(spec.argv.end(), argv.begin(), argv.end());
  // The child is cutegen itself acting for the user (its LLM needs the keys); its own children get
  // the allow-listed environment as always.
  spec.environment = ProcessSpec::Environment::inherit;
  spec.env.emplace_back("CUTEGEN_TASK_LOG", log.string());
  if (!lane.visible.empty()) spec.env.emplace_back("CUDA_VISIBLE_DEVICES", lane.visible);
  spec.env.emplace_back("CUTEGEN_PARENT_PID", std::to_string(::getpid()));
  spec.timeout = options_.timeout;
  auto p = processes_.run(spec);
  if (!p) {
    (void)suite_.append_log(task.name, p.error().message + "\n");
    rec.verdict = TaskVerdict::not_started;
    rec.detail = p.error().message;
    out.stop_suite = true;
    return out;
  }
  (void)suite_.append_log(task.name, p->out + p->err + fmt::format("==== {} after {:.1f} s\n", p->describe_end(), p->wall_seconds));
  // This attempt's output: what it appended to the log (the last 64 KiB is plenty for its last words).
  std::string printed;
  if (auto text = read_file(log); text) {
    size_t from = size_ec ? 0 : static_cast<size_t>(log_start);
    if (text->size() > from + (64u << 10)) from = text->size() - (64u << 10);
    printed = text->substr(std::min(from, text->size()));
  }
  auto result = read_task_result(dir);
  if (result && *result) {
    rec = **result;
    return out;
  }
  std::string why = failure_line(printed.substr(0, printed.rfind("==== ")));
  if (!result) why = result.error().message;
  if (p->timed_out || p->term_signal != 0) {
    rec.verdict = TaskVerdict::crashed;
    rec.detail = fmt::format("{}{}", p->describe_end(), why.empty() ? "" : ": " + why);
    return out;
  }
  // Without an LLM a problem with no seed ends before its run directory: that task's own answer.
  if (p->exit_code == kExitNoSeed) {
    rec.verdict = TaskVerdict::no_correct_kernel;
    rec.stop_reason = "no_seed";
    rec.detail = why;
    return out;
  }
  // No run directory left: optimize failed before its loop and took it away again. Every task would
  // fail the same way (no GPU, no API key), so the suite stops instead of burning through them.
  if (inspect_run_dir(dir).kind != RunDirKind::cutegen_run) {
    rec.verdict = TaskVerdict::not_started;
    rec.detail = why.empty() ? p->describe_end() : why;
    out.stop_suite = true;
    return out;
  }
  rec.verdict = TaskVerdict::crashed;
  rec.detail = why.empty() ? p->describe_end() : why;
  return out;
}

}  // namespace cutegen::bench
