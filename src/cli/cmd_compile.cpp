#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "common/json_text.h"
#include "cli/commands.h"
#include "cli/judge_stack.h"
#include "common/fs.h"
#include "common/locations.h"
#include "common/process.h"
#include "compile/nvcc_compiler.h"
#include "common/terminal_text.h"

namespace cutegen::cli {
namespace {

struct CompileArgs {
  std::string kernel;
  std::string arch;
  bool json = false;
};

int run_compile(const GlobalOptions& global, const CompileArgs& args) {
  auto resolved = resolve_compile_options(global, args.arch);
  if (!resolved) return fail(resolved.error().message);
  CompileOptions options = *resolved;
  auto source = read_file(args.kernel);
  if (!source) return fail(source.error().message);

  auto sandbox = sandbox_path();
  if (!sandbox) return fail(sandbox.error().message);
  PosixProcessRunner runner;
  auto toolchain = probe_toolchain(runner, options);
  if (!toolchain) return fail(toolchain.error().message);
  auto cache = open_compile_cache(global);
  if (!cache) return fail(cache.error().message);
  NvccCompiler compiler(runner, options, *toolchain, std::move(*cache), *sandbox);
  std::string name = std::filesystem::path(args.kernel).filename().string();
  print_safe(stderr, "compiling {} for {} ...\n", name, options.arch);
  auto outcome = compiler.compile({*source, name});
  if (!outcome) return fail(outcome.error().message);

  if (args.json) {
    // ASCII JSON: every control and non-ASCII character a \u escape, so it is safe on a terminal and still JSON.
    fmt::print("{}\n", outcome->to_json().dump(2, ' ', true, nlohmann::json::error_handler_t::replace));
  } else {
    std::string timing = outcome->cache_hit
                             ? fmt::format("cache hit in {:.2f} s (first compile took {:.1f} s)", outcome->total_seconds,
                                           outcome->nvcc_seconds)
                             : fmt::format("nvcc {:.1f} s{}, checks {:.2f} s{}", outcome->nvcc_seconds,
                                           outcome->nvcc_steps.empty() ? ""
                                           : outcome->host_pch.empty()
                                               ? " (" + outcome->nvcc_steps + ")"
                                               : " (" + outcome->nvcc_steps + "; host header: " + outcome->host_pch + ")",
                                           outcome->check_seconds,
                                           outcome->cute_evidence == "build" ? ", CuTe seen in the build" : "");
    print_safe(stdout, "{}: {} [{}; {}]\n", name, to_string(outcome->verdict), options.arch, timing);
    if (outcome->ok()) print_safe(stdout, "library: {}\n", outcome->library.string());
    else print_safe(stdout, "{}", outcome->feedback());
    for (const auto& w : outcome->performance_warnings()) print_safe(stderr, "warning: ptxas: {}\n", w);
  }
  if (outcome->ok()) return 0;
  std::string reason = to_string(outcome->verdict);
  if (outcome->verdict == CompileVerdict::compile_error)
    reason = fmt::format("{} compile error{}", outcome->diagnostic.total_errors,
                         outcome->diagnostic.total_errors == 1 ? "" : "s");
  if (outcome->verdict == CompileVerdict::rejected) reason = "rejected: " + outcome->violations.front().message;
  return fail(fmt::format("{}: {}", name, reason));
}

}  // namespace

Result<CompileOptions> resolve_compile_options(const GlobalOptions& global, const std::string& arch_override) {
  auto config = load_config(global);
  if (!config) return config.error();
  CompileOptions options = config->compile;
  if (!arch_override.empty()) {
    if (auto g = gencode_for(arch_override); !g) return g.error();
    options.arch = arch_override;
  }
  return options;
}

void add_compile_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto args = std::make_shared<CompileArgs>();
  auto* cmd = app.add_subcommand("compile", "Compile a CuTe candidate into a checked shared library (cached)");
  cmd->add_option("kernel", args->kernel, "the candidate .cu file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--arch", args->arch, "target, e.g. sm_90a (default: config compile.arch, else sm_90a)");
  cmd->add_flag("--json", args->json, "print the full outcome as JSON on stdout");
  cmd->callback([&global, &exit_code, args] { exit_code = run_compile(global, *args); });
}

}  // namespace cutegen::cli
