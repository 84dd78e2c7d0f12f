#pragma once
// Just enough of Python's lexical structure to find statements in a problem file's text: which physical
// lines start a statement (not inside a string, brackets or a backslash continuation) and how far they
// are indented. The exports (report/python_source) find a method's lines with it, the prompts
// (prompt/problem_source) a docstring's; both edit the text the user wrote, comments and all, and
// neither has a Python worker at hand.
#include <cstddef>
#include <string_view>
#include <vector>

namespace cutegen {

// One physical line, as the statement structure sees it.
struct PythonLine {
  std::string_view text;          // without its '\n'
  size_t begin = 0;               // offset of its first character in the source
  bool starts_statement = false;  // not inside a string, brackets or a backslash continuation
  bool code = false;              // starts a statement and is neither blank nor only a comment
  size_t indent = 0;              // columns, set where `code` (a tab advances to the next multiple of 8, as in Python)
};

// Every line of `src`. Strings are single or triple quoted; a backslash always keeps the next character
// from closing one (raw or not); an unterminated one-line string ends with its line (Python refuses it).
std::vector<PythonLine> scan_python_lines(std::string_view src);

// Whitespace only, or a comment after it.
bool python_blank_or_comment(std::string_view line);

}  // namespace cutegen
