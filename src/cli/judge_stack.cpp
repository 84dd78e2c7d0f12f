#include "cli/judge_stack.h"

#include <fmt/format.h>

#include "common/locations.h"

namespace cutegen::cli {
namespace fs = std::filesystem;

fs::path runner_path() {
  if (const char* env = std::getenv("CUTEGEN_RUNNER"); env && *env) return env;
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("cutegen-runner") : self.parent_path() / "cutegen-runner";
}

Result<std::unique_ptr<JudgeStack>> make_judge_stack(const GlobalOptions& global, const std::string& arch,
                                                     EvalOptions options, const fs::path& work_dir) {
  std::string why;
  if (!gpu_visible(why)) return Error{fmt::format("this needs an NVIDIA GPU and {}; `cutegen compile` works without one", why)};
  auto compile_options = resolve_compile_options(global, arch);
  if (!compile_options) return compile_options.error();
  auto stack = std::make_unique<JudgeStack>();
  auto toolchain = probe_toolchain(stack->runner, *compile_options);
  if (!toolchain) return toolchain.error();
  stack->compiler = std::make_unique<NvccCompiler>(stack->runner, *compile_options, *toolchain, CompileCache(cache_root()));
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
  stack->judge = std::make_unique<Judge>(*stack->compiler, *stack->worker, stack->runner, options);
  return stack;
}

}  // namespace cutegen::cli
