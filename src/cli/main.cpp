#include <sys/prctl.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/child_registry.h"
#include "common/fs.h"
#include "common/version.h"

namespace cutegen::cli {

int fail(const std::string& message) {
  fmt::print(stderr, "cutegen: {}\n", message);
  return 1;
}

Result<nlohmann::json> load_config(const GlobalOptions& global) {
  std::string path = global.config_path;
  if (path.empty()) {
    if (const char* env = std::getenv("CUTEGEN_CONFIG"); env && *env) path = env;
  }
  bool explicit_path = !path.empty();
  if (!explicit_path) {
    if (!std::filesystem::exists("cutegen.json")) return nlohmann::json::object();
    path = "cutegen.json";
  }
  auto text = read_file(path);
  if (!text) return Error{fmt::format("config: {}", text.error().message)};
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{fmt::format("config: {} is not a JSON object", path)};
  return j;
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
  CLI::App app{"cutegen: turns PyTorch operations into fast, verified CuTe kernels with an LLM"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("cutegen {} ({})", CUTEGEN_VERSION, CUTEGEN_GIT_COMMIT));
  GlobalOptions global;
  app.add_option("--config", global.config_path, "JSON config file (default: $CUTEGEN_CONFIG, else ./cutegen.json)");
  int exit_code = 0;
  add_compile_command(app, global, exit_code);
  add_doctor_command(app, global, exit_code);
  add_eval_command(app, global, exit_code);
  add_calibrate_command(app, global, exit_code);
  add_llm_command(app, global, exit_code);
  add_profile_command(app, global, exit_code);
  add_optimize_command(app, global, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
