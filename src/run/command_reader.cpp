#include "run/command_reader.h"

#include <fcntl.h>
#include <poll.h>
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
    if (std::chrono::steady_clock::now() < spin_until) continue;
    // Nothing for a while (the worker is staging a large set, or checking): sleep until input comes,
    // then spin again for the rest of this command.
    ++sleeps_;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0 && errno != EINTR) return std::nullopt;
    spin_until = std::chrono::steady_clock::now() + spin_;
  }
}

}  // namespace cutegen
