#pragma once
// The problem's Python file as the prompts show it. The code is shown whole; a long docstring is cut
// to its first paragraph. Problem files' docstrings are written for the people who keep them: what
// the problem is there to measure, which library kernel or seed route it exercises, how to scale it
// for tests. The model needs the code, a line on what it computes, and the shapes, dtypes and costs
// the prompt states beside it; the rest is paid for in every call of a run.
#include <string>
#include <string_view>

namespace cutegen {

// Docstrings of at most this many lines of text (blank lines at either end not counted) are kept whole.
inline constexpr int kMaxDocstringLines = 3;

// `source` with every docstring -- the module's, a class's or a function's: a triple-quoted string
// literal alone as the first statement of its body -- whose text runs over kMaxDocstringLines lines
// cut to its first paragraph (up to its first blank line), its quotes and indentation kept. Everything
// else, comments included, is unchanged; a file that does not scan as Python comes back as it was.
std::string problem_source_for_prompt(std::string_view source);

}  // namespace cutegen
