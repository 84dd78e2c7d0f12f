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

// The property the host_compute verdict rests on is that waiting for the GPU costs the runner less CPU time
// than the time waited, so host code shows beside it. How much less is the machine's: on two-core virtual
// machines 20-65% in most 100 ms windows, but 90-99.9% on an idle one, where the 10 us timer fires before the
// thread has left the CPU (a fresh-clone CI run, 2026-12-05: 3200 polls, 5 voluntary switches). So the worker
// measures that share on every machine before judging and turns the check off where the wait is costly
// (python/cutegen_worker/cpu_time.py, `costly_wait`); a CPU share here would be a timed test of the machine.
// What the code itself guarantees, anywhere: it sleeps between polls, never spins -- every poll lasts at least
// the period (clock_nanosleep's promise), so a 100 ms wait makes at most 100 ms / period polls, where a spin
// makes millions. The share and the switches are printed for whoever reads the log.
TEST(PolledWait, WaitingSleepsBetweenPolls) {
  tighten_timer_slack();
  auto voluntary_switches = [] {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_nvcsw;
  };
  const long switches0 = voluntary_switches();
  const long long cpu0 = thread_cpu_ns();
  const auto wall0 = std::chrono::steady_clock::now();
  const auto until = wall0 + std::chrono::milliseconds(100);
  long polls = 0;
  const long sleeps = wait_polling([&] {
    ++polls;
    return std::chrono::steady_clock::now() >= until;
  });
  const long long cpu = thread_cpu_ns() - cpu0;
  const long switches = voluntary_switches() - switches0;
  const auto wall =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - wall0).count();
  EXPECT_GE(wall, 100000000LL);
  EXPECT_GT(sleeps, 10);
  EXPECT_EQ(polls, sleeps + 1) << "one sleep after every poll that was not the last";
  EXPECT_LE(sleeps, wall / kGpuPollPeriod.count()) << "polls closer than the period: the wait did not sleep";
  std::printf("polled wait: %.1f%% of the time waited in CPU, %ld polls, %ld voluntary switches in %.1f ms\n",
              100.0 * static_cast<double>(cpu) / static_cast<double>(wall), sleeps, switches, wall / 1e6);
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

// The hybrid wait's first part: done within the budget is noticed at once, never done gives up after it.
TEST(SpinUntil, ReturnsAsSoonAsDoneAndGivesUpAfterTheBudget) {
  int calls = 0;
  EXPECT_TRUE(spin_until([&] { return ++calls == 3; }, std::chrono::seconds(10)));
  EXPECT_EQ(calls, 3);
  const auto start = std::chrono::steady_clock::now();
  calls = 0;
  EXPECT_FALSE(spin_until([&] { return ++calls < 0; }, std::chrono::milliseconds(20)));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(20));
  EXPECT_LT(took, std::chrono::seconds(5));  // generous for a loaded CI machine
  EXPECT_GT(calls, 1) << "it spins: many checks within the budget";
  EXPECT_TRUE(spin_until([] { return true; }, std::chrono::nanoseconds(0))) << "a zero budget still looks once";
}

}  // namespace
}  // namespace cutegen
