#pragma once
// The judge with its real stages (nvcc compiler, Python reference worker, runner processes), as the
// eval, optimize and profile commands all build it.
#include <filesystem>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/judge_args.h"
#include "common/process.h"
#include "compile/nvcc_compiler.h"
#include "run/judge.h"
#include "run/reference_worker.h"

namespace cutegen::cli {

struct JudgeStack {
  PosixProcessRunner runner;
  std::unique_ptr<NvccCompiler> compiler;
  std::unique_ptr<PythonWorker> worker;
  std::unique_ptr<Judge> judge;
  std::filesystem::path work_dir;  // runner job/result files and the worker log
  DeviceLock* device_lock = nullptr;  // the judge's (EvalOptions::device_lock); must outlive the stack

  JudgeStack() = default;
  JudgeStack(const JudgeStack&) = delete;
  JudgeStack& operator=(const JudgeStack&) = delete;
  // Ends the worker holding `device_lock`, as the judge holds it around the load that made the worker's
  // CUDA context: the context's teardown is GPU work too (end_worker_holding).
  ~JudgeStack();
};

// Fails with one line when there is no GPU, nvcc is missing or the worker cannot start.
// `options.runner`, `work_dir` and `cache_root` are filled in here.
Result<std::unique_ptr<JudgeStack>> make_judge_stack(const GlobalOptions& global, const std::string& arch,
                                                     EvalOptions options, const std::filesystem::path& work_dir);

// The cutegen-runner next to this executable (or $CUTEGEN_RUNNER).
std::filesystem::path runner_path();

// The cutegen-sandbox next to this executable (or $CUTEGEN_SANDBOX), which nvcc runs through; an
// Error saying how to get it when it is not there.
Result<std::filesystem::path> sandbox_path();

}  // namespace cutegen::cli
