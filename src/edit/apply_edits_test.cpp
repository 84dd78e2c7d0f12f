#include "edit/apply_edits.h"
#include "common/testdata/test_helpers.h"
#include "edit/text_lines.h"

#include <gtest/gtest.h>

#include <chrono>

using namespace cutegen;

namespace {
using cutegen::testing::contains;


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
  EXPECT_TRUE(contains(tolerant.error().message, "2 places in the current kernel when indentation and spacing are ignored"))
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

// ---- tolerance tiers -------------------------------------------------------------------------------

TEST(EditApply, InnerSpacingDifferencesAreTolerated) {
  auto r = apply_edits(kSource, {block("    y[i] = v>0.f ?  v : 0.f;\n", "    y[i] = fmaxf(v, 0.f);\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->applied[0].match, MatchKind::whitespace_tolerant);
  EXPECT_TRUE(contains(r->source, "    y[i] = fmaxf(v, 0.f);\n")) << r->source;
}

TEST(EditApply, BlankLinesDroppedFromSearch) {
  const std::string src = "void f() {\n  int a = 1;\n\n  int b = 2;\n\n\n  int c = 3;\n}\n";
  auto r = apply_edits(src, {block("  int a = 1;\n  int b = 2;\n  int c = 3;\n", "  int a = 1;\n  int c = 4;\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->applied[0].match, MatchKind::blank_lines_ignored);
  EXPECT_EQ(r->applied[0].first_line, 2);
  EXPECT_EQ(r->applied[0].last_line, 7);
  EXPECT_EQ(r->applied[0].lines_removed, 6);
  EXPECT_EQ(r->source, "void f() {\n  int a = 1;\n  int c = 4;\n}\n");
}

TEST(EditApply, BlankLinesAddedToSearchAndIndentationShifted) {
  const std::string src = "void f() {\n    int a = 1;\n    int b = 2;\n}\n";
  auto r = apply_edits(src, {block("\nint a = 1;\n\nint b = 2;\n\n", "int a = 1;\nint b = 3;\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->applied[0].match, MatchKind::blank_lines_ignored);
  EXPECT_EQ(r->source, "void f() {\n    int a = 1;\n    int b = 3;\n}\n");
}

TEST(EditApply, StricterTierWinsOverLooserOne) {
  // Exact for the second place only, tolerant for both: the exact match is taken, not "ambiguous".
  const std::string src = "x = a+b;\nx = a + b;\n";
  auto r = apply_edits(src, {block("x = a + b;\n", "x = a - b;\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source, "x = a+b;\nx = a - b;\n");
}

// ---- Unicode ---------------------------------------------------------------------------------------

TEST(EditApply, UnicodeCommentsMatchExactly) {
  const std::string src = "// tile: 128×128 — see notes\nint tile = 128;\n";
  auto r = apply_edits(src, {block("// tile: 128×128 — see notes\nint tile = 128;\n",
                                   "// tile: 64×64 — see notes\nint tile = 64;\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->applied[0].match, MatchKind::exact);
  EXPECT_EQ(r->source, "// tile: 64×64 — see notes\nint tile = 64;\n");
}

TEST(EditApply, NoBreakSpacesAndByteOrderMarkAreWhitespace) {
  const std::string src = "\xEF\xBB\xBF#include <cute/tensor.hpp>\nint a = 1;\n";
  // A chat front end turned the indentation and one inner space into U+00A0.
  auto r = apply_edits(src, {block("#include <cute/tensor.hpp>\n\xC2\xA0\xC2\xA0int\xC2\xA0" "a = 1;\n",
                                   "#include <cute/tensor.hpp>\nint a = 2;\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->applied[0].match, MatchKind::whitespace_tolerant);
  EXPECT_TRUE(contains(r->source, "int a = 2;\n")) << r->source;
}

TEST(EditApply, NotFoundQuotesUnicodeLinesWithNumbers) {
  const std::string src = "int a;\n// größe = N × K\nint b;\n";
  auto r = apply_edits(src, {block("// grösse = N x K\n", "// size\n")});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "      2 | // größe = N × K")) << r.error().message;
}

// ---- ordering, overlap, ambiguity ------------------------------------------------------------------

TEST(EditApply, OverlappingBlocksWhereTheFirstKeptTheSharedLine) {
  // Both blocks quote line 4; block 1 keeps it unchanged, so block 2 still finds it.
  auto r = apply_edits(kSource, {block("  if (i < n) {\n    float v = x[i];\n", "  if (i < n) {\n    float v = x[i];\n    v *= 2.f;\n"),
                                 block("    float v = x[i];\n    v *= 2.f;\n    y[i] = v > 0.f ? v : 0.f;\n",
                                       "    float v = x[i];\n    v *= 2.f;\n    y[i] = fmaxf(v, 0.f);\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(contains(r->source, "    float v = x[i];\n    v *= 2.f;\n    y[i] = fmaxf(v, 0.f);\n  }\n")) << r->source;
}

TEST(EditApply, OverlappingBlocksWhereTheFirstChangedTheSharedLine) {
  auto r = apply_edits(kSource, {block("  if (i < n) {\n    float v = x[i];\n", "  if (i < n) {\n    float v = 2.f * x[i];\n"),
                                 block("    float v = x[i];\n    y[i] = v > 0.f ? v : 0.f;\n", "    y[i] = 0.f;\n")});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "Edit block 2 of 2")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "an earlier block of this answer changed it")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "    float v = 2.f * x[i];")) << "nearest region shows the new text";
}

TEST(EditApply, SameBlockTwiceFailsOnTheSecond) {
  auto b = block("    float v = x[i];\n", "    float v = __ldg(x + i);\n");
  auto r = apply_edits(kSource, {b, b});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "Edit block 2 of 2")) << r.error().message;
}

TEST(EditApply, AmbiguousAnchorQuotesEveryPlaceWithContext) {
  const std::string src = "void a() {\n  sync();\n}\nvoid b() {\n  sync();\n}\n";
  auto r = apply_edits(src, {block("  sync();\n", "  __syncthreads();\n")});
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_TRUE(contains(m, "matches 2 places in the current kernel (line 2, line 5)")) << m;
  EXPECT_TRUE(contains(m, "match 1 (line 2):\n      1 | void a() {\n      2 |   sync();\n      3 | }\n")) << m;
  EXPECT_TRUE(contains(m, "match 2 (line 5):\n      4 | void b() {\n      5 |   sync();\n      6 | }")) << m;
  // With the distinguishing line added it applies.
  auto fixed = apply_edits(src, {block("void b() {\n  sync();\n", "void b() {\n  __syncthreads();\n")});
  ASSERT_TRUE(fixed.ok()) << fixed.error().message;
  EXPECT_EQ(fixed->source, "void a() {\n  sync();\n}\nvoid b() {\n  __syncthreads();\n}\n");
}

TEST(EditApply, EmptySearchIsRejectedByApplyToo) {
  auto r = apply_edits(kSource, {block("\n  \n", "int x;\n")});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "SEARCH section is empty")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "insertion point")) << r.error().message;
}

TEST(EditApply, BlankLineOnlyChangeIsNoChange) {
  auto r = apply_edits(kSource, {block("  if (i < n) {\n", "\n  if (i < n) {\n\n")});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "changes nothing")) << r.error().message;
}

TEST(EditApply, CrlfAnswerOnCrlfKernelEndToEnd) {
  const std::string src = "int a = 1;\r\n\tint b = 2;\r\nint c = 3;\r\n";
  auto answer = parse_edit_answer("```cuda\r\n<<<<<<< SEARCH\r\n    int b = 2;   \r\n=======\r\n    int b = 5;\r\n>>>>>>> REPLACE\r\n```\r\n");
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  auto r = apply_edits(src, answer->blocks);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source, "int a = 1;\r\n\tint b = 5;\r\nint c = 3;\r\n");
}

TEST(EditApply, EditAtEndOfFileWithoutFinalNewline) {
  auto r = apply_edits("a\nb\nc", {block("b\nc\n", "b\nd\n")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source, "a\nb\nd");
}

TEST(EditApply, NearestRegionSearchStaysFastOnLargeKernels) {
  std::string src;
  for (int i = 0; i < 1500; ++i)
    src += "    Tensor tCrC_" + std::to_string(i) + " = thr_mma.partition_fragment_C(gC(_, _, " + std::to_string(i) + "));\n";
  std::string search;
  for (int i = 0; i < 25; ++i) search += "    Tensor tXrX_" + std::to_string(i) + " = thr.partition_fragment_C(gX);\n";
  auto t0 = std::chrono::steady_clock::now();
  auto r = apply_edits(src, {block(search, "x\n")});
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r.ok());
  EXPECT_LT(seconds, 5.0) << "a failed anchor on a large file must not stall the loop";
}

TEST(EditText, NormalizeForMatch) {
  EXPECT_EQ(normalize_for_match("  \tint   a = b+c ;  "), "int a=b+c;");
  EXPECT_EQ(normalize_for_match("unsigned  long x"), "unsigned long x");
  EXPECT_EQ(normalize_for_match("f( a ,b )"), "f(a,b)");
  EXPECT_EQ(normalize_for_match("\xEF\xBB\xBF#include <x>"), "#include<x>");
  EXPECT_EQ(normalize_for_match("int\xC2\xA0y"), "int y");
  EXPECT_EQ(normalize_for_match("   "), "");
}
