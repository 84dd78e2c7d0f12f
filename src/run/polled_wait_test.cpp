#include "run/polled_wait.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
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
// judging, python/cutegen_worker/cpu_time.py; a spinning wait costs all of it). The share printed here was
// 20-50 % on a loaded two-core virtual machine, where a sleep's system call costs 12-15 us of CPU.
// The best of three waits counts: under ctest -j on two cores one 100 ms window was measured at 96% (the fresh-clone
// CI of b746f7c), while a spinning wait costs all of it every time.
TEST(PolledWait, WaitingCostsLittleCpuTime) {
  tighten_timer_slack();
  double best_share = 1e9;
  for (int attempt = 0; attempt < 3 && best_share >= 0.75; ++attempt) {
    const long long cpu0 = thread_cpu_ns();
    const auto wall0 = std::chrono::steady_clock::now();
    const auto until = wall0 + std::chrono::milliseconds(100);
    long sleeps = wait_polling([&] { return std::chrono::steady_clock::now() >= until; });
    const long long cpu = thread_cpu_ns() - cpu0;
    const auto wall =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - wall0).count();
    EXPECT_GE(wall, 100000000LL);
    EXPECT_GT(sleeps, 10);  // it did sleep between polls
    best_share = std::min(best_share, static_cast<double>(cpu) / static_cast<double>(wall));
    std::printf("polled wait: %.1f%% of the time waited in CPU, %ld polls in %.1f ms\n", 100.0 * cpu / wall, sleeps,
                wall / 1e6);
  }
  EXPECT_LT(best_share, 0.75) << "the polled wait used " << 100 * best_share << "% of the time waited in CPU, three times";
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
