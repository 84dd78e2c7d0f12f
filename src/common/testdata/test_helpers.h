#pragma once
// Small helpers the stages' tests share (tests only). One definition each: the build compiles test files
// in unity batches (docs/testing.md), where two files' private helpers of one name would collide.
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include <gtest/gtest.h>

#include "common/fs.h"

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

}  // namespace cutegen::testing
