#pragma once
// The command line of `cutegen-sandbox`: built by callers that wrap a program (the compile stage
// wraps nvcc) and parsed by the wrapper itself, here in one place so both sides agree.
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"
#include "sandbox/sandbox.h"

namespace cutegen {

// `wrapper [options] -- program...`; only the options of `policy` that differ from the defaults.
std::vector<std::string> sandbox_command(const std::filesystem::path& wrapper, const SandboxPolicy& policy,
                                         const std::vector<std::string>& program);

struct SandboxInvocation {
  SandboxPolicy policy;
  std::vector<std::string> program;  // empty with help
  bool help = false;
};

// `args` excludes argv[0]. Errors are one line naming the bad argument.
Result<SandboxInvocation> parse_sandbox_args(const std::vector<std::string>& args);

std::string sandbox_usage();

// sandbox/denied_as_missing.c, built next to the wrapper: preloaded into nvcc so that a file Landlock
// denies looks missing to the compile (no file-existence oracle through __has_include).
std::filesystem::path denied_as_missing_library(const std::filesystem::path& wrapper);

}  // namespace cutegen
