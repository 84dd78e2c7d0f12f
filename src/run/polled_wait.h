#pragma once
// One way the runner can wait for the GPU after a call (CUTEGEN_RUNNER_WAIT=poll; the default sleeps on
// blocking-sync events, run/runner_job.h): by polling with short sleeps, not by spinning.
//
// The worker judges host computing by the runner's CPU time inside each call, read from the kernel's
// accounting (python/cutegen_worker/cpu_time.py). A wait that spins (cudaDeviceScheduleSpin's
// synchronisation) costs as much CPU as the GPU takes, so the runner's CPU time was the call's wall time
// for every kernel and told nothing. A poll every kGpuPollPeriod costs a few microseconds of CPU per poll
// and sleeps in between — short sleeps, so the CPU stays in a shallow idle state and the reply still
// leaves within about one period of the GPU finishing (a long sleep in poll() or a blocking
// synchronisation would pay the deep idle states' wake-up latency, which is why the runner spun:
// command_reader.h). The calibration's pings wait the same way, so the round trip subtracted from every
// call includes it.
#include <chrono>
#include <functional>

namespace cutegen {

inline constexpr std::chrono::microseconds kGpuPollPeriod{10};

// Calls `done` until it returns true, sleeping `period` between calls. Returns how many times it slept.
long wait_polling(const std::function<bool()>& done, std::chrono::nanoseconds period = kGpuPollPeriod);

// How long the hybrid wait (CUTEGEN_RUNNER_WAIT=hybrid, run/runner_job.h) spins before it sleeps: a call (or a
// ping) that ends within it is answered without the blocking wait's wake-up latency, which on an H100 charged a
// 7 us kernel ~50 us more than the calibration's ping subtracted (benchmarks/results.md); past it the runner sleeps
// in the driver as `block` does. Below the host-computing check's 0.5 ms floor, so no honest call is flagged
// by the spin's CPU time (cpu_time.py), and the long pings that measure the wait's share include it.
inline constexpr std::chrono::microseconds kHybridSpin{100};

// Calls `done` back to back until it returns true or `budget` has passed; whether it returned true.
bool spin_until(const std::function<bool()>& done, std::chrono::nanoseconds budget);

// Sets this thread's timer slack to 1 ns: with the default 50 us, every sleep of wait_polling would
// last at least that long, adding up to 50 us to every call's reply.
void tighten_timer_slack();

}  // namespace cutegen
