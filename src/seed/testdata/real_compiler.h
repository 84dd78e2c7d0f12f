#pragma once
// The compile stage as the judge runs it (source rules, nvcc, library checks, the CuTe check per kernel),
// for the seed tests that build generated kernels: its own fresh cache directory, removed afterwards.
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/process.h"
#include "compile/nvcc_compiler.h"

namespace cutegen::seed::testing {

class RealCompiler {
 public:
  RealCompiler() {
    auto dir = make_unique_dir(std::filesystem::temp_directory_path(), "cutegen-seed-test-");
    EXPECT_TRUE(dir.ok()) << dir.error().message;
    if (!dir.ok()) return;
    dir_ = *dir;
    auto toolchain = probe_toolchain(runner_, options_);
    EXPECT_TRUE(toolchain.ok()) << toolchain.error().message;
    if (toolchain.ok()) compiler_.emplace(runner_, options_, *toolchain, CompileCache(dir_), CUTEGEN_SANDBOX_BIN);
  }
  ~RealCompiler() {
    std::error_code ignored;  // a leftover temporary directory must not fail the test that passed
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  RealCompiler(const RealCompiler&) = delete;
  RealCompiler& operator=(const RealCompiler&) = delete;

  bool ready() const { return compiler_.has_value(); }
  Result<CompileOutcome> compile(const std::string& source, const std::string& name) {
    return compiler_->compile({source, name});
  }

 private:
  std::filesystem::path dir_;
  PosixProcessRunner runner_;
  CompileOptions options_;
  std::optional<NvccCompiler> compiler_;
};

}  // namespace cutegen::seed::testing
