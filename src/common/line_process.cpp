#include "common/line_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/child_env.h"
#include "common/child_registry.h"

namespace cutegen {

Result<LineProcess> LineProcess::start(const ProcessSpec& spec, const std::string& stderr_path) {
  if (spec.argv.empty()) return Error{"internal: empty command line"};
  auto exe = find_executable(spec.argv[0]);
  if (!exe) return Error{fmt::format("`{}` not found on PATH", spec.argv[0])};
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return Error{fmt::format("pipe: {}", std::strerror(errno))};
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return Error{fmt::format("pipe: {}", std::strerror(errno))};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (spec.cwd) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd->c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Own process group (killed as one); default signal dispositions and an empty mask, whatever
  // cutegen ignores (SIGPIPE) or holds off while spawning (SpawnGuard).
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);

  std::vector<std::string> env_strings = child_environment(spec);
  std::vector<char*> envp, argv;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  LineProcess p;
  {
    SpawnGuard guard;  // no Ctrl-C between the spawn and the registration
    int rc = posix_spawn(&p.pid_, exe->c_str(), &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(in[0]);
    ::close(out[1]);
    if (rc != 0) {
      ::close(in[1]);
      ::close(out[0]);
      p.pid_ = -1;
      return Error{fmt::format("cannot start `{}`: {}", spec.argv[0], std::strerror(rc))};
    }
    p.in_ = in[1];
    p.out_ = out[0];
    if (auto r = register_child_group(p.pid_); !r) return r.error();  // ~LineProcess reaps it
  }
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
    if (got <= 0) return Error{"the process exited"};
    buffer_.append(buf, static_cast<std::size_t>(got));
  }
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
