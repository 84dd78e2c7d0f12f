#pragma once
// Each user-facing command registers itself on the CLI11 app and returns the process exit code.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/config_files.h"
#include "common/result.h"
#include "compile/compile_cache.h"
#include "compile/compile_options.h"

namespace cutegen::cli {

struct GlobalOptions {
  std::string config_path;  // --config; else $CUTEGEN_CONFIG (config_files.h has the other sources)
  // The first load_config fills this, so a command reads its configuration, and says which files it
  // used, once.
  mutable std::shared_ptr<const LoadedConfig> loaded;
};

// The configuration from every source (config_files.h). The first call prints which files were used
// on stderr. Malformed JSON, unknown keys and untrusted keys are errors, never silently ignored.
Result<LoadedConfig> load_config(const GlobalOptions& global);

// Compile options from the configuration's "compile" sections, with a command-line --arch on top.
Result<CompileOptions> resolve_compile_options(const GlobalOptions& global, const std::string& arch_override);

// Cache options from the configuration's "cache" section (cache.max_mb).
Result<CacheOptions> resolve_cache_options(const GlobalOptions& global);
// The compile cache under cache_root() as compiles use it: opened (stale staging reaped, cap enforced).
Result<CompileCache> open_compile_cache(const GlobalOptions& global);

// True when nvidia-smi lists a GPU; otherwise `why` says what was seen.
bool gpu_visible(std::string& why);

// Registers the subcommand; `exit_code` receives its result when it runs.
void add_compile_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_cache_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_doctor_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_eval_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_calibrate_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_llm_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_profile_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_optimize_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_seed_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_prompt_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_tune_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_report_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_bench_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_export_command(CLI::App& app, const GlobalOptions& global, int& exit_code);

// "cutegen: <message>" on stderr; returns the exit code for failures the user must act on.
int fail(const std::string& message);

}  // namespace cutegen::cli
