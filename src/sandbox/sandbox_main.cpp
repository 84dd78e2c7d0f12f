// cutegen-sandbox: applies a SandboxPolicy to itself, then execs the program (seccomp, Landlock,
// rlimits, no_new_privs and the parent-death signal all survive execve). cutegen runs nvcc through it.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "common/process.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_command.h"


namespace {

constexpr int kSetupFailed = 125;
constexpr int kCannotExecute = 126;
constexpr int kNotFound = 127;

int fail(int code, const std::string& message) {
  fmt::print(stderr, "cutegen-sandbox: {}\n", message);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cutegen;
  // Taken first: if the parent dies before the sandbox sets the death signal, getppid() changes.
  pid_t parent = ::getppid();
  auto inv = parse_sandbox_args(std::vector<std::string>(argv + 1, argv + argc));
  if (!inv) return fail(kSetupFailed, inv.error().message);
  if (inv->help) {
    fmt::print("{}", sandbox_usage());
    return 0;
  }
  const std::string& program = inv->program[0];
  auto exe = find_executable(program);
  if (!exe) {
    std::error_code ec;
    bool exists = program.find('/') != std::string::npos && std::filesystem::exists(program, ec);
    return exists ? fail(kCannotExecute, fmt::format("{}: not executable", program))
                  : fail(kNotFound, fmt::format("{}: not found", program));
  }

  // The runner profile allows execve only with this exact pointer; a page of its own, at an address
  // chosen by the kernel's randomised mmap, which the exec'd program cannot learn.
  std::string path = exe->string();
  void* page = ::mmap(nullptr, path.size() + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return fail(kSetupFailed, fmt::format("mmap: {}", std::strerror(errno)));
  std::memcpy(page, path.c_str(), path.size() + 1);
  auto* exec_path = static_cast<const char*>(page);

  SandboxPolicy policy = inv->policy;
  policy.expected_parent = parent;
  policy.allowed_execve_path = exec_path;
  if (!policy.preload.empty()) policy.read_paths.push_back(policy.preload);
  auto applied = apply_sandbox(policy);
  if (!applied) return fail(kSetupFailed, applied.error().message);
  // Set after the sandbox, so that nothing runs with it but PROGRAM and what it starts.
  if (!policy.preload.empty() && ::setenv("LD_PRELOAD", policy.preload.c_str(), 1) != 0)
    return fail(kSetupFailed, fmt::format("cannot set LD_PRELOAD: {}", std::strerror(errno)));

  std::vector<char*> args;
  for (auto& a : inv->program) args.push_back(a.data());
  args.push_back(nullptr);
  ::execve(exec_path, args.data(), environ);
  int err = errno;
  return fail(err == ENOENT ? kNotFound : kCannotExecute,
              fmt::format("cannot execute {}: {}{}", path, std::strerror(err),
                          err == EACCES ? " (outside the --read paths?)" : ""));
}
