#include "common/python_lines.h"

#include <string>

namespace cutegen {
namespace {

size_t indent_of(std::string_view line) {
  size_t col = 0;
  for (char c : line) {
    if (c == ' ') ++col;
    else if (c == '\t') col = (col / 8 + 1) * 8;
    else if (c == '\f') col = 0;
    else break;
  }
  return col;
}

}  // namespace

bool python_blank_or_comment(std::string_view line) {
  const size_t i = line.find_first_not_of(" \t\f\r");
  return i == std::string_view::npos || line[i] == '#';
}

std::vector<PythonLine> scan_python_lines(std::string_view src) {
  std::vector<PythonLine> lines;
  char quote = 0;  // the open string's quote character, 0 outside strings
  bool triple = false, continued = false;
  int depth = 0;
  for (size_t pos = 0; pos < src.size();) {
    size_t end = src.find('\n', pos);
    if (end == std::string_view::npos) end = src.size();
    PythonLine line{.text = src.substr(pos, end - pos), .begin = pos,
                    .starts_statement = quote == 0 && depth == 0 && !continued};
    if (line.starts_statement && !python_blank_or_comment(line.text)) {
      line.code = true;
      line.indent = indent_of(line.text);
    }
    continued = false;
    const std::string_view t = line.text;
    for (size_t i = 0; i < t.size(); ++i) {
      const char c = t[i];
      if (quote) {
        if (c == '\\') ++i;
        else if (c == quote && (!triple || t.substr(i, 3) == std::string(3, quote))) quote = 0, i += triple ? 2 : 0;
        continue;
      }
      if (c == '#') break;
      if (c == '\'' || c == '"') {
        quote = c;
        triple = t.substr(i, 3) == std::string(3, c);
        if (triple) i += 2;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
        --depth;
      } else if (c == '\\' && i + 1 == t.size()) {
        continued = true;
      }
    }
    if (quote && !triple) quote = 0;
    lines.push_back(line);
    pos = end + 1;
  }
  return lines;
}

}  // namespace cutegen
