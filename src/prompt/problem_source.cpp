#include "prompt/problem_source.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace cutegen {
// Named, not anonymous: the library builds as one unity translation unit.
namespace python_docstrings {

// One physical line, as the statement structure sees it.
struct Line {
  std::string_view text;  // without its '\n'
  size_t begin = 0;       // offset in the source
  bool code = false;      // starts a statement (not inside a string, brackets or a continuation), not blank or a comment
  size_t indent = 0;      // columns, a tab to the next multiple of 8 as Python counts
};

bool blank(std::string_view s) { return s.find_first_not_of(" \t\f\r") == std::string_view::npos; }

bool blank_or_comment(std::string_view s) {
  size_t i = s.find_first_not_of(" \t\f\r");
  return i == std::string_view::npos || s[i] == '#';
}

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

// Strings (single and triple quoted; a backslash keeps the next character from closing one, raw or
// not), brackets, comments and backslash continuations, tracked across lines.
std::vector<Line> scan(std::string_view src) {
  std::vector<Line> lines;
  char quote = 0;  // the open string's quote character; 0 outside strings
  bool triple = false, continued = false;
  int depth = 0;
  for (size_t pos = 0; pos < src.size();) {
    size_t end = src.find('\n', pos);
    if (end == std::string_view::npos) end = src.size();
    Line line{src.substr(pos, end - pos), pos};
    if (quote == 0 && depth == 0 && !continued && !blank_or_comment(line.text)) {
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
    if (quote && !triple) quote = 0;  // an unterminated one-line string ends with its line (Python refuses it)
    lines.push_back(line);
    pos = end + 1;
  }
  return lines;
}

// `class ...`, `def ...` or `async def ...`: a statement whose body may start with a docstring.
bool opens_block(std::string_view text) {
  text.remove_prefix(std::min(text.size(), text.find_first_not_of(" \t\f")));
  if (text.starts_with("async ")) {
    const size_t name = text.find_first_not_of(" \t", 6);
    if (name == std::string_view::npos) return false;
    text.remove_prefix(name);
  }
  for (std::string_view keyword : {"class", "def"})
    if (text.starts_with(keyword) && text.size() > keyword.size() &&
        (text[keyword.size()] == ' ' || text[keyword.size()] == '\t'))
      return true;
  return false;
}

// The text between a docstring's quotes, as offsets in the source.
struct Docstring {
  size_t body_begin = 0, body_end = 0;
  char quote = 0;
};

// The triple-quoted string `line` starts with, when it is the whole statement.
std::optional<Docstring> docstring_at(std::string_view src, const Line& line) {
  size_t i = line.text.find_first_not_of(" \t\f");
  if (line.text.find_first_of("rRuU", i) == i) ++i;  // a raw or unicode prefix; bytes are no docstring
  const std::string_view t = line.text.substr(i);
  if (!t.starts_with("\"\"\"") && !t.starts_with("'''")) return std::nullopt;
  Docstring d{line.begin + i + 3, 0, t[0]};
  const std::string delimiter(3, d.quote);
  size_t j = d.body_begin;
  while (j < src.size() && src.compare(j, 3, delimiter) != 0) j += src[j] == '\\' ? 2 : 1;
  if (j >= src.size()) return std::nullopt;
  d.body_end = j;
  size_t line_end = src.find('\n', j + 3);
  if (!blank_or_comment(src.substr(j + 3, line_end == std::string_view::npos ? line_end : line_end - j - 3)))
    return std::nullopt;  // `"""..."""` followed by more of an expression: not a docstring
  return d;
}

// The docstring's body cut to its first paragraph, or nullopt to keep it: its text is at most
// kMaxDocstringLines lines, or one paragraph.
std::optional<std::string> first_paragraph(std::string_view body, char quote) {
  std::vector<std::string_view> lines;
  for (size_t pos = 0;;) {
    size_t end = body.find('\n', pos);
    lines.push_back(body.substr(pos, end == std::string_view::npos ? end : end - pos));
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  size_t first = 0, last = lines.size();
  while (first < lines.size() && blank(lines[first])) ++first;
  while (last > first && blank(lines[last - 1])) --last;
  if (last - first <= static_cast<size_t>(kMaxDocstringLines)) return std::nullopt;
  size_t end = first + 1;  // the first paragraph is lines [first, end)
  while (end < last && !blank(lines[end])) ++end;
  if (end == last) return std::nullopt;
  std::string cut;
  for (size_t k = 0; k < end; ++k) cut += std::string(lines[k]) + (k + 1 < end ? "\n" : "");
  if (blank(lines.back()) && lines.size() > 1) {
    cut += "\n" + std::string(lines.back());  // the closing quotes had a line of their own, indented so
  } else if (cut.back() == quote || cut.back() == '\\') {
    cut += "\n";  // they would otherwise merge with the text's last quote, or be escaped
  }
  return cut;
}

}  // namespace python_docstrings

std::string problem_source_for_prompt(std::string_view source) {
  using namespace python_docstrings;
  const std::vector<Line> lines = scan(source);
  std::string out;
  size_t copied = 0;  // source[0, copied) is in `out`
  const Line* previous = nullptr;  // the statement before, for whether this one starts a body
  for (const Line& line : lines) {
    if (!line.code) continue;
    const bool starts_body =
        previous == nullptr || (opens_block(previous->text) && line.indent > previous->indent);
    previous = &line;
    if (!starts_body) continue;
    const auto doc = docstring_at(source, line);
    if (!doc) continue;
    const auto cut = first_paragraph(source.substr(doc->body_begin, doc->body_end - doc->body_begin), doc->quote);
    if (!cut) continue;
    out.append(source.substr(copied, doc->body_begin - copied));
    out += *cut;
    copied = doc->body_end;
  }
  out.append(source.substr(copied));
  return out;
}

}  // namespace cutegen
