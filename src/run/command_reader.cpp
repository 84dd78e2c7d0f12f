#include "run/command_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>

namespace cutegen {

CommandReader::CommandReader(int fd, std::chrono::microseconds spin) : fd_(fd), spin_(spin) {
  if (int flags = ::fcntl(fd_, F_GETFL); flags >= 0) ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
}

std::optional<std::string> CommandReader::next() {
  auto spin_until = std::chrono::steady_clock::now() + spin_;
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    char chunk[4096];
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return std::nullopt;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return std::nullopt;
    if (std::chrono::steady_clock::now() < spin_until) {
      // A yield passes through the scheduler, which brings this thread's CPU time up to date. The worker
      // reads that time from outside (python/cutegen_worker/cpu_time.py) just before a command and just
      // after its reply, while this loop runs; for a thread running on another CPU the kernel gives the
      // count as of its last tick or scheduler event, so without the yields a reading could be up to a
      // tick (1-4 ms) old and a call's CPU time off by that much either way (seen on the H200: honest
      // calls of 0.03 ms "using" 2-4 ms). With nothing else runnable the yield returns at once.
      sched_yield();
      continue;
    }
    // Nothing for a while (the worker is staging a large set, or checking): sleep until input comes,
    // then spin again for the rest of this command.
    ++sleeps_;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0 && errno != EINTR) return std::nullopt;
    spin_until = std::chrono::steady_clock::now() + spin_;
  }
}

}  // namespace cutegen
