// A problem's file name is the one text from outside that every seed writes into its comments: a newline in
// it must not end the comment and make the rest of the name code (issue 32).
#include "seed/comment_text.h"

#include <string>

#include <gtest/gtest.h>

#include "seed/testdata/graph_builders.h"

using namespace cutegen::seed;
using namespace cutegen::seed::testing;

namespace {

TEST(CommentText, EscapesControlCharactersBackslashesAndTheEndOfABlockComment) {
  EXPECT_EQ(CommentText("relu.py").str(), "relu.py");
  EXPECT_EQ(CommentText("ümlaut 1.py").str(), "ümlaut 1.py");
  EXPECT_EQ(CommentText("a\nb.py").str(), "a\\x0ab.py");
  EXPECT_EQ(CommentText("a\r\tb\x1b\x7f.py").str(), "a\\x0d\\x09b\\x1b\\x7f.py");
  EXPECT_EQ(CommentText("a*/b.py").str(), "a*\\/b.py");
  EXPECT_EQ(CommentText("a\\").str(), "a\\\\");
  EXPECT_EQ(CommentText(std::string("a\0b", 3)).str(), "a\\x00b");
}

// Every kind of header the routes write -- a template's {{PROBLEM}} and a library kernel's own header -- gets
// the name escaped: its first line stays one comment line and nothing of the name reaches the code.
TEST(CommentText, ASeedsHeaderKeepsAHostileNameInsideItsComment) {
  const std::string name = "evil\n#include </etc/passwd> */ int x = 1;\n.py";
  const std::vector<json> graphs = {
      graph({input(0, "x", {4, 8}), node(1, "relu", {ref(0)}, json::object(), {4, 8})}, 1, 1),  // pointwise template
      product(64, 64, 64),                                                                        // tiled GEMM template
      product(4096, 4096, 4096),                                                                  // library GEMM header
  };
  for (const json& j : graphs) {
    auto g = OpGraph::from_json(j);
    ASSERT_TRUE(g.ok());
    auto seed = seed_from_graph(*g, name);
    ASSERT_TRUE(seed.ok()) << seed.error().message;
    ASSERT_TRUE(seed->found()) << seed->match.reason;
    SCOPED_TRACE(seed->match.description());
    const std::string first_line = seed->source.substr(0, seed->source.find('\n'));
    EXPECT_EQ(first_line.rfind("// Seed kernel for evil\\x0a#include </etc/passwd> *\\/ int x = 1;\\x0a.py, ", 0), 0u)
        << first_line;
    EXPECT_FALSE(contains(seed->source, "\n#include </etc/passwd>"));
    EXPECT_FALSE(contains(seed->source, "int x = 1;\n"));
  }
}

}  // namespace
