#include "prompt/problem_source.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/fs.h"

using namespace cutegen;

TEST(ProblemSource, ALongModuleDocstringKeepsItsFirstParagraph) {
  const std::string source =
      "\"\"\"Softmax over the last dimension of a 4096 x 393216 fp32 tensor.\n"
      "\n"
      "Here to measure what the judge's checks cost (issue 10); the input alone is 6 GiB.\n"
      "\n"
      "CUTEGEN_PROBLEM_SCALE=k divides both dimensions by k.\n"
      "\"\"\"\n"
      "import torch\n";
  EXPECT_EQ(problem_source_for_prompt(source),
            "\"\"\"Softmax over the last dimension of a 4096 x 393216 fp32 tensor.\n"
            "\"\"\"\n"
            "import torch\n");
}

TEST(ProblemSource, ShortDocstringsAndOneParagraphStayWhole) {
  const std::string short_doc =
      "\"\"\"y = relu(x).\n\nCUTEGEN_PROBLEM_SCALE=k divides both dimensions by k.\n\"\"\"\nimport torch\n";
  EXPECT_EQ(problem_source_for_prompt(short_doc), short_doc);
  const std::string one_paragraph =
      "\"\"\"A Linear of few rows and a large weight, then Swish and a scale:\n"
      "    h = x @ W.T + b;  y = h * sigmoid(h) * 2.0\n"
      "M, K, N = 128, 8192, 16384: 128 rows of x against a 16384 x 8192 weight,\n"
      "so the weight is streamed once.\"\"\"\n";
  EXPECT_EQ(problem_source_for_prompt(one_paragraph), one_paragraph);
}

TEST(ProblemSource, ClassAndFunctionDocstringsAsKernelBenchWritesThem) {
  const std::string source =
      "class Model(nn.Module):\n"
      "    \"\"\"\n"
      "    Simple model that performs a Softmax activation.\n"
      "    \"\"\"\n"
      "    def __init__(self):\n"
      "        super(Model, self).__init__()\n"
      "\n"
      "    def forward(self, x: torch.Tensor,\n"
      "                dim: int = -1) -> torch.Tensor:\n"
      "        \"\"\"\n"
      "        Applies Softmax activation to the input tensor.\n"
      "\n"
      "        Args:\n"
      "            x (torch.Tensor): Input tensor of shape (batch_size, num_features).\n"
      "\n"
      "        Returns:\n"
      "            torch.Tensor: Output tensor with Softmax applied, same shape as input.\n"
      "        \"\"\"\n"
      "        return torch.softmax(x, dim=dim)\n";
  EXPECT_EQ(problem_source_for_prompt(source),
            "class Model(nn.Module):\n"
            "    \"\"\"\n"
            "    Simple model that performs a Softmax activation.\n"
            "    \"\"\"\n"
            "    def __init__(self):\n"
            "        super(Model, self).__init__()\n"
            "\n"
            "    def forward(self, x: torch.Tensor,\n"
            "                dim: int = -1) -> torch.Tensor:\n"
            "        \"\"\"\n"
            "        Applies Softmax activation to the input tensor.\n"
            "        \"\"\"\n"
            "        return torch.softmax(x, dim=dim)\n");
}

TEST(ProblemSource, OnlyDocstringsAreCut) {
  // Strings that are values, not the first statement of a body, stay as they are, as do comments.
  const std::string source =
      "import torch\n"
      "NOTE = '''one\n\ntwo\nthree\nfour\n'''\n"
      "# a comment\n"
      "# of many lines\n"
      "def f():\n"
      "    x = 1\n"
      "    \"\"\"not a docstring:\n\nthe second statement\nof the body\nof f\n\"\"\"\n"
      "    return x\n"
      "def g():\n"
      "    return \"\"\"a value\n\nnot a docstring\nthree\nfour\n\"\"\"\n";
  EXPECT_EQ(problem_source_for_prompt(source), source);
  // A string followed by more of an expression is no docstring either.
  const std::string expression = "\"\"\"a\n\nb\nc\nd\n\"\"\" + x\n";
  EXPECT_EQ(problem_source_for_prompt(expression), expression);
}

TEST(ProblemSource, ClosingQuotesAfterTheTextStayAfterTheFirstParagraph) {
  EXPECT_EQ(problem_source_for_prompt("r'''First, \"quoted\".\n\nSecond\nthird\nfourth.'''\nx = 1\n"),
            "r'''First, \"quoted\".'''\nx = 1\n");
  // A first paragraph ending with the quote character gets the quotes on a line of their own.
  EXPECT_EQ(problem_source_for_prompt("\"\"\"First \"x\"\n\nSecond\nthird\nfourth.\"\"\"\n"),
            "\"\"\"First \"x\"\n\"\"\"\n");
}

TEST(ProblemSource, EveryProblemFileStillParsesTheSameWayAroundItsDocstring) {
  // Each problem's code after its module docstring is unchanged, and no shown docstring is longer
  // than its first paragraph or kMaxDocstringLines lines.
  namespace fs = std::filesystem;
  int shortened = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(CUTEGEN_SOURCE_ROOT) / "problems")) {
    if (entry.path().extension() != ".py") continue;
    const std::string source = *read_file(entry.path());
    const std::string shown = problem_source_for_prompt(source);
    EXPECT_LE(shown.size(), source.size()) << entry.path();
    const auto code = [](const std::string& s) {
      if (!s.starts_with("\"\"\"")) return s;
      return s.substr(s.find("\"\"\"", 3));
    };
    EXPECT_EQ(code(shown), code(source)) << entry.path() << ": only the docstring may change";
    shortened += shown != source;
  }
  EXPECT_GT(shortened, 0);
}
