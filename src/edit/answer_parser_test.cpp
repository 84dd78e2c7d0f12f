#include "edit/answer_parser.h"

#include <gtest/gtest.h>

#include "common/testdata/test_helpers.h"

using namespace cutegen;

namespace {
using cutegen::testing::contains;


const char* kKernel =
    "#include <cutegen/kernel.h>\n"
    "extern \"C\" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out,\n"
    "                               int32_t n_out, cudaStream_t stream) {\n"
    "  return 0;\n"
    "}\n";

}  // namespace

// ---- SEARCH/REPLACE answers -----------------------------------------------------------------------

TEST(AnswerParseEdits, UnfencedSingleBlock) {
  auto r = parse_edit_answer(
      "I will fix the loop bound.\n"
      "<<<<<<< SEARCH\n"
      "  for (int i = 0; i <= n; ++i) {\n"
      "=======\n"
      "  for (int i = 0; i < n; ++i) {\n"
      ">>>>>>> REPLACE\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->blocks.size(), 1u);
  EXPECT_EQ(r->blocks[0].search, "  for (int i = 0; i <= n; ++i) {\n");
  EXPECT_EQ(r->blocks[0].replace, "  for (int i = 0; i < n; ++i) {\n");
  EXPECT_EQ(r->blocks[0].answer_line, 2);
}

TEST(AnswerParseEdits, FencedBlocksAndCrlfAnswer) {
  auto r = parse_edit_answer(
      "```cuda\r\n"
      "<<<<<<< SEARCH\r\n"
      "a\r\n"
      "=======\r\n"
      "b\r\n"
      ">>>>>>> REPLACE\r\n"
      "```\r\n"
      "and\r\n"
      "```\r\n"
      "<<<<<<< SEARCH\r\n"
      "c\r\n"
      "d\r\n"
      "=======\r\n"
      ">>>>>>> REPLACE\r\n"
      "```\r\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->blocks.size(), 2u);
  EXPECT_EQ(r->blocks[0].search, "a\n");
  EXPECT_EQ(r->blocks[0].replace, "b\n");
  EXPECT_EQ(r->blocks[1].search, "c\nd\n");
  EXPECT_EQ(r->blocks[1].replace, "");  // deletion
  EXPECT_EQ(r->blocks[1].answer_line, 10);
}

TEST(AnswerParseEdits, SeveralBlocksInOneFenceKeepBlankLinesInside) {
  auto r = parse_edit_answer(
      "```cpp\n"
      "<<<<<<< SEARCH\n"
      "x\n"
      "\n"
      "y\n"
      "=======\n"
      "x\n"
      "\n"
      "z\n"
      ">>>>>>> REPLACE\n"
      "\n"
      "<<<<<<< SEARCH\n"
      "q\n"
      "=======\n"
      "r\n"
      ">>>>>>> REPLACE\n"
      "```\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->blocks.size(), 2u);
  EXPECT_EQ(r->blocks[0].search, "x\n\ny\n");
  EXPECT_EQ(r->blocks[0].replace, "x\n\nz\n");
}

TEST(AnswerParseEdits, ToleratesMiscountedMarkers) {
  auto r = parse_edit_answer("<<<<< SEARCH\na\n=========\nb\n>>>>>>>> REPLACE\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->blocks[0].search, "a\n");
}

TEST(AnswerParseEdits, UnterminatedBlockIsAnError) {
  auto r = parse_edit_answer("<<<<<<< SEARCH\na\n=======\nb\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "Edit block 1")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "ends before its \">>>>>>> REPLACE\" marker")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "<<<<<<< SEARCH\nexisting lines")) << "format reminder";
}

TEST(AnswerParseEdits, AnswerEndingInsideSearch) {
  auto r = parse_edit_answer("<<<<<<< SEARCH\na\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "ends inside its SEARCH section")) << r.error().message;
}

TEST(AnswerParseEdits, MissingDivider) {
  auto r = parse_edit_answer("ok\n<<<<<<< SEARCH\na\nb\n>>>>>>> REPLACE\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "Edit block 1 (its SEARCH marker is on answer line 2)")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "divider between SEARCH and REPLACE is missing")) << r.error().message;
}

TEST(AnswerParseEdits, EmptySearch) {
  auto r = parse_edit_answer("<<<<<<< SEARCH\n   \n=======\nnew line\n>>>>>>> REPLACE\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "SEARCH section is empty")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "insertion point")) << r.error().message;
}

TEST(AnswerParseEdits, SecondBlockNotClosedBeforeNext) {
  auto r = parse_edit_answer(
      "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n"
      "<<<<<<< SEARCH\nc\n=======\nd\n"
      "<<<<<<< SEARCH\ne\n=======\nf\n>>>>>>> REPLACE\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "Edit block 2")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "not closed")) << r.error().message;
}

TEST(AnswerParseEdits, StrayReplaceMarker) {
  auto r = parse_edit_answer("a\n=======\nb\n>>>>>>> REPLACE\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "no \"<<<<<<< SEARCH\" marker before it")) << r.error().message;
}

TEST(AnswerParseEdits, MisspeltMarker) {
  auto r = parse_edit_answer("<<<<<<< SEARCH:\na\n=======\nb\n>>>>>>> REPLACE\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "looks like an edit marker but is not one")) << r.error().message;
}

TEST(AnswerParseEdits, FenceInsideBlock) {
  auto r = parse_edit_answer("```\n<<<<<<< SEARCH\na\n=======\nb\n```\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "fence on answer line 6")) << r.error().message;
}

TEST(AnswerParseEdits, NoBlocksAtAll) {
  auto r = parse_edit_answer("I think the kernel is fine.\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "no SEARCH/REPLACE edit block")) << r.error().message;
}

TEST(AnswerParseEdits, WholeFileInsteadOfEdits) {
  auto r = parse_edit_answer(std::string("Here is the fixed kernel:\n```cuda\n") + kKernel + "```\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "whole file instead of SEARCH/REPLACE")) << r.error().message;
}

TEST(AnswerParseEdits, TruncatedAnswerIsRejectedEvenWhenComplete) {
  const char* answer = "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n<<<<<<< SEARCH\nc\n";
  auto r = parse_edit_answer(answer, AnswerEnd::truncated);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "cut off at the output-token limit after 1 complete edit block and part "
                                          "of another"))
      << r.error().message;
  auto whole = parse_edit_answer("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", AnswerEnd::truncated);
  ASSERT_FALSE(whole.ok());
  EXPECT_TRUE(contains(whole.error().message, "after 1 complete edit block,")) << whole.error().message;
}

TEST(AnswerParseEdits, NotesAroundBlocks) {
  auto r = parse_edit_answer(
      "OPTIMIZATION: 4 - vectorize the epilogue store\n"
      "**EXPECTED:** about 5% less time in the epilogue\n"
      "because stores become 16-byte.\n"
      "\n"
      "Here are the edits.\n"
      "<<<<<<< SEARCH\n"
      "FIX: not a note, inside a block\n"
      "=======\n"
      "b\n"
      ">>>>>>> REPLACE\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->notes.at("OPTIMIZATION"), "4 - vectorize the epilogue store");
  EXPECT_EQ(r->notes.at("EXPECTED"), "about 5% less time in the epilogue\nbecause stores become 16-byte.");
  EXPECT_EQ(r->notes.count("FIX"), 0u);
}

// ---- whole-file answers ---------------------------------------------------------------------------

TEST(AnswerParseWholeFile, PicksTheBlockDefiningTheEntryPoint) {
  std::string answer = std::string(
                           "PLAN: one CTA per row.\n\n"
                           "The contract declares:\n"
                           "```c\n"
                           "int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs,\n"
                           "                    const cutegen_tensor* outputs, int32_t num_outputs, cudaStream_t s);\n"
                           "```\n"
                           "A quick check in Python:\n"
                           "```python\n"
                           "print(1)\n"
                           "```\n"
                           "The kernel:\n"
                           "```cuda\n") +
                       kKernel + "```\nDone.\n";
  auto r = parse_whole_file_answer(answer);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source, kKernel);
  EXPECT_EQ(r->fence_language, "cuda");
  EXPECT_EQ(r->answer_line, 13);
  EXPECT_EQ(r->notes.at("PLAN"), "one CTA per row.");
}

TEST(AnswerParseWholeFile, AcceptsCppAndBareFences) {
  for (const char* fence : {"```cpp", "```c++", "```", "~~~cuda", "````cu"}) {
    std::string close = fence[0] == '~' ? "~~~" : (std::string(fence).rfind("````", 0) == 0 ? "````" : "```");
    auto r = parse_whole_file_answer(std::string(fence) + "\n" + kKernel + close + "\n");
    ASSERT_TRUE(r.ok()) << fence << ": " << r.error().message;
    EXPECT_EQ(r->source, kKernel);
  }
}

TEST(AnswerParseWholeFile, SeveralCandidatesIsAnError) {
  std::string answer = std::string("```cuda\n") + kKernel + "```\nOr alternatively:\n```cuda\n" + kKernel + "```\n";
  auto r = parse_whole_file_answer(answer);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "2 code blocks that each define cutegen_forward (opening on answer lines 1, 9)"))
      << r.error().message;
}

TEST(AnswerParseWholeFile, NoCodeBlock) {
  auto r = parse_whole_file_answer(std::string("Sure, here it is: ") + kKernel);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "no fenced code block")) << r.error().message;
}

TEST(AnswerParseWholeFile, NoBlockDefinesTheEntryPoint) {
  auto r = parse_whole_file_answer("```cuda\n__global__ void k() {}\n```\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "None of the answer's 1 code block defines cutegen_forward"))
      << r.error().message;
}

TEST(AnswerParseWholeFile, WrongLanguageTag) {
  auto r = parse_whole_file_answer(std::string("```diff\n") + kKernel + "```\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "marked as `diff`")) << r.error().message;
}

TEST(AnswerParseWholeFile, EditBlocksInsteadOfFile) {
  auto r = parse_whole_file_answer("```\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "needs the whole kernel file")) << r.error().message;
}

TEST(AnswerParseWholeFile, UnclosedFence) {
  auto r = parse_whole_file_answer(std::string("Kernel:\n```cuda\n") + kKernel);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "opened on answer line 2 is never closed")) << r.error().message;
}

TEST(AnswerParseWholeFile, TruncatedAnswer) {
  auto r = parse_whole_file_answer(std::string("```cuda\n") + kKernel + "```\n", AnswerEnd::truncated);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "cut off at the output-token limit, before the file was complete"))
      << r.error().message;
}

// ---- helpers --------------------------------------------------------------------------------------

TEST(AnswerEntryPoint, DefinitionNotDeclarationOrCall) {
  EXPECT_TRUE(defines_entry_point(kKernel));
  EXPECT_TRUE(defines_entry_point("int cutegen_forward(a, b)\n{\n}"));
  EXPECT_FALSE(defines_entry_point("int cutegen_forward(const cutegen_tensor*, int32_t);"));
  EXPECT_FALSE(defines_entry_point("int my_cutegen_forward(int x) { return x; }"));
  EXPECT_FALSE(defines_entry_point("return cutegen_forward(in, 1, out, 1, s);"));
}

TEST(AnswerEntryPoint, TheWorkspaceFormCountsAsAnEntryPoint) {
  EXPECT_TRUE(defines_entry_point("extern \"C\" int cutegen_forward_ws(const cutegen_tensor* in, int32_t n,\n"
                                  "    const cutegen_tensor* out, int32_t m, void* ws, size_t bytes, cudaStream_t s) {\n}"));
  EXPECT_FALSE(defines_entry_point("size_t cutegen_workspace_bytes(const cutegen_tensor*, int32_t, const cutegen_tensor*, "
                                   "int32_t) { return 4; }"));  // the size alone is not a kernel
  EXPECT_FALSE(defines_entry_point("int cutegen_forward_ws(const cutegen_tensor*, int32_t);"));
}

TEST(AnswerNotes, LabelsDecorationsAndContinuations) {
  auto notes = parse_answer_notes(
      "Let me look at the evidence first.\n"
      "## DIAGNOSIS: the k-loop reads sA before\n"
      "cp_async_wait, so half the tile is stale.\n"
      "- **LOCATION**: lines 40-52, gemm_kernel\n"
      "__FIX__: add cp_async_wait<0>() and __syncthreads()\n"
      "Not part of it? Yes it is, until a blank line.\n"
      "\n"
      "Closing words.\n"
      "```cuda\n"
      "CHANGES: inside a fence, ignored\n"
      "```\n"
      "FIX: second opinion\n"
      "Id: too short to be a label? No: lower case, ignored\n");
  EXPECT_EQ(notes.at("DIAGNOSIS"), "the k-loop reads sA before\ncp_async_wait, so half the tile is stale.");
  EXPECT_EQ(notes.at("LOCATION"), "lines 40-52, gemm_kernel");
  EXPECT_EQ(notes.at("FIX"),
            "add cp_async_wait<0>() and __syncthreads()\nNot part of it? Yes it is, until a blank line.\n\nsecond "
            "opinion\nId: too short to be a label? No: lower case, ignored");
  EXPECT_EQ(notes.count("CHANGES"), 0u);
}

TEST(AnswerNotes, RequireNamesEveryMissingLabel) {
  AnswerNotes notes{{"DIAGNOSIS", "x"}, {"FIX", "  "}};
  EXPECT_TRUE(require_notes(notes, {note_label::kDiagnosis}).ok());
  auto s = require_notes(notes, {note_label::kDiagnosis, note_label::kFix, note_label::kLocation});
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.error().message, "required lines `FIX:`, `LOCATION:`")) << s.error().message;
}

// ---- either form (the loop refuses the wrong one) ---------------------------------------------------

// ---- optimisation answers: edits, or a reasoned decline ----------------------------------------------

TEST(AnswerParseOptimize, EditsAreReadAsEdits) {
  auto r = parse_optimize_answer(
      "OPTIMIZATION: 2. vectorise\nEXPECTED: fewer transactions\n\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->declined());
  ASSERT_TRUE(r->edits.has_value());
  EXPECT_EQ(r->edits->blocks.size(), 1u);
  EXPECT_EQ(r->edits->notes.at("OPTIMIZATION"), "2. vectorise");
}

TEST(AnswerParseOptimize, NoFurtherChangeWithAReasonDeclines) {
  auto r = parse_optimize_answer(
      "The kernel is at 96% of the floor.\n\n**NO_FURTHER_CHANGE:** every byte moves once at 96% of the\n"
      "floor; the rest is launch latency\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->declined());
  EXPECT_FALSE(r->edits.has_value());
  EXPECT_EQ(r->decline_reason, "every byte moves once at 96% of the\nfloor; the rest is launch latency");
}

TEST(AnswerParseOptimize, ADeclineNeedsAReasonAndNoEdits) {
  auto bare = parse_optimize_answer("NO_FURTHER_CHANGE:\n");
  ASSERT_FALSE(bare.ok());
  EXPECT_TRUE(contains(bare.error().message, "needs its reason")) << bare.error().message;
  auto both = parse_optimize_answer("NO_FURTHER_CHANGE: done\n\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n");
  ASSERT_FALSE(both.ok());
  EXPECT_TRUE(contains(both.error().message, "Send one of the two")) << both.error().message;
  auto cut = parse_optimize_answer("NO_FURTHER_CHANGE: the kernel is at the fl", AnswerEnd::truncated);
  ASSERT_FALSE(cut.ok());
  EXPECT_TRUE(contains(cut.error().message, "cut off")) << cut.error().message;
}

TEST(AnswerParseOptimize, NeitherEditsNorADeclineKeepsTheEditMessage) {
  auto r = parse_optimize_answer(std::string("PLAN: rewrite\n```cuda\n") + kKernel + "```\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "whole file instead of SEARCH/REPLACE")) << r.error().message;
  // The word alone in prose is no decline: only the label starting a line is.
  auto prose = parse_optimize_answer("I would not answer NO_FURTHER_CHANGE yet.\n");
  ASSERT_FALSE(prose.ok());
  EXPECT_TRUE(contains(prose.error().message, "no SEARCH/REPLACE edit block")) << prose.error().message;
}

// ---- fences with language tags, indentation, Unicode ---------------------------------------------

TEST(AnswerParseEdits, BlocksInsideDiffFenceBesideAnExplanatorySnippet) {
  auto r = parse_edit_answer(
      "The bug is the bound; compare:\n"
      "```cuda\n"
      "for (int i = 0; i <= n; ++i)   // wrong\n"
      "```\n"
      "```diff\n"
      "<<<<<<< SEARCH\n"
      "for (int i = 0; i <= n; ++i)\n"
      "=======\n"
      "for (int i = 0; i < n; ++i)\n"
      ">>>>>>> REPLACE\n"
      "```\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->blocks.size(), 1u) << "the explanatory snippet is not an edit";
  EXPECT_EQ(r->blocks[0].search, "for (int i = 0; i <= n; ++i)\n");
}

TEST(AnswerParseWholeFile, FenceIndentedInAListItemIsDeindented) {
  auto r = parse_whole_file_answer(
      "1. The kernel:\n"
      "   ```cuda\n"
      "   #include <cutegen/kernel.h>\n"
      "   extern \"C\" int cutegen_forward(const cutegen_tensor* i, int32_t a, const cutegen_tensor* o,\n"
      "                                  int32_t b, cudaStream_t s) {\n"
      "     return 0;\n"
      "   }\n"
      "   ```\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source.substr(0, 29), "#include <cutegen/kernel.h>\ne");
  EXPECT_TRUE(contains(r->source, "\n  return 0;\n}\n")) << r->source;
}

TEST(AnswerParseEdits, UnicodeIsKeptByteForByte) {
  auto r = parse_edit_answer(
      "NOTE: π-scaled — see “docs”\n"
      "<<<<<<< SEARCH\n"
      "  // scale by π (≈3.14159) — τ/2\n"
      "=======\n"
      "  // scale by π/2 — précision fp32\n"
      ">>>>>>> REPLACE\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->blocks[0].search, "  // scale by π (≈3.14159) — τ/2\n");
  EXPECT_EQ(r->blocks[0].replace, "  // scale by π/2 — précision fp32\n");
  EXPECT_EQ(r->notes.at("NOTE"), "π-scaled — see “docs”");
}

// ---- the diagnose step's answer -------------------------------------------------------------------

TEST(AnswerParseDiagnosis, RequiresDiagnosisAndFix) {
  auto r = parse_diagnosis_answer(
      "Looking at the evidence.\n"
      "DIAGNOSIS: the epilogue writes only the first 64 columns of each 128-wide tile.\n"
      "LOCATION: lines 88-93, the copy(tCrC, tCgC) loop\n"
      "FIX: partition C with the full TiledMMA instead of the half-width one.\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->location, "lines 88-93, the copy(tCrC, tCgC) loop");
  EXPECT_FALSE(r->contained_code);
  EXPECT_EQ(r->summary(),
            "DIAGNOSIS: the epilogue writes only the first 64 columns of each 128-wide tile.\n"
            "LOCATION: lines 88-93, the copy(tCrC, tCgC) loop\n"
            "FIX: partition C with the full TiledMMA instead of the half-width one.\n");

  auto missing = parse_diagnosis_answer("DIAGNOSIS: races on sA\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(contains(missing.error().message, "`FIX:`")) << missing.error().message;

  auto with_code = parse_diagnosis_answer("DIAGNOSIS: x\nFIX: y\n```cuda\nint a;\n```\n");
  ASSERT_TRUE(with_code.ok());
  EXPECT_TRUE(with_code->contained_code);
  EXPECT_EQ(with_code->location, "");

  auto cut = parse_diagnosis_answer("DIAGNOSIS: x\nFIX: y\n", AnswerEnd::truncated);
  ASSERT_FALSE(cut.ok());
  EXPECT_TRUE(contains(cut.error().message, "cut off")) << cut.error().message;
}

TEST(AnswerParseEdits, ListingNumbersCopiedIntoSearchAreRemoved) {
  auto r = parse_edit_answer(
      "<<<<<<< SEARCH\n"
      "     41 |   for (int k = 0; k <= k_tiles; ++k) {\n"
      "     42 |\n"
      "     43 |     copy(tArA, tAsA);\n"
      "=======\n"
      "     41 |   for (int k = 0; k < k_tiles; ++k) {\n"
      "\n"
      "    copy(tArA, tAsA);\n"
      ">>>>>>> REPLACE\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->blocks[0].search, "  for (int k = 0; k <= k_tiles; ++k) {\n\n    copy(tArA, tAsA);\n");
  EXPECT_EQ(r->blocks[0].replace, "  for (int k = 0; k < k_tiles; ++k) {\n\n    copy(tArA, tAsA);\n");
}

// The listings number lines only as wide as the last number (number_lines): " 9 | ", "10 | ".
TEST(AnswerParseEdits, NarrowListingNumbersCopiedIntoSearchAreRemoved) {
  auto r = parse_edit_answer("<<<<<<< SEARCH\n 9 |   int a = 0;\n10 |   int b = a;\n=======\n 9 |   int a = 1;\n"
                             "10 |   int b = a;\n>>>>>>> REPLACE\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->blocks[0].search, "  int a = 0;\n  int b = a;\n");
  EXPECT_EQ(r->blocks[0].replace, "  int a = 1;\n  int b = a;\n");
}

TEST(AnswerParseEdits, CodeThatMerelyLooksNumberedIsKept) {
  // Not consecutive, and a real expression: left alone.
  auto r = parse_edit_answer("<<<<<<< SEARCH\n  1 | 2;\n  5 | 6;\n=======\n  1 | 4;\n>>>>>>> REPLACE\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->blocks[0].search, "  1 | 2;\n  5 | 6;\n");
  auto flags = parse_edit_answer("<<<<<<< SEARCH\nint f = A |\n        1 | 2;\n=======\nint f = A | 4;\n>>>>>>> REPLACE\n");
  ASSERT_TRUE(flags.ok()) << flags.error().message;
  EXPECT_EQ(flags->blocks[0].search, "int f = A |\n        1 | 2;\n");
}

TEST(AnswerNotes, LabelsInBackticksAsThePromptsPrintThem) {
  auto notes = parse_answer_notes("`DIAGNOSIS:` the bound is off by one\n- `FIX`: use < instead of <=\n");
  EXPECT_EQ(notes.at("DIAGNOSIS"), "the bound is off by one");
  EXPECT_EQ(notes.at("FIX"), "use < instead of <=");
}
