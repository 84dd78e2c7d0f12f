#pragma once
// The compile stage's boundary: source in, a checked shared library (or the reason there is none) out.
// The agent loop talks to this interface; tests use a fake.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "compile/diagnostics.h"
#include "compile/check_violation.h"
#include "compile/compile_options.h"

namespace cutegen {

struct CompileRequest {
  std::string source;
  std::string display_name = "kernel.cu";  // how diagnostics name the file
  std::vector<Define> defines;             // -DNAME=VALUE for both compiles: a variant of the kernel's knobs
};

enum class CompileVerdict {
  ok,             // built and passed every static check
  compile_error,  // nvcc failed; see diagnostic
  timeout,        // nvcc ran past the configured limit
  rejected,       // built (or not even compiled) but broke the contract; see violations
};
std::string to_string(CompileVerdict v);

struct CompileOutcome {
  CompileVerdict verdict = CompileVerdict::compile_error;
  std::string key;                          // content hash of source, flags and toolchain
  bool cache_hit = false;
  std::filesystem::path library;            // the checked .so when verdict == ok
  std::string log;                          // nvcc's complete output
  CondensedDiagnostic diagnostic;           // for compile_error
  std::vector<CheckViolation> violations;   // for rejected
  std::vector<std::string> command;         // the nvcc command line that ran (or would run)
  double nvcc_seconds = 0;                  // of the original compile, also on a cache hit
  std::string nvcc_steps;                   // "overlapped" or "in turn: <why>" (nvcc_plan.h)
  // The overlapped build's host compile (host_pch.h): "used" (through the precompiled prefix), "precompiling
  // for the next build", "none: <why>" or "not used: <why>"; "" when the build was not overlapped.
  std::string host_pch;
  // Where the CuTe rule's evidence came from (cute_usage.h): "build" (the build's own PTX proved it, and the
  // unoptimised analysis compile was stopped), "analysis" (that compile's), "" (no CuTe check ran).
  std::string cute_evidence;
  double check_seconds = 0;
  double total_seconds = 0;                 // this call, lookup included

  bool ok() const { return verdict == CompileVerdict::ok; }
  // What the LLM (and a person) needs to fix the candidate: the condensed diagnostic or the violations.
  std::string feedback() const;
  // ptxas's performance-loss notes on a build that succeeded (serialised wgmma above all): from the log.
  std::vector<std::string> performance_warnings() const;
  nlohmann::json to_json() const;
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  // An Error means the tool could not do its job (nvcc missing, cache unwritable); a bad candidate is an
  // outcome with a verdict, not an Error.
  virtual Result<CompileOutcome> compile(const CompileRequest& request) = 0;
};

}  // namespace cutegen
