#pragma once
// Slurm as the multi-node engine: one array job, one array task per shard, each running the same
// `cutegen bench` command on its shard (--shard $SLURM_ARRAY_TASK_ID/N) into the same shared suite
// directory. Nothing here talks to Slurm except submit(); the script is plain text, tested as such.
#include <filesystem>
#include <string>
#include <vector>

#include "common/process.h"
#include "common/result.h"

namespace cutegen::bench {

struct SlurmPlan {
  int shards = 1;
  std::string gres = "gpu:1";              // "" : no --gres line (CPU shards)
  std::vector<std::string> sbatch_args;    // each becomes an `#SBATCH ARG` line, after ours (so it overrides)
  std::filesystem::path suite_dir;         // absolute
  std::filesystem::path workdir;           // absolute; the shards run there (relative paths keep their meaning)
  std::vector<std::string> command;        // the bench command without the Slurm options, argv[0] absolute
};

// The command line of this process with the options that only concern submission removed
// (--slurm, --dry-run, --shards N, --sbatch-arg ARG, --gres SPEC, --shard I/N, --quiet), in both
// `--opt value` and `--opt=value` spellings.
std::vector<std::string> strip_submission_options(const std::vector<std::string>& argv);

std::string sbatch_script(const SlurmPlan& plan);

// Single-quoted for bash.
std::string shell_quote(const std::string& s);

// `sbatch --parsable SCRIPT`; the job id, or Error with sbatch's own message.
Result<std::string> submit(ProcessRunner& runner, const std::filesystem::path& script);

// This process's command line (/proc/self/cmdline), argv[0] replaced by the executable's absolute path.
Result<std::vector<std::string>> own_command_line();

}  // namespace cutegen::bench
