// make_entries_static: a part's contract entry points become its own static functions, and so do its calls of
// them -- in a chained file the contract's names are the chain's.

#include <gtest/gtest.h>

#include "seed/routes/then/then_chain.h"

using namespace cutegen::seed;

TEST(StaticEntries, APartsCallsOfItsOwnEntryPointsStayItsOwn) {
  std::string text =
      "extern \"C\" size_t cutegen_workspace_bytes(const cutegen_tensor*, int32_t, const cutegen_tensor*, int32_t) {\n"
      "  return 64;\n}\n"
      "extern \"C\" int cutegen_forward_ws(const cutegen_tensor* in, int32_t n, const cutegen_tensor* out, int32_t m,\n"
      "                                  void* ws, size_t bytes, cudaStream_t s) {\n"
      "  if (bytes < cutegen_workspace_bytes(in, n, out, m)) return CUTEGEN_ERROR_BAD_ARGUMENTS;\n"
      "  return 0;\n}\n";
  const StaticEntries e = make_entries_static(text, "fold_");
  EXPECT_TRUE(e.workspace_bytes);
  EXPECT_TRUE(e.forward_ws);
  EXPECT_FALSE(e.forward);
  EXPECT_EQ(text.find("cutegen_workspace_bytes("), std::string::npos) << text;
  EXPECT_NE(text.find("static size_t fold_workspace_bytes("), std::string::npos) << text;
  EXPECT_NE(text.find("if (bytes < fold_workspace_bytes(in, n, out, m))"), std::string::npos) << text;
  EXPECT_NE(text.find("static int fold_forward_ws("), std::string::npos) << text;
}

TEST(StaticEntries, APartWithoutAnEntryPointKeepsTheNamesItOnlyMentions) {
  // A part that defines no workspace query leaves a call of the contract's as it is (it is then the chain's, which
  // the part means: nothing renames what the part does not define).
  std::string text = "extern \"C\" int cutegen_forward(const cutegen_tensor*, int32_t, const cutegen_tensor*, int32_t,\n"
                     "                               cudaStream_t) { return 0; }\n// see cutegen_workspace_bytes(\n";
  const StaticEntries e = make_entries_static(text, "second_");
  EXPECT_TRUE(e.forward);
  EXPECT_FALSE(e.workspace_bytes);
  EXPECT_NE(text.find("// see cutegen_workspace_bytes("), std::string::npos);
  EXPECT_NE(text.find("static int second_forward("), std::string::npos);
}
