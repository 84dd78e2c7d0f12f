#pragma once
// The one way cutegen starts another program (nvcc, python, ncu, the runner, an `exec` LLM).
// Everything that crosses a process boundary goes through ProcessRunner so tests can swap in a fake.
#include <chrono>
#include <filesystem>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace cutegen {

struct ProcessSpec {
  // allow_list: the child sees only the names env_name_allowed() passes (common/child_env.h), so API
  //             keys never reach nvcc, the worker, the runner or ncu.
  // inherit:    the whole environment; only for programs the user named to act for them (an `exec` LLM).
  enum class Environment { allow_list, inherit };

  std::vector<std::string> argv;  // argv[0] is looked up on PATH
  std::string stdin_data;
  std::chrono::milliseconds timeout{0};  // 0: wait forever
  std::optional<std::filesystem::path> cwd;
  std::vector<std::pair<std::string, std::string>> env;  // set on top of what `environment` passes
  // A candidate kernel that floods stdout must not exhaust our memory; past this the stream is cut.
  std::size_t max_output_bytes = 64u << 20;
  Environment environment = Environment::allow_list;
  // allow_list: HOME and TMPDIR point here (the caller creates it); unset, the child gets neither.
  std::optional<std::filesystem::path> private_dir;
  // A stop requested here kills the child's group, as a timeout does, and the result says `cancelled`:
  // work another thread found it no longer needs (the CuTe analysis compile once the build proved it).
  std::stop_token stop;
};

struct ProcessResult {
  int exit_code = -1;    // exit status when the process exited normally
  int term_signal = 0;   // signal number when it was killed by a signal
  bool timed_out = false;
  bool cancelled = false;  // ProcessSpec::stop was requested before the child ended
  bool output_truncated = false;
  std::string out;
  std::string err;
  double wall_seconds = 0;

  bool succeeded() const { return !timed_out && !cancelled && term_signal == 0 && exit_code == 0; }
  // "exit code 2", "killed by signal 11 (Segmentation fault)", "timed out after 30.0 s"
  std::string describe_end() const;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Fails only when the program cannot be started at all (not found, not executable).
  virtual Result<ProcessResult> run(const ProcessSpec& spec) = 0;
};

// posix_spawn in a fresh process group; on timeout the whole group is killed, so a hung child's children die too.
// The group is in the child registry (common/child_registry.h) while it runs, so Ctrl-C ends it too.
class PosixProcessRunner final : public ProcessRunner {
 public:
  Result<ProcessResult> run(const ProcessSpec& spec) override;
};

// Locates an executable on PATH (or checks an explicit path). Empty when not found.
std::optional<std::filesystem::path> find_executable(const std::string& name);

}  // namespace cutegen
