#include "common/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "common/child_registry.h"
#include "common/spawn.h"

namespace cutegen {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() { close_both(); }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  void close_both() { close_end(0); close_end(1); }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::string ProcessResult::describe_end() const {
  if (timed_out) return fmt::format("timed out after {:.1f} s", wall_seconds);
  if (cancelled) return fmt::format("stopped after {:.1f} s: no longer needed", wall_seconds);
  if (term_signal != 0) return fmt::format("killed by signal {} ({})", term_signal, strsignal(term_signal));
  return fmt::format("exit code {}", exit_code);
}

std::optional<std::filesystem::path> find_executable(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) == 0) return std::filesystem::path(name);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= p.size()) {
    auto end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::filesystem::path dir = p.substr(start, end - start);
    if (dir.empty()) dir = ".";
    auto candidate = dir / name;
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

constexpr int kStopPollMs = 20;

Result<ProcessResult> PosixProcessRunner::run(const ProcessSpec& spec) {
  Pipe in, out, err;
  if (::pipe2(in.fd, O_CLOEXEC) != 0 || ::pipe2(out.fd, O_CLOEXEC) != 0 || ::pipe2(err.fd, O_CLOEXEC) != 0)
    return Error{fmt::format("cannot create pipes: {}", std::strerror(errno))};

  auto t0 = std::chrono::steady_clock::now();
  auto spawned = spawn_child_group(spec, {.in = in.fd[0], .out = out.fd[1], .err = err.fd[1]});
  if (!spawned) return spawned.error();
  const pid_t pid = *spawned;

  in.close_end(0);
  out.close_end(1);
  err.close_end(1);
  // A child that exits without reading stdin must not kill us with SIGPIPE.
  ::fcntl(in.fd[1], F_SETFL, O_NONBLOCK);
  signal(SIGPIPE, SIG_IGN);

  ProcessResult result;
  std::size_t written = 0;
  if (spec.stdin_data.empty()) in.close_end(1);
  bool killed = false;
  auto deadline = t0 + spec.timeout;
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    std::array<pollfd, 3> fds{};
    int n = 0;
    int out_i = -1, err_i = -1, in_i = -1;
    if (out.fd[0] >= 0) { fds[n] = {out.fd[0], POLLIN, 0}; out_i = n++; }
    if (err.fd[0] >= 0) { fds[n] = {err.fd[0], POLLIN, 0}; err_i = n++; }
    if (in.fd[1] >= 0) { fds[n] = {in.fd[1], POLLOUT, 0}; in_i = n++; }
    if (!killed && spec.stop.stop_requested()) {
      result.cancelled = true;
      ::kill(-pid, SIGKILL);
      killed = true;
    }
    int wait_ms = -1;
    if (spec.timeout.count() > 0 && !killed) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      wait_ms = static_cast<int>(std::max<long long>(0, left.count()));
    }
    // A stop is looked for between polls: often enough that a cancelled child is gone within a blink.
    if (!killed && spec.stop.stop_possible() && (wait_ms < 0 || wait_ms > kStopPollMs)) wait_ms = kStopPollMs;
    int pr = ::poll(fds.data(), n, wait_ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) {
      if (!killed && spec.timeout.count() > 0 && std::chrono::steady_clock::now() >= deadline) {
        result.timed_out = true;
        ::kill(-pid, SIGKILL);
        killed = true;
      }
      continue;
    }
    auto drain = [&](int idx, Pipe& p, std::string& sink) {
      if (idx < 0 || !(fds[idx].revents & (POLLIN | POLLHUP | POLLERR))) return;
      char buf[65536];
      ssize_t got = ::read(p.fd[0], buf, sizeof buf);
      if (got <= 0) { p.close_end(0); return; }
      std::size_t room = spec.max_output_bytes > sink.size() ? spec.max_output_bytes - sink.size() : 0;
      if (static_cast<std::size_t>(got) > room) result.output_truncated = true;
      sink.append(buf, std::min<std::size_t>(room, static_cast<std::size_t>(got)));
    };
    drain(out_i, out, result.out);
    drain(err_i, err, result.err);
    if (in_i >= 0 && (fds[in_i].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = ::write(in.fd[1], spec.stdin_data.data() + written, spec.stdin_data.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      if (w < 0 && errno != EAGAIN) in.close_end(1);
      if (written >= spec.stdin_data.size()) in.close_end(1);
    }
  }
  in.close_end(1);
  // The child may close its output and still run (or hang): keep honouring the deadline while reaping it.
  int status = 0;
  for (;;) {
    pid_t w = ::waitpid(pid, &status, killed ? 0 : WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (w == 0) {
      if (spec.stop.stop_requested()) {
        result.cancelled = true;
        ::kill(-pid, SIGKILL);
        killed = true;
      } else if (spec.timeout.count() > 0 && std::chrono::steady_clock::now() >= deadline) {
        result.timed_out = true;
        ::kill(-pid, SIGKILL);
        killed = true;
      } else {
        ::usleep(2000);
      }
    }
  }
  // Grandchildren that kept our pipes open are gone once the pipes closed; kill the group anyway so nothing lingers.
  ::kill(-pid, SIGKILL);
  unregister_child_group(pid);
  result.wall_seconds = seconds_since(t0);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  return result;
}

}  // namespace cutegen
