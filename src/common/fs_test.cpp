#include "common/fs.h"

#include <gtest/gtest.h>

#include "common/sha256.h"

using namespace cutegen;
namespace fs = std::filesystem;

TEST(Fs, AtomicWriteThenRead) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-fs-test-");
  ASSERT_TRUE(dir.ok());
  auto file = *dir / "sub" / "a.txt";
  ASSERT_TRUE(write_file_atomic(file, "first").ok());
  ASSERT_TRUE(write_file_atomic(file, "second").ok());
  auto text = read_file(file);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "second");
  // No temporary files are left behind.
  int n = 0;
  for (auto& e : fs::directory_iterator(*dir / "sub")) { (void)e; ++n; }
  EXPECT_EQ(n, 1);
  fs::remove_all(*dir);
}

TEST(Fs, ReadingAMissingFileNamesIt) {
  auto text = read_file("/nonexistent/cutegen.txt");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("/nonexistent/cutegen.txt"), std::string::npos);
}

TEST(Sha256, KnownVectorAndPartBoundaries) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_NE(Sha256().add("ab").add("c").hex(), Sha256().add("a").add("bc").hex());
}
