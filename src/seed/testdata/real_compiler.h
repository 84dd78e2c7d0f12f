#pragma once
// The compile stage as the judge runs it (source rules, nvcc, library checks, the CuTe check per kernel),
// for the seed tests that build generated kernels: its own fresh cache directory, removed afterwards.
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "common/process.h"
#include "common/testdata/test_helpers.h"
#include "compile/nvcc_compiler.h"
#include "seed/testdata/host_library.h"

namespace cutegen::seed::testing {

class RealCompiler {
 public:
  RealCompiler() : dir_("cutegen-seed-test-") {
    if (dir_.path.empty()) return;
    auto toolchain = probe_toolchain(runner_, options_);
    EXPECT_TRUE(toolchain.ok()) << toolchain.error().message;
    if (toolchain.ok()) compiler_.emplace(runner_, options_, *toolchain, CompileCache(dir_.path), CUTEGEN_SANDBOX_BIN);
  }
  RealCompiler(const RealCompiler&) = delete;
  RealCompiler& operator=(const RealCompiler&) = delete;

  bool ready() const { return compiler_.has_value(); }
  Result<CompileOutcome> compile(const std::string& source, const std::string& name) {
    return compiler_->compile({source, name});
  }
  // The source through the compile stage, which must build it and pass every check: its outcome, or nullopt
  // after the failure is recorded (ASSERT_TRUE(out) then stops the test).
  std::optional<CompileOutcome> build_ok(const std::string& source, const std::string& name) {
    if (!ready()) {
      ADD_FAILURE() << "no compiler: the toolchain probe failed";
      return std::nullopt;
    }
    auto out = compile(source, name);
    if (!out.ok()) {
      ADD_FAILURE() << out.error().message;
      return std::nullopt;
    }
    if (out->verdict != CompileVerdict::ok) {
      ADD_FAILURE() << out->feedback() << "\n" << out->log;
      return std::nullopt;
    }
    // A seed that builds with serialised wgmmas (an assert left in a mainloop) is correct and slow: a defect.
    for (const auto& w : out->performance_warnings()) ADD_FAILURE() << name << ": ptxas: " << w;
    return std::move(*out);
  }

 private:
  ::cutegen::testing::TempDir dir_;  // its own fresh cache, removed afterwards
  PosixProcessRunner runner_;
  CompileOptions options_;
  std::optional<NvccCompiler> compiler_;
};

// A seed built through the real compile stage (every check passed) and, where CMake found the CUDA toolkit's
// libraries, its host code loaded on this CPU: the slow-tier seed tests' common start. Without those libraries
// `workspace_bytes` stays nullptr and the test ends after the build (its host half sits in #ifdef
// CUTEGEN_CUDA_LIB_DIR).
struct BuiltSeed {
#ifdef CUTEGEN_CUDA_LIB_DIR
  std::optional<HostOnlyLibrary> lib;
  HostOnlyLibrary::WorkspaceBytes workspace_bytes = nullptr;
#endif
};

inline ::testing::AssertionResult build_and_load(const std::string& source, const std::string& name, BuiltSeed& seed) {
  RealCompiler compiler;
  auto out = compiler.build_ok(source, name);  // records the compile stage's diagnostics on failure
  if (!out) return ::testing::AssertionFailure() << name << " did not build (the failure above says why)";
#ifdef CUTEGEN_CUDA_LIB_DIR
  // Loaded while the compiler's cache, which holds the library file, still exists.
  seed.lib.emplace(out->library);
  if (!seed.lib->error.empty()) return ::testing::AssertionFailure() << seed.lib->error;
  seed.workspace_bytes = seed.lib->workspace_bytes();
  if (!seed.workspace_bytes) return ::testing::AssertionFailure() << name << " has no cutegen_workspace_bytes";
#else
  (void)seed;
#endif
  return ::testing::AssertionSuccess();
}

}  // namespace cutegen::seed::testing
