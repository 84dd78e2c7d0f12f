#include "run/polled_wait.h"

#include <sys/prctl.h>
#include <time.h>

#include <cerrno>

namespace cutegen {

long wait_polling(const std::function<bool()>& done, std::chrono::nanoseconds period) {
  const timespec nap{static_cast<time_t>(period.count() / 1000000000), static_cast<long>(period.count() % 1000000000)};
  long sleeps = 0;
  while (!done()) {
    // Relative and short: an interrupted sleep simply polls again.
    (void)clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, nullptr);
    ++sleeps;
  }
  return sleeps;
}

bool spin_until(const std::function<bool()>& done, std::chrono::nanoseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  do {
    if (done()) return true;
  } while (std::chrono::steady_clock::now() < deadline);
  return done();
}

void tighten_timer_slack() { (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); }

}  // namespace cutegen
