#include "compile/device_code_match.h"

#include <gtest/gtest.h>

#include "common/fs.h"

namespace cutegen {
namespace {
namespace fs = std::filesystem;

struct KeepDirs {
  fs::path root, build, analysis;
  KeepDirs() {
    auto d = make_unique_dir(fs::temp_directory_path(), "cutegen-keep-test-");
    EXPECT_TRUE(d.ok());
    root = *d;
    build = root / "kept-build";
    analysis = root / "kept-analysis";
    fs::create_directories(build);
    fs::create_directories(analysis);
  }
  ~KeepDirs() { fs::remove_all(root); }
  void put(const fs::path& dir, const std::string& name, const std::string& text) {
    ASSERT_TRUE(write_file_atomic(dir / name, text).ok());
  }
};

TEST(DeviceCodeMatch, TheSameDeviceUnitPasses) {
  KeepDirs k;
  k.put(k.build, "candidate.cpp1.ii", "__global__ void k() { cute_path(); }\n");
  k.put(k.build, "candidate.cpp4.ii", "host side, not compared");
  k.put(k.analysis, "candidate.cpp1.ii", "__global__ void k() { cute_path(); }\n");
  auto r = compare_device_code(k.build, k.analysis);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->has_value());
}

// What `#ifdef __PIE__` did when only the build had -fPIC: one byte of difference is enough.
TEST(DeviceCodeMatch, ADifferentDeviceUnitIsAViolationNamingTheCause) {
  KeepDirs k;
  k.put(k.build, "candidate.cpp1.ii", "__global__ void k(int* p) { p[0] = 2; }\n");
  k.put(k.analysis, "candidate.cpp1.ii", "__global__ void k(int* p) { cute_path(p); }\n");
  auto r = compare_device_code(k.build, k.analysis);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->code, "analysis-mismatch");
  EXPECT_NE((*r)->message.find("__PIE__"), std::string::npos) << (*r)->message;
}

TEST(DeviceCodeMatch, NothingToCompareIsAnErrorNotAPass) {
  KeepDirs k;
  auto none = compare_device_code(k.build, k.analysis);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("cpp1.ii"), std::string::npos) << none.error().message;

  k.put(k.analysis, "candidate.cpp1.ii", "x");
  auto missing_in_build = compare_device_code(k.build, k.analysis);
  ASSERT_FALSE(missing_in_build.ok());
  EXPECT_NE(missing_in_build.error().message.find("candidate.cpp1.ii"), std::string::npos);
}

}  // namespace
}  // namespace cutegen
