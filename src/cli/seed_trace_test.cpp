// --start's choice of the first kernel, with the real worker tracing on the CPU (no GPU needed).
#include "cli/seed_trace.h"

#include <gtest/gtest.h>

using namespace cutegen::cli;

namespace {
std::string problem(const std::string& name) { return std::string(CUTEGEN_SOURCE_DIR) + "/problems/" + name + ".py"; }
}  // namespace

TEST(SeedForRun, AutoStartsFromTheSeedWhenThereIsOne) {
  auto seed = seed_for_run("auto", problem("relu"), "use --start scratch", cutegen::Precision::strict);
  ASSERT_TRUE(seed.ok()) << seed.error().message;
  EXPECT_EQ(seed->pattern, "relu(x)");
  EXPECT_NE(seed->source.find("extern \"C\" int cutegen_forward"), std::string::npos);
}

TEST(SeedForRun, AutoWithoutASeedLeavesTheFirstKernelToTheLlm) {
  auto seed = seed_for_run("auto", problem("split_halves"), "use --start scratch", cutegen::Precision::strict);
  ASSERT_TRUE(seed.ok()) << seed.error().message;
  EXPECT_TRUE(seed->source.empty());
  EXPECT_EQ(seed->note,
            "no seed for this operator graph: torch.chunk, getitem, add, sub (torch.chunk is not a pointwise op the "
            "seed knows)");
}

TEST(SeedForRun, SeedInsistsOnOne) {
  auto seed = seed_for_run("seed", problem("split_halves"), "use --start scratch", cutegen::Precision::strict);
  ASSERT_FALSE(seed.ok());
  EXPECT_EQ(seed.error().message,
            "no seed for this operator graph: torch.chunk, getitem, add, sub (torch.chunk is not a pointwise op the "
            "seed knows); use --start scratch");
}

TEST(SeedForRun, ScratchDoesNotTrace) {
  // A file that does not exist would fail any trace: scratch never looks.
  auto seed = seed_for_run("scratch", "/nonexistent/problem.py", "", cutegen::Precision::strict);
  ASSERT_TRUE(seed.ok());
  EXPECT_TRUE(seed->source.empty());
}

// A run at a looser precision policy gets the library convolution's TMA path at that policy: one TF32 product
// per term instead of three (the line the library file has, set by the seed and saying why).
TEST(SeedForRun, TheRunsPrecisionPolicyReachesTheLibraryConvolution) {
  auto strict = seed_for_run("auto", problem("conv2d_3x3"), "", cutegen::Precision::strict);
  ASSERT_TRUE(strict.ok()) << strict.error().message;
  EXPECT_NE(strict->source.find("\n#define CIG_PRECISION 0\n"), std::string::npos);
  auto tf32 = seed_for_run("auto", problem("conv2d_3x3"), "", cutegen::Precision::tf32);
  ASSERT_TRUE(tf32.ok()) << tf32.error().message;
  EXPECT_EQ(tf32->source.find("\n#define CIG_PRECISION 0\n"), std::string::npos);
  EXPECT_NE(tf32->source.find("\n#define CIG_PRECISION 1  // set by the seed: the run's --precision tf32"),
            std::string::npos);
  EXPECT_EQ(tf32->pattern, strict->pattern);
}
