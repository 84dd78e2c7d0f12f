#include <sys/prctl.h>

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/child_registry.h"
#include "common/exit_codes.h"
#include "common/version.h"
#include "common/terminal_text.h"

namespace cutegen::cli {

int fail(const std::string& message) {
  print_safe(stderr, "cutegen: {}\n", message);
  return cutegen::kExitFailure;
}

Result<LoadedConfig> load_config(const GlobalOptions& global) {
  if (!global.loaded) {
    auto loaded = load_config_files(config_locations(global.config_path));
    if (!loaded) return loaded.error();
    if (auto line = loaded->describe(); !line.empty()) print_safe(stderr, "{}\n", line);
    global.loaded = std::make_shared<const LoadedConfig>(std::move(*loaded));
  }
  return *global.loaded;
}

}  // namespace cutegen::cli

int main(int argc, char** argv) {
  using namespace cutegen::cli;
  // Processes of the same user (a candidate's runner among them) can neither read our memory nor
  // /proc/<pid>/environ, which holds the API keys.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // Ctrl-C, SIGTERM and SIGHUP end nvcc, the worker, the runner and ncu with us; the run directory is
  // left as a kill -9 leaves it, which --resume continues.
  if (auto s = cutegen::install_termination_handlers(); !s) return fail(s.error().message);
  // A task of `cutegen bench` ends with its scheduler, even one killed with -9: SIGTERM then runs the
  // handler above, which ends the task's own children; --resume continues the task later.
  if (const char* parent = std::getenv("CUTEGEN_PARENT_PID"); parent && *parent) {
    const std::string expected = parent;
    ::unsetenv("CUTEGEN_PARENT_PID");  // for this process only, not for what it starts
    ::prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
    if (std::to_string(::getppid()) != expected) return fail("the cutegen bench that started this task is gone");
  }
  CLI::App app{"cutegen: turns PyTorch operations into fast, verified CuTe kernels with an LLM"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("cutegen {} ({})", CUTEGEN_VERSION, CUTEGEN_GIT_COMMIT));
  GlobalOptions global;
  app.add_option("--config", global.config_path,
                 "JSON config file, trusted with every key (default: $CUTEGEN_CONFIG); "
                 "~/.config/cutegen/config.json and ./cutegen.json are read too, with lower precedence. "
                 "Before or after the command");
  // Options a subcommand does not know go up to the app, so --config works after the command too
  // (subcommands added below inherit this).
  app.fallthrough();
  // Before any command runs: a named config file that is not there stops every command, also those
  // that read no configuration.
  app.parse_complete_callback([&global] {
    if (auto named = check_named_config(config_locations(global.config_path)); !named)
      throw CLI::ValidationError(named.error().message);
  });
  int exit_code = 0;
  add_compile_command(app, global, exit_code);
  add_cache_command(app, global, exit_code);
  add_doctor_command(app, global, exit_code);
  add_eval_command(app, global, exit_code);
  add_calibrate_command(app, global, exit_code);
  add_llm_command(app, global, exit_code);
  add_profile_command(app, global, exit_code);
  add_optimize_command(app, global, exit_code);
  add_seed_command(app, global, exit_code);
  add_prompt_command(app, global, exit_code);
  add_tune_command(app, global, exit_code);
  add_report_command(app, global, exit_code);
  add_bench_command(app, global, exit_code);
  add_export_command(app, global, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and succeed; a bad argument is one line and kExitBadArgument.
    if (e.get_exit_code() == 0) return app.exit(e);
    cutegen::print_safe(stderr, "cutegen: {} (see --help)\n", e.what());
    return cutegen::kExitBadArgument;
  }
  return exit_code;
}
