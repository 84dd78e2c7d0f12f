#pragma once
// How candidates are compiled. Users tune optimisation flags and the target; the flags the static
// checks depend on (shared cudart, uncompressed fatbin, line info, CUTLASS's direct driver calls and
// the driver stub) are always added and cannot be removed.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace cutegen {

struct CompileOptions {
  std::string nvcc = "nvcc";
  std::string arch = "sm_90a";  // one -gencode pass for exactly this target
  std::string cpp_std = "c++17";
  std::vector<std::string> flags = {"-O3", "--expt-relaxed-constexpr"};
  std::vector<std::string> extra_flags;  // appended after `flags`, e.g. "-Xptxas=-v"
  std::string host_compiler;             // -ccbin; empty: nvcc's default
  std::chrono::seconds timeout{300};
  // nvcc and each of its children (cicc, cc1plus, ptxas ...) may map at most this much memory: an
  // `#include "/dev/zero"` or a runaway template must not take the machine's memory.
  uint64_t memory_limit_mb = 16384;
  // CPUs this process may use (0: those its affinity mask allows). nvcc's steps overlap (nvcc_plan.h)
  // only from 4: with fewer the analysis compile already takes the other one, and a third process slows
  // the build down (the CUTLASS GEMM on 2 cores: 57 s in turn, 66 s overlapped).
  unsigned cpus = 0;
  // Where nvcc's steps overlap: start the host compile at the end of cicc's front end (stub_ahead.h), a
  // second cicc front end's CPU for ~2 s of a CUTLASS GEMM's build. Config `compile.stub_ahead`.
  bool stub_ahead = true;
};

// How many CPUs this process may run on (its affinity mask), at least 1.
unsigned available_cpus();

// A macro a build defines on nvcc's command line (-DNAME=VALUE): how `cutegen tune` compiles a variant
// of a kernel's knobs (tune/knobs.h). Part of the command, hence of the compile cache key.
struct Define {
  std::string name;   // a C identifier
  std::string value;  // letters, digits, '_', '.', '+', '-' only: one argument, nothing nvcc could read as a flag
  bool operator==(const Define&) const = default;
};

// "sm_90a" -> "arch=compute_90a,code=sm_90a"; rejects anything that is not sm_<digits>[a|f].
Result<std::string> gencode_for(const std::string& arch);

// Keys of the "compile" object that choose which programs run (nvcc, the host compiler) or what they
// are told (flags can load plugins or write files anywhere), and memory_limit_mb (it loosens nvcc's
// sandbox): honoured only from a config the user named or owns, never from a project's ./cutegen.json
// (see the CLI's config loading).
bool compile_key_needs_trust(const std::string& key);

// Applies the "compile" object of a config file onto `base`. Unknown keys are errors: a typo in a
// flag name must not be silently ignored.
Result<CompileOptions> apply_compile_config(CompileOptions base, const nlohmann::json& compile_section);

// The full nvcc command line for compiling `source_name` (relative to nvcc's working directory).
// Error: a define whose name or value breaks the rules above.
Result<std::vector<std::string>> nvcc_command(const CompileOptions& opts, const std::string& source_name,
                                              const std::string& output_name,
                                              const std::vector<std::filesystem::path>& include_dirs,
                                              const std::vector<Define>& defines = {});

// The second compile the per-kernel CuTe check reads: the same source, target, flags and macros, device
// code only, to PTX without optimisation (cute_usage.h says why).
Result<std::vector<std::string>> cute_analysis_command(const CompileOptions& opts, const std::string& source_name,
                                                       const std::string& ptx_name,
                                                       const std::vector<std::filesystem::path>& include_dirs,
                                                       const std::vector<Define>& defines = {});

}  // namespace cutegen
