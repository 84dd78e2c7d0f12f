#include "common/line_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/child_registry.h"
#include "common/spawn.h"

namespace cutegen {

Result<LineProcess> LineProcess::start(const ProcessSpec& spec, const std::string& stderr_path) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return Error{fmt::format("pipe: {}", std::strerror(errno))};
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return Error{fmt::format("pipe: {}", std::strerror(errno))};
  }
  auto spawned = spawn_child_group(spec, {.in = in[0], .out = out[1], .err = std::filesystem::path(stderr_path)});
  ::close(in[0]);
  ::close(out[1]);
  if (!spawned) {
    ::close(in[1]);
    ::close(out[0]);
    return spawned.error();
  }
  LineProcess p;
  p.pid_ = *spawned;
  p.in_ = in[1];
  p.out_ = out[0];
  signal(SIGPIPE, SIG_IGN);  // a dead child must give us EPIPE, not kill us
  return p;
}

LineProcess::LineProcess(LineProcess&& o) noexcept
    : pid_(o.pid_), in_(o.in_), out_(o.out_), buffer_(std::move(o.buffer_)) {
  o.pid_ = -1;
  o.in_ = o.out_ = -1;
}

LineProcess& LineProcess::operator=(LineProcess&& o) noexcept {
  if (this != &o) {
    kill();
    pid_ = o.pid_;
    in_ = o.in_;
    out_ = o.out_;
    buffer_ = std::move(o.buffer_);
    o.pid_ = -1;
    o.in_ = o.out_ = -1;
  }
  return *this;
}

LineProcess::~LineProcess() { kill(); }

Status LineProcess::write_line(const std::string& line) {
  std::string data = line + "\n";
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::write(in_, data.data() + done, data.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return Error{fmt::format("the process stopped reading its input: {}", std::strerror(errno))};
    done += static_cast<std::size_t>(w);
  }
  return ok_status();
}

Result<std::string> LineProcess::read_line(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill();
      return Error{fmt::format("no answer within {:.0f} s", timeout.count() / 1000.0)};
    }
    pollfd pfd{out_, POLLIN, 0};
    int pr = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    char buf[65536];
    ssize_t got = ::read(out_, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Error{how_it_ended(std::chrono::seconds(2))};
    buffer_.append(buf, static_cast<std::size_t>(got));
  }
}

std::string LineProcess::how_it_ended(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return "the process exited";
  const auto deadline = std::chrono::steady_clock::now() + grace;
  int status = 0;
  pid_t got = 0;
  while ((got = ::waitpid(pid_, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    ::usleep(10'000);
  if (got != pid_) return "the process closed its output";
  // Reaped: what is left of its group (a worker's runners) goes now, while the group's id is surely ours.
  ::kill(-pid_, SIGKILL);
  unregister_child_group(pid_);
  pid_ = -1;
  if (WIFEXITED(status)) return fmt::format("the process exited with status {}", WEXITSTATUS(status));
  if (!WIFSIGNALED(status)) return "the process ended";
  const int sig = WTERMSIG(status);
  const char* name = sigabbrev_np(sig);
  std::string text = fmt::format("the process was killed by signal {} (SIG{})", sig, name ? name : "?");
  // Nobody in cutegen sends SIGKILL to a worker that still answers: on Linux that is the out-of-memory killer.
  if (sig == SIGKILL)
    text += ": on Linux usually the out-of-memory killer (`dmesg` names it); the problem's tensors, its reference "
            "and the judge's copies may not fit this machine's memory";
  return text;
}

bool LineProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  return ::waitpid(pid_, &status, WNOHANG) == 0;
}

void LineProcess::kill() {
  if (in_ >= 0) ::close(in_);
  if (out_ >= 0) ::close(out_);
  in_ = out_ = -1;
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
    unregister_child_group(pid_);
    pid_ = -1;
  }
}

}  // namespace cutegen
