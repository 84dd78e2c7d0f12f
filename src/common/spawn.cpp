#include "common/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/child_env.h"
#include "common/child_registry.h"

namespace cutegen {
namespace {

// posix_spawn's set-up objects, destroyed however the spawn ends.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

Result<pid_t> spawn_child_group(const ProcessSpec& spec, const ChildStdio& stdio) {
  if (spec.argv.empty()) return Error{"internal: empty command line"};
  auto exe = find_executable(spec.argv[0]);
  if (!exe) return Error{fmt::format("`{}` not found on PATH", spec.argv[0])};

  SpawnSetup s;
  posix_spawn_file_actions_adddup2(&s.actions, stdio.in, 0);
  posix_spawn_file_actions_adddup2(&s.actions, stdio.out, 1);
  if (const int* fd = std::get_if<int>(&stdio.err))
    posix_spawn_file_actions_adddup2(&s.actions, *fd, 2);
  else
    posix_spawn_file_actions_addopen(&s.actions, 2, std::get<std::filesystem::path>(stdio.err).c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (spec.cwd) posix_spawn_file_actions_addchdir_np(&s.actions, spec.cwd->c_str());
  posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&s.attr, 0);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&s.attr, &all);
  posix_spawnattr_setsigmask(&s.attr, &none);

  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = child_environment(spec);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  SpawnGuard guard;  // no Ctrl-C between the spawn and the registration
  pid_t pid = -1;
  if (int rc = posix_spawn(&pid, exe->c_str(), &s.actions, &s.attr, argv.data(), envp.data()); rc != 0)
    return Error{fmt::format("cannot start `{}`: {}", spec.argv[0], std::strerror(rc))};
  if (auto r = register_child_group(pid); !r) {
    ::waitpid(pid, nullptr, 0);  // the registry killed the group when it refused it
    return r.error();
  }
  return pid;
}

}  // namespace cutegen
