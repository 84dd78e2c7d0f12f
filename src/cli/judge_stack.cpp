#include "cli/judge_stack.h"

#include <fmt/format.h>

#include "common/locations.h"
#include "common/terminal_text.h"
#include "sandbox/sandbox_command.h"

namespace cutegen::cli {
namespace fs = std::filesystem;

fs::path runner_path() {
  if (const char* env = std::getenv("CUTEGEN_RUNNER"); env && *env) return env;
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("cutegen-runner") : self.parent_path() / "cutegen-runner";
}

Result<fs::path> sandbox_path() {
  fs::path path;
  if (const char* env = std::getenv("CUTEGEN_SANDBOX"); env && *env) {
    path = env;
  } else {
    std::error_code ec;
    auto self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return Error{fmt::format("cannot find this executable's directory ({}): set CUTEGEN_SANDBOX", ec.message())};
    path = self.parent_path() / "cutegen-sandbox";
  }
  if (!find_executable(path.string()))
    return Error{fmt::format("{} is missing: it is built next to cutegen (cmake --build build --target cutegen-sandbox), "
                             "or set CUTEGEN_SANDBOX to its path", path.string())};
  // The compile preloads it from beside the wrapper (NvccCompiler::sandbox_policy).
  std::error_code ec;
  if (auto lib = denied_as_missing_library(path); !fs::is_regular_file(lib, ec))
    return Error{fmt::format("{} is missing: it is built next to cutegen-sandbox (cmake --build build --target "
                             "cutegen-sandbox builds both) and must lie beside whichever CUTEGEN_SANDBOX names",
                             lib.string())};
  return path;
}

Result<std::unique_ptr<JudgeStack>> make_judge_stack(const GlobalOptions& global, const std::string& arch,
                                                     EvalOptions options, const fs::path& work_dir) {
  std::string why;
  if (!gpu_visible(why)) return Error{fmt::format("this needs an NVIDIA GPU and {}; `cutegen compile` works without one", why)};
  auto compile_options = resolve_compile_options(global, arch);
  if (!compile_options) return compile_options.error();
  auto sandbox = sandbox_path();
  if (!sandbox) return sandbox.error();
  auto stack = std::make_unique<JudgeStack>();
  auto toolchain = probe_toolchain(stack->runner, *compile_options);
  if (!toolchain) return toolchain.error();
  auto cache = open_compile_cache(global);
  if (!cache) return cache.error();
  stack->compiler =
      std::make_unique<NvccCompiler>(stack->runner, *compile_options, *toolchain, std::move(*cache), *sandbox);
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", work_dir.string(), ec.message())};
  stack->work_dir = work_dir;
  auto worker = PythonWorker::start({.log_path = work_dir / "worker.log"});
  if (!worker) return worker.error();
  stack->worker = std::move(*worker);
  options.runner = runner_path();
  options.work_dir = work_dir;
  options.cache_root = cache_root();
  stack->device_lock = options.device_lock;
  stack->judge = std::make_unique<Judge>(*stack->compiler, *stack->worker, options);
  return stack;
}

JudgeStack::~JudgeStack() {
  judge.reset();  // it refers to the worker
  // The worker's exit is a task's last GPU work: without the lock it could fall in the timed calls of
  // another task on the same GPU (cutegen bench -j N), whose probes would charge the delay to that kernel.
  if (auto ended = end_worker_holding(std::move(worker), device_lock); !ended)
    print_safe(stderr, "note: the reference worker was ended without the GPU's lock: {}\n", ended.error().message);
}

}  // namespace cutegen::cli
