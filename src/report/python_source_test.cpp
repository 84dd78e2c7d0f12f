#include "report/python_source.h"

#include <gtest/gtest.h>

namespace cutegen {
namespace {

constexpr const char* kProblem = R"(import torch
import torch.nn as nn


class Model(nn.Module):
    """A docstring.
def forward(self): this line is inside a string
"""

    def __init__(self, dim: int):
        super(Model, self).__init__()
        self.dim = dim

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
Returns:
    the sum
        """
        y = torch.sum(x,
dim=self.dim)  # a call wrapped onto a line with no indentation
        return y \
+ 0

    def helper(self):
        return 1


def get_inputs():
    return [torch.rand(4, 8)]
)";

TEST(PythonSource, FindsAMethodWithItsDecoratorsAcrossStringsAndBrackets) {
  auto lines = find_method_lines(kProblem, "Model", "forward");
  ASSERT_TRUE(lines.has_value());
  EXPECT_EQ(lines->first, 13);  // @torch.no_grad()
  EXPECT_EQ(lines->last, 22);   // + 0 (the continuation line), not the blank line after it
  EXPECT_EQ(lines->indent, "    ");
  std::string edited = replace_lines(kProblem, *lines, "    def forward(self):\n        return None\n");
  EXPECT_EQ(edited.find("torch.sum"), std::string::npos);
  EXPECT_EQ(edited.find("no_grad"), std::string::npos);
  EXPECT_NE(edited.find("    def forward(self):\n        return None\n\n    def helper(self):"), std::string::npos)
      << edited;
  EXPECT_NE(edited.find("def forward(self): this line is inside a string"), std::string::npos);  // the docstring stays
}

TEST(PythonSource, AOneLineMethodIsOneLine) {
  auto lines = find_method_lines("class Model:\n    def forward(self, x): return x\n    y = 1\n", "Model", "forward");
  ASSERT_TRUE(lines.has_value());
  EXPECT_EQ(lines->first, 1);
  EXPECT_EQ(lines->last, 1);
}

TEST(PythonSource, OnlyTheTopLevelClassOfThatNameAndADirectMethod) {
  EXPECT_FALSE(find_method_lines("class ModelNew:\n    def forward(self): ...\n", "Model", "forward"));
  EXPECT_FALSE(find_method_lines("def f():\n    class Model:\n        def forward(self): ...\n", "Model", "forward"));
  EXPECT_FALSE(find_method_lines("class Model(Base):\n    def forward_all(self): ...\n", "Model", "forward"));
  EXPECT_FALSE(find_method_lines("Model = Other\n", "Model", "forward"));
  // A nested function named forward is not the method.
  EXPECT_FALSE(find_method_lines("class Model:\n    def run(self):\n        def forward(): ...\n", "Model", "forward"));
  // The method of the class, not a function of the same name after it.
  auto lines = find_method_lines("class Model:\n    x = 1\ndef forward(self): ...\n", "Model", "forward");
  EXPECT_FALSE(lines.has_value());
}

TEST(PythonSource, RawStringsCarryTextUnchanged) {
  auto plain = python_raw_string("a\\nb '' \"x\"\n#define Q \\\n  1");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, "r'''a\\nb '' \"x\"\n#define Q \\\n  1\n'''");
  auto with_single = python_raw_string("x = '''");
  ASSERT_TRUE(with_single.ok());
  EXPECT_EQ(*with_single, "r\"\"\"x = '''\n\"\"\"");
  auto both = python_raw_string("''' \"\"\"");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("both"), std::string::npos);
}

}  // namespace
}  // namespace cutegen
