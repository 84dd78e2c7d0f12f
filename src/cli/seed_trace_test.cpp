// --start's choice of the first kernel, with the real worker tracing on the CPU (no GPU needed).
#include "cli/seed_trace.h"

#include <gtest/gtest.h>

using namespace cutegen::cli;

namespace {
std::string problem(const std::string& name) { return std::string(CUTEGEN_SOURCE_DIR) + "/problems/" + name + ".py"; }
}  // namespace

TEST(SeedForRun, AutoStartsFromTheSeedWhenThereIsOne) {
  auto seed = seed_for_run("auto", problem("relu"), "use --start scratch");
  ASSERT_TRUE(seed.ok()) << seed.error().message;
  EXPECT_EQ(seed->pattern, "relu(x)");
  EXPECT_NE(seed->source.find("extern \"C\" int cutegen_forward"), std::string::npos);
}

TEST(SeedForRun, AutoWithoutASeedLeavesTheFirstKernelToTheLlm) {
  auto seed = seed_for_run("auto", problem("split_halves"), "use --start scratch");
  ASSERT_TRUE(seed.ok()) << seed.error().message;
  EXPECT_TRUE(seed->source.empty());
  EXPECT_EQ(seed->note,
            "no seed for this operator graph: torch.chunk, getitem, add, sub (torch.chunk is not a pointwise op the "
            "seed knows)");
}

TEST(SeedForRun, SeedInsistsOnOne) {
  auto seed = seed_for_run("seed", problem("split_halves"), "use --start scratch");
  ASSERT_FALSE(seed.ok());
  EXPECT_EQ(seed.error().message,
            "no seed for this operator graph: torch.chunk, getitem, add, sub (torch.chunk is not a pointwise op the "
            "seed knows); use --start scratch");
}

TEST(SeedForRun, ScratchDoesNotTrace) {
  // A file that does not exist would fail any trace: scratch never looks.
  auto seed = seed_for_run("scratch", "/nonexistent/problem.py", "");
  ASSERT_TRUE(seed.ok());
  EXPECT_TRUE(seed->source.empty());
}
