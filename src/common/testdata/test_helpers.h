#pragma once
// Small helpers the stages' tests share (tests only). One definition each: the build compiles test files
// in unity batches (docs/testing.md), where two files' private helpers of one name would collide.
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/process.h"

namespace cutegen::testing {

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// How many times `part` occurs in `text`, overlapping occurrences included.
inline int count(std::string_view text, std::string_view part) {
  int n = 0;
  for (auto pos = text.find(part); pos != std::string_view::npos; pos = text.find(part, pos + 1)) ++n;
  return n;
}

// A fresh directory under the system's temporary directory, removed with everything in it at the end.
struct TempDir {
  explicit TempDir(const std::string& prefix = "cutegen-test-") {
    auto made = make_unique_dir(std::filesystem::temp_directory_path(), prefix);
    EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error().message);
    if (made.ok()) path = std::filesystem::canonical(*made);
  }
  ~TempDir() {
    std::error_code ignored;  // a leftover directory must not fail the test that passed
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::filesystem::path path;
};

// The shared object g++ (nvcc's default host compiler, found on PATH as nvcc finds it) builds from C++ `source`
// into `lib` with `optimisation` (-fPIC -shared, as nvcc's host compile links a kernel.so), or false with a test
// failure saying why. Seconds, no nvcc: for the ELF checks on host code.
inline bool build_shared_object(const std::filesystem::path& lib, const std::string& source,
                                const std::string& optimisation = "-O3") {
  std::filesystem::path src = lib;
  src.replace_extension(".cpp");
  if (!write_file_atomic(src, source).ok()) {
    ADD_FAILURE() << "cannot write " << src;
    return false;
  }
  PosixProcessRunner runner;
  auto cc = runner.run({.argv = {"g++", optimisation, "-fPIC", "-shared", src.string(), "-o", lib.string()},
                        .timeout = std::chrono::seconds(120)});
  if (!cc.ok() || !cc->succeeded()) {
    ADD_FAILURE() << "g++ failed on\n" << source << "\n" << (cc.ok() ? cc->err : cc.error().message);
    return false;
  }
  return true;
}

}  // namespace cutegen::testing
