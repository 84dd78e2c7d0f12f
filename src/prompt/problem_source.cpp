#include "prompt/problem_source.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "common/python_lines.h"

namespace cutegen {
// Named, not anonymous: the library builds as one unity translation unit.
namespace python_docstrings {

bool blank(std::string_view s) { return s.find_first_not_of(" \t\f\r") == std::string_view::npos; }

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
std::optional<Docstring> docstring_at(std::string_view src, const PythonLine& line) {
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
  if (!python_blank_or_comment(src.substr(j + 3, line_end == std::string_view::npos ? line_end : line_end - j - 3)))
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
  const std::vector<PythonLine> lines = scan_python_lines(source);
  std::string out;
  size_t copied = 0;  // source[0, copied) is in `out`
  const PythonLine* previous = nullptr;  // the statement before, for whether this one starts a body
  for (const PythonLine& line : lines) {
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
