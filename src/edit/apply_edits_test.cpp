#include "edit/apply_edits.h"

#include <gtest/gtest.h>

using namespace cutegen;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

EditBlock block(std::string search, std::string replace) { return EditBlock{std::move(search), std::move(replace), 1}; }

const std::string kSource =
    "__global__ void k(float* y, const float* x, int n) {\n"  // 1
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"      // 2
    "  if (i < n) {\n"                                         // 3
    "    float v = x[i];\n"                                    // 4
    "    y[i] = v > 0.f ? v : 0.f;\n"                          // 5
    "  }\n"                                                    // 6
    "}\n";                                                     // 7

}  // namespace

TEST(EditApply, ExactMatch) {
  auto r = apply_edits(kSource, {block("    float v = x[i];\n", "    float v = __ldg(x + i);\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(contains(r->source, "    float v = __ldg(x + i);\n    y[i]"));
  ASSERT_EQ(r->applied.size(), 1u);
  EXPECT_EQ(r->applied[0].match, MatchKind::exact);
  EXPECT_EQ(r->applied[0].first_line, 4);
  EXPECT_EQ(r->applied[0].last_line, 4);
}

TEST(EditApply, IndentationIgnoredAndReplacementReindented) {
  // The LLM dropped the indentation of both sections; the replacement lands at the file's depth,
  // keeping its own relative nesting.
  auto r = apply_edits(kSource, {block("float v = x[i];\ny[i] = v > 0.f ? v : 0.f;\n",
                                       "float v = x[i];\nif (v < 0.f)\n  v = 0.f;\ny[i] = v;\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->applied[0].match, MatchKind::whitespace_tolerant);
  EXPECT_TRUE(contains(r->source, "    float v = x[i];\n    if (v < 0.f)\n      v = 0.f;\n    y[i] = v;\n  }\n"))
      << r->source;
}

TEST(EditApply, ReindentShiftsLinesLessIndentedThanTheAnchor) {
  // SEARCH at depth 2 where the file has depth 4: the closing brace one level up stays one level up.
  auto r = apply_edits(kSource, {block("  y[i] = v > 0.f ? v : 0.f;\n}\n", "  y[i] = fmaxf(v, 0.f);\n}\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(contains(r->source, "    y[i] = fmaxf(v, 0.f);\n  }\n}\n")) << r->source;
}

TEST(EditApply, TabsInSearchSpacesInFile) {
  auto r = apply_edits(kSource, {block("\t\tfloat v = x[i];\n", "\t\tfloat v = x[i] * 2.f;\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  // Two tabs are 8 columns, the file has 4: the replacement moves to 4 columns, in spaces like the file.
  EXPECT_TRUE(contains(r->source, "\n    float v = x[i] * 2.f;\n")) << r->source;
}

TEST(EditApply, SpacesInSearchTabsInFile) {
  const std::string tabbed = "void f() {\n\tint a = 1;\n\tint b = 2;\n}\n";
  auto r = apply_edits(tabbed, {block("    int a = 1;\n", "    int a = 3;\n    int c = 4;\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source, "void f() {\n\tint a = 3;\n\tint c = 4;\n\tint b = 2;\n}\n");
}

TEST(EditApply, TrailingWhitespaceIgnored) {
  const std::string src = "int a = 1;   \nint b = 2;\t\n";
  auto r = apply_edits(src, {block("int a = 1;\nint b = 2;\n", "int a = 1;\nint b = 5;\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->applied[0].match, MatchKind::whitespace_tolerant);
  EXPECT_EQ(r->source, "int a = 1;\nint b = 5;\n");
}

TEST(EditApply, CrlfFileKeepsItsLineEndings) {
  const std::string src = "int a = 1;\r\nint b = 2;\r\nint c = 3;\r\n";
  auto r = apply_edits(src, {block("int b = 2;\n", "int b = 20;\nint d = 4;\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->applied[0].match, MatchKind::exact);  // line endings are not content
  EXPECT_EQ(r->source, "int a = 1;\r\nint b = 20;\r\nint d = 4;\r\nint c = 3;\r\n");
}

TEST(EditApply, CrlfSearchOnLfFile) {
  auto r = apply_edits(kSource, {block("  if (i < n) {\r\n", "  if (i < n && n > 0) {\r\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(contains(r->source, "  if (i < n && n > 0) {\n    float"));
}

TEST(EditApply, KeepsMissingFinalNewline) {
  auto r = apply_edits("a\nb", {block("a\n", "c\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source, "c\nb");
}

TEST(EditApply, MultipleBlocksInOrder) {
  auto r = apply_edits(kSource, {block("  int i = blockIdx.x * blockDim.x + threadIdx.x;\n",
                                       "  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;\n"),
                                 block("__global__ void k(float* y, const float* x, int n) {\n",
                                       "__global__ void k(float* y, const float* x, int64_t n) {\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->applied.size(), 2u);
  EXPECT_EQ(r->applied[1].block, 2);
  EXPECT_EQ(r->applied[1].first_line, 1);
  EXPECT_TRUE(contains(r->source, "int64_t n) {\n  int64_t i ="));
}

TEST(EditApply, LaterBlockAnchorsOnEarlierReplacement) {
  auto r = apply_edits(kSource, {block("    float v = x[i];\n", "    float v = x[i];\n    float w = v * v;\n"),
                                 block("    float w = v * v;\n", "    float w = v * v * v;\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(contains(r->source, "    float w = v * v * v;\n"));
  EXPECT_EQ(r->applied[1].first_line, 5);
}

TEST(EditApply, DeletionWithEmptyReplace) {
  auto r = apply_edits(kSource, {block("    float v = x[i];\n    y[i] = v > 0.f ? v : 0.f;\n", "")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source,
            "__global__ void k(float* y, const float* x, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i < n) {\n"
            "  }\n"
            "}\n");
  EXPECT_EQ(r->applied[0].lines_added, 0);
  EXPECT_EQ(r->applied[0].lines_removed, 2);
}

TEST(EditApply, MissingAnchorQuotesNearestRegions) {
  auto r = apply_edits(kSource, {block("    float v = x[j];\n    y[j] = v > 0.f ? v : 0.f;\n", "    y[j] = 0.f;\n")});
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_TRUE(contains(m, "The edit block: its SEARCH text (2 lines, starting \"float v = x[j];\") does not match"))
      << m;
  EXPECT_TRUE(contains(m, "lines 4-5 (")) << m;
  EXPECT_TRUE(contains(m, "first difference: SEARCH line 1 is \"float v = x[j];\" but line 4 is \"float v = x[i];\""))
      << m;
  EXPECT_TRUE(contains(m, "      4 |     float v = x[i];\n      5 |     y[i] = v > 0.f ? v : 0.f;")) << m;
}

TEST(EditApply, MissingAnchorOffersAtMostThreeNonOverlappingRegions) {
  std::string src;
  for (int i = 0; i < 10; ++i) src += "copy(tA" + std::to_string(i) + ", sA" + std::to_string(i) + ");\n";
  auto r = apply_edits(src, {block("copy(tAX, sAX);\n", "copy(tAY, sAY);\n")});
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_TRUE(contains(m, "most similar regions")) << m;
  int regions = 0;
  for (std::size_t at = m.find("% similar"); at != std::string::npos; at = m.find("% similar", at + 1)) ++regions;
  EXPECT_EQ(regions, 3) << m;
}

TEST(EditApply, AnchorChangedByEarlierBlockIsExplained) {
  auto r = apply_edits(kSource, {block("    float v = x[i];\n", "    float value = x[i];\n"),
                                 block("    float v = x[i];\n    y[i] = v > 0.f ? v : 0.f;\n", "    y[i] = 1.f;\n")});
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_TRUE(contains(m, "Edit block 2 of 2")) << m;
  EXPECT_TRUE(contains(m, "an earlier block of this answer changed it")) << m;
}

TEST(EditApply, AmbiguousAnchorListsWhere) {
  const std::string src = "a();\nb();\na();\nc();\n";
  auto r = apply_edits(src, {block("a();\n", "d();\n")});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "matches 2 places in the current kernel (line 1, line 3)"))
      << r.error().message;
  auto tolerant = apply_edits("  a();\nb();\n    a();\n", {block("a();\n", "d();\n")});
  ASSERT_FALSE(tolerant.ok());
  EXPECT_TRUE(contains(tolerant.error().message, "2 places in the current kernel when indentation is ignored"))
      << tolerant.error().message;
}

TEST(EditApply, ExactMatchWinsOverTolerantOnes) {
  // Only one place matches exactly; the tolerant look-alike must not make it ambiguous.
  auto r = apply_edits("  a();\na();\n", {block("a();\n", "d();\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source, "  a();\nd();\n");
}

TEST(EditApply, NoOpEditFails) {
  auto r = apply_edits(kSource, {block("  if (i < n) {\n", "  if (i < n) {\n")});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "changes nothing")) << r.error().message;
  auto ws = apply_edits(kSource, {block("if (i < n) {\n", "if (i < n) {   \n")});
  ASSERT_FALSE(ws.ok());
  EXPECT_TRUE(contains(ws.error().message, "changes nothing")) << ws.error().message;
}

TEST(EditApply, BlocksThatCancelOutFail) {
  auto r = apply_edits(kSource, {block("  if (i < n) {\n", "  if (n > i) {\n"), block("  if (n > i) {\n", "  if (i < n) {\n")});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "together change nothing")) << r.error().message;
}

TEST(EditApply, AllOrNothingNamesTheFailingBlock) {
  const std::string before = kSource;
  auto r = apply_edits(kSource, {block("  if (i < n) {\n", "  if (i < n && i >= 0) {\n"),
                                 block("this line does not exist\n", "x\n"),
                                 block("}\n", "} // end\n")});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "Edit block 2 of 3")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "No block was applied; block after it was not checked")) << r.error().message;
  EXPECT_EQ(kSource, before);
}

TEST(EditApply, EmptyInputs) {
  EXPECT_FALSE(apply_edits(kSource, {}).ok());
  auto r = apply_edits("", {block("a\n", "b\n")});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "The current kernel is empty")) << r.error().message;
}

TEST(EditApply, ParsedAnswerEndToEnd) {
  auto answer = parse_edit_answer(
      "CHANGES: bound check uses int64\n"
      "```cuda\n"
      "<<<<<<< SEARCH\n"
      "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "=======\n"
      "int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;\n"
      ">>>>>>> REPLACE\n"
      "```\n");
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  auto r = apply_edits(kSource, answer->blocks);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(contains(r->source, "\n  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;\n"));
}
