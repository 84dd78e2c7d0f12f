#include "bench/scheduler.h"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <thread>

#include <fmt/format.h>

namespace cutegen::bench {
namespace {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string outcome_line(const TaskRecord& r) {
  std::string s = std::string(to_string(r.verdict));
  if (auto x = r.speedup_eager()) s += fmt::format(" {:.2f}x eager", *x);
  if (auto x = r.speedup_compile()) s += fmt::format(", {:.2f}x compile", *x);
  if (r.verdict == TaskVerdict::measured) {
    if (r.eager_ms) s += fmt::format(" eager {:.4g} ms", *r.eager_ms);
    if (r.compile_ms) s += fmt::format(", compile {:.4g} ms", *r.compile_ms);
    if (r.floor_ms) s += fmt::format(", floor {:.4g} ms", *r.floor_ms);
  }
  if (!r.detail.empty() && r.verdict != TaskVerdict::correct && r.verdict != TaskVerdict::measured) {
    std::string d = r.detail.substr(0, 160);
    s += ": " + d;
  }
  return s;
}

}  // namespace

Scheduler::Scheduler(SuiteDir& suite, TaskRunner& runner, SchedulerOptions options, SchedulerObserver observer)
    : suite_(suite), runner_(runner), options_(std::move(options)), observer_(std::move(observer)) {
  if (options_.jobs < 1) options_.jobs = 1;
}

std::string Scheduler::budget_reached() {
  const auto& b = options_.budget;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (b.max_wall_s && elapsed >= *b.max_wall_s)
    return fmt::format("the suite's wall-clock budget of {:.0f} s is spent ({:.0f} s)", *b.max_wall_s, elapsed);
  if (!b.max_cost_usd && !b.max_tokens) return "";
  Spend s = suite_.spend();
  if (b.max_cost_usd && s.cost_usd >= *b.max_cost_usd)
    return fmt::format("the suite's budget of ${:.2f} is spent (${:.2f} over {} LLM calls)", *b.max_cost_usd, s.cost_usd,
                       s.calls);
  if (b.max_tokens && s.tokens >= *b.max_tokens)
    return fmt::format("the suite's budget of {} tokens is spent ({} tokens)", *b.max_tokens, s.tokens);
  return "";
}

Scheduler::Claim Scheduler::claim(const ProblemTask& task, FileLock& lock, std::optional<TaskRecord>& previous,
                                  std::string& why) {
  auto l = FileLock::try_lock(suite_.lock_path(task.name));
  // `bench status` probes locks for a moment: look twice more before leaving a task to another holder.
  for (int again = 0; again < 2 && l && !l->held(); ++again) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    l = FileLock::try_lock(suite_.lock_path(task.name));
  }
  if (!l) {
    why = l.error().message;
    return Claim::stop;
  }
  if (!l->held()) {
    why = fmt::format("running elsewhere (pid {})", FileLock::holder(suite_.lock_path(task.name)));
    return Claim::skip;
  }
  lock = std::move(*l);
  // Read under the lock: another scheduler may have finished it since the queue was built.
  auto rec = suite_.read_record(task.name);
  if (!rec) {
    why = rec.error().message;
    return Claim::stop;
  }
  previous = *rec;
  if (previous && is_final(previous->verdict) &&
      !(previous->verdict == TaskVerdict::crashed && options_.retry_crashed)) {
    why = fmt::format("already {}", to_string(previous->verdict));
    return Claim::skip;
  }
  return Claim::run;
}

void Scheduler::emit(const std::string& line, bool ended) {
  SchedulerView v;
  {
    std::lock_guard<std::mutex> g(mu_);
    v = view_locked();
  }
  if (observer_.event) observer_.event(v, line, ended);
}

void Scheduler::worker(int slot) {
  const size_t lane = static_cast<size_t>(slot) % options_.lanes.size();
  for (;;) {
    ProblemTask task;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (next_ >= queue_.size() || error_) return;
      task = queue_[next_++];
    }
    FileLock lock;
    std::optional<TaskRecord> previous;
    std::string why;
    Claim c = claim(task, lock, previous, why);
    if (c == Claim::stop) {
      std::lock_guard<std::mutex> g(mu_);
      if (!error_) error_ = Error{why};
      return;
    }
    if (c == Claim::skip) {
      {
        std::lock_guard<std::mutex> g(mu_);
        ++skipped_;
      }
      continue;
    }
    std::string stop;
    {
      std::lock_guard<std::mutex> g(mu_);
      stop = stopped_;
    }
    if (stop.empty()) stop = budget_reached();
    if (!stop.empty()) {
      // Recorded under the task's lock, so a result another scheduler wrote is never overwritten.
      TaskRecord r = previous.value_or(TaskRecord{});
      r.name = task.name;
      r.problem = task.path.string();
      r.number = task.number;
      r.verdict = TaskVerdict::not_started;
      r.detail = stop;
      auto w = suite_.write_record(r);
      std::lock_guard<std::mutex> g(mu_);
      if (stopped_.empty()) stopped_ = stop;
      ++not_started_;
      if (!w && !error_) error_ = w.error();
      continue;
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      slots_[static_cast<size_t>(slot)] = Running{task.name, lane, std::chrono::steady_clock::now()};
    }
    emit(fmt::format("{}: started on {}{}", task.name, options_.lanes[lane].name,
                     previous && previous->attempts > 0 ? fmt::format(" (attempt {})", previous->attempts + 1) : ""),
       false);
    double started = unix_now();
    auto t0 = std::chrono::steady_clock::now();
    TaskRun run = runner_.run(task, options_.lanes[lane], slot);
    TaskRecord& r = run.record;
    r.name = task.name;
    r.problem = task.path.string();
    r.number = task.number;
    r.lane = options_.lanes[lane].name;
    r.host = options_.host;
    r.shard = options_.shard;
    r.started_at = started;
    r.finished_at = unix_now();
    // A result adopted from a run that ended while no scheduler recorded it keeps that run's own
    // wall time; a retried task adds its earlier recorded attempts.
    r.wall_s = std::max(r.wall_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (previous && previous->verdict == TaskVerdict::crashed) r.wall_s += previous->wall_s;
    r.attempts = (previous ? previous->attempts : 0) + 1;
    auto w = suite_.write_record(r);
    lock.release();
    {
      std::lock_guard<std::mutex> g(mu_);
      slots_[static_cast<size_t>(slot)].reset();
      if (!w && !error_) error_ = w.error();
      if (run.stop_suite) {
        if (stopped_.empty()) stopped_ = fmt::format("{} could not start: {}", task.name, r.detail);
        ++not_started_;
      } else {
        ++done_;
        finished_wall_s_ += r.wall_s;
        if (r.verdict != TaskVerdict::correct && r.verdict != TaskVerdict::measured) ++failed_;
      }
    }
    emit(fmt::format("{}: {} ({}, {:.0f} s)", task.name, outcome_line(r), r.lane, r.wall_s), true);
  }
}

SchedulerView Scheduler::view_locked() const {
  SchedulerView v;
  v.total = static_cast<int>(queue_.size());
  v.done = done_;
  v.failed = failed_;
  v.skipped = skipped_;
  v.waiting = static_cast<int>(queue_.size() - next_);
  auto now = std::chrono::steady_clock::now();
  v.elapsed_s = std::chrono::duration<double>(now - start_).count();
  for (const auto& l : options_.lanes) v.lanes.push_back({l.name, {}});
  for (const auto& s : slots_) {
    if (!s) continue;
    ++v.running;
    v.lanes[s->lane].running.emplace_back(s->task, std::chrono::duration<double>(now - s->since).count());
  }
  if (done_ > 0) {
    double per_task = finished_wall_s_ / done_;
    v.eta_s = per_task * (v.waiting + 0.5 * v.running) / static_cast<double>(slots_.size());
  }
  return v;
}

Result<SchedulerResult> Scheduler::run(const std::vector<ProblemTask>& tasks) {
  if (options_.lanes.empty()) return Error{"no lanes to run tasks on"};
  start_ = std::chrono::steady_clock::now();
  queue_ = tasks;
  next_ = 0;
  slots_.assign(static_cast<size_t>(options_.jobs), std::nullopt);
  std::vector<std::thread> threads;
  std::mutex done_mu;
  std::condition_variable done_cv;
  int live = options_.jobs;
  for (int s = 0; s < options_.jobs; ++s)
    threads.emplace_back([this, s, &done_mu, &done_cv, &live] {
      worker(s);
      std::lock_guard<std::mutex> g(done_mu);
      --live;
      done_cv.notify_all();
    });
  {
    std::unique_lock<std::mutex> g(done_mu);
    while (live > 0) {
      done_cv.wait_for(g, std::chrono::seconds(1));
      if (live > 0 && observer_.tick) {
        g.unlock();
        SchedulerView v;
        {
          std::lock_guard<std::mutex> m(mu_);
          v = view_locked();
        }
        observer_.tick(v);
        g.lock();
      }
    }
  }
  for (auto& t : threads) t.join();
  if (error_) return *error_;
  SchedulerResult r;
  r.ran = done_;
  r.skipped = skipped_;
  r.not_started = not_started_;
  r.stopped = stopped_;
  return r;
}

}  // namespace cutegen::bench
