// --start's choice of the first kernel, with the real worker tracing on the CPU (no GPU needed).
#include "cli/seed_trace.h"

#include <gtest/gtest.h>

using namespace cutegen::cli;

namespace {
std::string problem(const std::string& name) { return std::string(CUTEGEN_SOURCE_DIR) + "/problems/" + name + ".py"; }
}  // namespace

TEST(SeedForLlmRun, AutoStartsFromTheSeedWhenThereIsOne) {
  auto seed = seed_for_llm_run("auto", problem("relu"));
  ASSERT_TRUE(seed.ok()) << seed.error().message;
  EXPECT_EQ(seed->pattern, "relu(x)");
  EXPECT_NE(seed->source.find("extern \"C\" int cutegen_forward"), std::string::npos);
}

TEST(SeedForLlmRun, AutoWithoutASeedLeavesTheFirstKernelToTheLlm) {
  auto seed = seed_for_llm_run("auto", problem("softmax_rows"));
  ASSERT_TRUE(seed.ok()) << seed.error().message;
  EXPECT_TRUE(seed->source.empty());
}

TEST(SeedForLlmRun, SeedInsistsOnOne) {
  auto seed = seed_for_llm_run("seed", problem("matmul_square"));
  ASSERT_FALSE(seed.ok());
  EXPECT_EQ(seed.error().message,
            "no seed for this operator graph: torch.matmul (torch.matmul is not a pointwise op the seed knows); use "
            "--start scratch");
}

TEST(SeedForLlmRun, ScratchDoesNotTrace) {
  // A file that does not exist would fail any trace: scratch never looks.
  auto seed = seed_for_llm_run("scratch", "/nonexistent/problem.py");
  ASSERT_TRUE(seed.ok());
  EXPECT_TRUE(seed->source.empty());
}
