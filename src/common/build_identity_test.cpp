#include "common/build_identity.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/process.h"

namespace cutegen {
namespace {

TEST(BuildIdentity, IsTheLinkersBuildIdOfThisExecutable) {
  const std::string& id = this_build_identity();
  ASSERT_EQ(id.rfind("build-id:", 0), 0u) << id << " (CMake links with --build-id)";
  const std::string hex = id.substr(9);
  EXPECT_EQ(hex.size(), 40u) << id;  // sha1
  EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  EXPECT_EQ(&this_build_identity(), &id) << "computed once";
  // The same bytes another tool reads from the file.
  PosixProcessRunner runner;
  auto readelf = runner.run({.argv = {"readelf", "-n", std::filesystem::read_symlink("/proc/self/exe").string()}});
  if (!readelf.ok()) GTEST_SKIP() << "readelf (binutils) is not installed: " << readelf.error().message;
  EXPECT_NE(readelf->out.find("Build ID: " + hex), std::string::npos) << readelf->out;
}

}  // namespace
}  // namespace cutegen
