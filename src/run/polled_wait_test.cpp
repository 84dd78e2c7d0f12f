#include "run/polled_wait.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <sys/resource.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace cutegen {
namespace {

long long thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

// The property the host_compute verdict rests on: waiting for the GPU costs the runner less CPU time than
// the time waited, so host code shows beside it (the worker measures the share on every machine before
// judging, python/cutegen_worker/cpu_time.py; a spinning wait costs all of it). On two-core virtual machines
// the share is 20-65% in most 100 ms windows, where a sleep's system call costs 12-15 us of CPU, but some
// windows read 80-99% with only a few hundred of ~3000 sleeps giving the CPU up (the 10 us timer fires
// before the thread has left), and more of them with other tests beside it. So the test runs alone (RUN_SERIAL,
// src/CMakeLists.txt) and its best of five windows counts: under 90% of the time, with the CPU given up (a
// voluntary context switch) for at least a quarter of the polls -- a spin makes none.
TEST(PolledWait, WaitingCostsLittleCpuTime) {
  tighten_timer_slack();
  auto voluntary_switches = [] {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_nvcsw;
  };
  bool quiet = false;
  double best_share = 1e9;
  for (int attempt = 0; attempt < 5 && !quiet; ++attempt) {
    const long switches0 = voluntary_switches();
    const long long cpu0 = thread_cpu_ns();
    const auto wall0 = std::chrono::steady_clock::now();
    const auto until = wall0 + std::chrono::milliseconds(100);
    long sleeps = wait_polling([&] { return std::chrono::steady_clock::now() >= until; });
    const long long cpu = thread_cpu_ns() - cpu0;
    const long switches = voluntary_switches() - switches0;
    const auto wall =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - wall0).count();
    EXPECT_GE(wall, 100000000LL);
    EXPECT_GT(sleeps, 10);
    const double share = static_cast<double>(cpu) / static_cast<double>(wall);
    best_share = std::min(best_share, share);
    quiet = share < 0.9 && switches >= sleeps / 4;
    std::printf("polled wait: %.1f%% of the time waited in CPU, %ld polls, %ld voluntary switches in %.1f ms\n",
                100.0 * share, sleeps, switches, wall / 1e6);
  }
  EXPECT_TRUE(quiet) << "in five windows the polled wait never gave the CPU up for a quarter of its polls while "
                        "using under 90% of the time waited (best: "
                     << 100 * best_share << "%)";
}

// And the reply still leaves soon after the work is done: the polls are short (a long sleep would add
// its own length, and the deep idle state after it, to the call's round trip).
TEST(PolledWait, NoticesCompletionWithinAFewPeriods) {
  tighten_timer_slack();
  std::atomic<bool> finished{false};
  std::atomic<long long> finished_at{0};
  std::thread worker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    finished_at = std::chrono::steady_clock::now().time_since_epoch().count();
    finished = true;
  });
  wait_polling([&] { return finished.load(); });
  const long long noticed = std::chrono::steady_clock::now().time_since_epoch().count();
  worker.join();
  // Generous for a loaded two-core CI machine; the period itself is 10 us.
  EXPECT_LT(noticed - finished_at.load(), 5000000LL);
}

TEST(PolledWait, DoesNotSleepWhenAlreadyDone) {
  EXPECT_EQ(wait_polling([] { return true; }), 0);
}

}  // namespace
}  // namespace cutegen
