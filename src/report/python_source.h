#pragma once
// Just enough of Python's lexical structure to edit a problem file's text for an export: where a
// method of a top-level class starts and ends (strings, brackets, comments and continuation lines
// understood, so a docstring or a wrapped call never ends a block early), and how to carry any text
// inside a Python file as a string literal that means exactly that text.
//
// Why text and not Python's own `ast`: best/ is written from the C++ loop, which has no worker at
// hand, and the exports keep the problem's code as the user wrote it (comments and all), removing only
// the one method they replace.
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace cutegen {

// Lines [first, last] (0-based, inclusive) of a method, its decorators included, and the indentation
// of its `def` line (the class body's).
struct MethodLines {
  int first = 0;
  int last = 0;
  std::string indent;
};

// `def method` directly in the body of `class class_name` at the top level of `source`; nullopt when
// the class or the method is not there (a Model built by assignment, a forward() inherited).
std::optional<MethodLines> find_method_lines(std::string_view source, std::string_view class_name,
                                             std::string_view method);

// `source` with lines [lines.first, lines.last] replaced by `replacement` (whole lines, each ending
// with '\n').
std::string replace_lines(std::string_view source, const MethodLines& lines, std::string_view replacement);

// A raw triple-quoted Python literal whose value is `text` (a '\n' is appended when it does not end
// with one, so no backslash can escape the closing quotes). Error: the text holds both ''' and """.
Result<std::string> python_raw_string(std::string text);

}  // namespace cutegen
