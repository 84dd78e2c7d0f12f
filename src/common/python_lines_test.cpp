#include "common/python_lines.h"

#include <gtest/gtest.h>

namespace cutegen {
namespace {

TEST(PythonLines, StatementsStartOutsideStringsBracketsAndContinuations) {
  const std::string_view src =
      "class Model(nn.Module):\n"       // 0: code, indent 0
      "    \"\"\"Doc\n"                 // 1: code (a docstring statement), indent 4
      "    def not_code(): pass\n"      // 2: inside the docstring
      "    \"\"\"\n"                    // 3: still inside it (the closing quotes)
      "    def forward(self, x,\n"      // 4: code
      "                y):  # (\n"      // 5: inside the brackets; the '(' is a comment's
      "\treturn x + \\\n"               // 6: code, a tab is 8 columns
      "  y\n"                           // 7: a continuation
      "    # only a comment\n"          // 8: starts a statement, not code
      "s = 'it''s'\n";                  // 9: code; the one-line strings close on the line
  const auto lines = scan_python_lines(src);
  ASSERT_EQ(lines.size(), 10u);
  const bool code[] = {true, true, false, false, true, false, true, false, false, true};
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i].code, code[i]) << "line " << i << ": " << lines[i].text;
  EXPECT_EQ(lines[1].indent, 4u);
  EXPECT_EQ(lines[6].indent, 8u);
  EXPECT_TRUE(lines[8].starts_statement);
  EXPECT_FALSE(lines[7].starts_statement);
  EXPECT_EQ(lines[4].begin, src.find("    def forward"));
  EXPECT_EQ(lines[4].text, "    def forward(self, x,");
}

TEST(PythonLines, BlankOrComment) {
  EXPECT_TRUE(python_blank_or_comment(""));
  EXPECT_TRUE(python_blank_or_comment(" \t\r"));
  EXPECT_TRUE(python_blank_or_comment("   # x = 1"));
  EXPECT_FALSE(python_blank_or_comment("  x = 1  # one"));
}

}  // namespace
}  // namespace cutegen
