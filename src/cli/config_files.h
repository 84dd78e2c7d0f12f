#pragma once
// Where cutegen's configuration comes from, and how far each source is trusted.
//
// Sources, highest precedence first: the file the user named (--config FILE, else $CUTEGEN_CONFIG),
// the user's own file ($XDG_CONFIG_HOME/cutegen/config.json, else ~/.config/cutegen/config.json), and
// the project's ./cutegen.json. Each one present is applied in turn from the lowest up, so a key set
// in a higher one wins. A project file arrives with the checkout it sits in, which may be anyone's:
// keys that run programs or move secrets (compile_key_needs_trust, llm_key_needs_trust) are an error
// there, naming the key and how to trust the file. Unknown keys at any level are errors.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "compile/compile_cache.h"
#include "compile/compile_options.h"
#include "llm/llm_config.h"
#include "tune/tuner.h"

namespace cutegen::cli {

enum class ConfigSource { named, user, project };

struct ConfigLocations {
  std::filesystem::path named;  // empty: none named
  std::string named_by;         // "--config" or "CUTEGEN_CONFIG", for messages
  std::optional<std::filesystem::path> user;  // where the user's file would be; empty: no home to look in
  std::filesystem::path project = "cutegen.json";
};

// From --config (empty when not given) and the environment (CUTEGEN_CONFIG, XDG_CONFIG_HOME, HOME).
ConfigLocations config_locations(const std::string& config_option);

struct UsedConfigFile {
  std::filesystem::path path;
  ConfigSource source;
};

struct LoadedConfig {
  std::vector<UsedConfigFile> files;  // highest precedence first; empty: built-in defaults only
  CompileOptions compile;
  LlmConfig llm;
  CacheOptions cache;  // the "cache" section (cache.max_mb); harmless from any file
  TuneConfig tune;     // the "tune" section (max_variants, jobs); harmless from any file

  // "config: FILE (source), ..." for stderr; empty when no file was used.
  std::string describe() const;
};

// Reads and checks every source that exists. A named file that cannot be read is an error; a missing
// user or project file is not. Errors name the file and the key.
Result<LoadedConfig> load_config_files(const ConfigLocations& where);

// A file named by --config or CUTEGEN_CONFIG that is not there is an error for every command, also one
// that reads no configuration (main checks it before any command runs): a typo must not go unnoticed.
Status check_named_config(const ConfigLocations& where);

// What a command line says about the LLM, over what the files say.
struct LlmOverrides {
  std::string spec;          // --llm: replaces the backend and what identifies it, keeps the rest
  std::string record;        // --record DIR
  std::string prices;        // --prices FILE
  double max_cost = 0;       // --max-cost, --max-tokens, --max-calls: the run's budget; 0 keeps the file's
  long long max_tokens = 0;
  long long max_calls = 0;
};
// The one merge of command line over configuration for every command that calls an LLM. Error: the
// spec is malformed, or neither names a backend (the message says how to name one).
Result<LlmConfig> merge_llm_config(LlmConfig from_files, const LlmOverrides& overrides);

}  // namespace cutegen::cli
