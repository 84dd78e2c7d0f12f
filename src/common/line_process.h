#pragma once
// A long-lived child process spoken to in lines (the reference worker's JSON-lines protocol).
// ProcessRunner covers run-to-completion programs; this covers request/response sessions.
#include <chrono>
#include <string>
#include <sys/types.h>
#include <vector>

#include "common/process.h"
#include "common/result.h"

namespace cutegen {

class LineProcess {
 public:
  // Starts argv with pipes on stdin/stdout; the child's stderr goes to `stderr_path` (a file) so its
  // diagnostics survive and cannot block it.
  static Result<LineProcess> start(const ProcessSpec& spec, const std::string& stderr_path);
  LineProcess(LineProcess&&) noexcept;
  LineProcess& operator=(LineProcess&&) noexcept;
  LineProcess(const LineProcess&) = delete;
  ~LineProcess();

  Status write_line(const std::string& line);
  // The next line without its newline; an Error on timeout (the child is then killed) or EOF, which says how
  // the child ended when it has (its exit status, or the signal that killed it).
  Result<std::string> read_line(std::chrono::milliseconds timeout);
  bool running();
  void kill();  // SIGKILL to the child's process group, then reap
  pid_t pid() const { return pid_; }

 private:
  LineProcess() = default;
  // After EOF: waits up to `grace` for the child to end, reaps it and says how, e.g. "the process was killed
  // by signal 9 (SIGKILL: ...)"; "the process closed its output" while it still runs.
  std::string how_it_ended(std::chrono::milliseconds grace);
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
};

}  // namespace cutegen
