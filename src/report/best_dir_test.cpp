#include "report/best_dir.h"

#include <gtest/gtest.h>

#include "common/fs.h"

namespace cutegen {
namespace {
namespace fs = std::filesystem;

TEST(BestDir, AMissingLibraryWritesNothingSoBestNeverMixesTwoKernels) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-best-");
  ASSERT_TRUE(dir.ok());
  RunFiles files(*dir);
  ASSERT_TRUE(files.write("best/kernel.cu", "// the previous best").ok());
  BestKernel best{"// a newer best", nlohmann::json::object(), *dir / "gone/kernel.so", nlohmann::json::object(),
                  *dir / "problem.py"};
  auto r = write_best(files, best);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("gone/kernel.so is missing"), std::string::npos) << r.error().message;
  EXPECT_EQ(*read_file(*dir / "best/kernel.cu"), "// the previous best");
  EXPECT_FALSE(fs::exists(*dir / "best/eval.json"));
  fs::remove_all(*dir);
}

}  // namespace
}  // namespace cutegen
