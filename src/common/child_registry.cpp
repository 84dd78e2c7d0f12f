#include "common/child_registry.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace cutegen {
namespace {

// Lock-free so the signal handler can read it: a slot holds a pgid or 0.
constexpr int kSlots = 1024;
std::atomic<pid_t> g_groups[kSlots];
std::atomic<int> g_spawning{0};
static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

constexpr int kTerminationSignals[] = {SIGINT, SIGTERM, SIGHUP};

sigset_t termination_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kTerminationSignals) sigaddset(&set, s);
  return set;
}

thread_local sigset_t t_saved_mask;
thread_local int t_guard_depth = 0;

void on_termination(int sig) {
  // A spawn on another thread may have a child that is not registered yet: give it a moment.
  for (int i = 0; i < 2000 && g_spawning.load() > 0; ++i) {
    timespec ms{0, 1000000};
    ::nanosleep(&ms, nullptr);
  }
  kill_child_groups();
  ::_exit(128 + sig);
}

}  // namespace

SpawnGuard::SpawnGuard() {
  if (t_guard_depth++ == 0) {
    sigset_t set = termination_set();
    ::pthread_sigmask(SIG_BLOCK, &set, &t_saved_mask);
  }
  g_spawning.fetch_add(1);
}

SpawnGuard::~SpawnGuard() {
  g_spawning.fetch_sub(1);
  if (--t_guard_depth == 0) ::pthread_sigmask(SIG_SETMASK, &t_saved_mask, nullptr);
}

Status register_child_group(pid_t pgid) {
  for (auto& slot : g_groups) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pgid)) return ok_status();
  }
  ::kill(-pgid, SIGKILL);
  return Error{fmt::format("more than {} child processes at once: cutegen refuses to start another", kSlots)};
}

void unregister_child_group(pid_t pgid) {
  for (auto& slot : g_groups) {
    pid_t expected = pgid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

int registered_child_groups() {
  int n = 0;
  for (auto& slot : g_groups) n += slot.load() != 0;
  return n;
}

void kill_child_groups() {
  for (auto& slot : g_groups) {
    pid_t pgid = slot.load();
    if (pgid > 0) ::kill(-pgid, SIGKILL);
  }
}

Status install_termination_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_termination;
  sa.sa_mask = termination_set();  // one handler at a time
  for (int s : kTerminationSignals)
    if (::sigaction(s, &sa, nullptr) != 0)
      return Error{fmt::format("cannot install the handler for signal {}: {}", s, std::strerror(errno))};
  return ok_status();
}

}  // namespace cutegen
