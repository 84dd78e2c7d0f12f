#include "report/python_source.h"

#include <vector>

namespace cutegen {
namespace {

// One physical line, as the block structure sees it.
struct PyLine {
  std::string_view text;
  bool starts_statement = false;  // not inside a string, brackets or a backslash continuation
  bool code = false;              // starts a statement and is not blank or only a comment
  size_t indent = 0;              // columns (a tab advances to the next multiple of 8, as Python does)
};

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

bool blank_or_comment(std::string_view line) {
  for (char c : line) {
    if (c == '#' || c == '\r') return true;
    if (c != ' ' && c != '\t' && c != '\f') return false;
  }
  return true;
}

// Tracks strings (single and triple quoted; a backslash always protects the next character from
// closing one, raw or not), brackets and comments across lines.
std::vector<PyLine> scan_lines(std::string_view src) {
  std::vector<PyLine> lines;
  char quote = 0;       // the open string's quote character, 0 outside strings
  bool triple = false;
  int depth = 0;
  bool continued = false;
  size_t pos = 0;
  while (pos < src.size()) {
    size_t end = src.find('\n', pos);
    if (end == std::string_view::npos) end = src.size();
    std::string_view text = src.substr(pos, end - pos);
    PyLine line{text, quote == 0 && depth == 0 && !continued};
    if (line.starts_statement && !blank_or_comment(text)) {
      line.code = true;
      line.indent = indent_of(text);
    }
    continued = false;
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (quote) {
        if (c == '\\') {
          ++i;
        } else if (c == quote) {
          if (!triple) quote = 0;
          else if (text.substr(i, 3) == std::string(3, quote)) quote = 0, i += 2;
        }
        continue;
      }
      if (c == '#') break;
      if (c == '\'' || c == '"') {
        quote = c;
        triple = text.substr(i, 3) == std::string(3, c);
        if (triple) i += 2;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
        --depth;
      } else if (c == '\\' && i + 1 == text.size()) {
        continued = true;
      }
    }
    if (quote && !triple) quote = 0;  // an unterminated one-line string ends with its line (Python refuses it)
    lines.push_back(line);
    pos = end + 1;
  }
  return lines;
}

// `keyword name` followed by a character that cannot continue the name.
bool opens(std::string_view text, std::string_view keyword, std::string_view name) {
  size_t i = text.find_first_not_of(" \t\f");
  if (i == std::string_view::npos) return false;
  text.remove_prefix(i);
  if (text.starts_with("async ")) text.remove_prefix(6);
  if (!text.starts_with(keyword)) return false;
  text.remove_prefix(keyword.size());
  size_t spaces = text.find_first_not_of(" \t");
  if (spaces == 0 || spaces == std::string_view::npos) return false;
  text.remove_prefix(spaces);
  if (!text.starts_with(name)) return false;
  text.remove_prefix(name.size());
  return !text.empty() && (text[0] == '(' || text[0] == ':' || text[0] == ' ' || text[0] == '\t');
}

bool starts_with_at(std::string_view text) {
  size_t i = text.find_first_not_of(" \t\f");
  return i != std::string_view::npos && text[i] == '@';
}

}  // namespace

std::optional<MethodLines> find_method_lines(std::string_view source, std::string_view class_name,
                                             std::string_view method) {
  auto lines = scan_lines(source);
  const int n = static_cast<int>(lines.size());
  int cls = -1;
  for (int i = 0; i < n && cls < 0; ++i)
    if (lines[i].code && lines[i].indent == 0 && opens(lines[i].text, "class", class_name)) cls = i;
  if (cls < 0) return std::nullopt;
  // The class body: the statements after it that are indented, up to the next top-level one.
  size_t body_indent = 0;
  for (int i = cls + 1; i < n; ++i) {
    if (!lines[i].code) continue;
    if (lines[i].indent == 0) return std::nullopt;  // a one-line class, or an empty one
    if (body_indent == 0) body_indent = lines[i].indent;
    if (lines[i].indent != body_indent || !opens(lines[i].text, "def", method)) continue;
    MethodLines found{i, i, std::string(lines[i].text.substr(0, lines[i].text.find_first_not_of(" \t\f")))};
    while (found.first > cls + 1 && lines[found.first - 1].code && lines[found.first - 1].indent == body_indent &&
           starts_with_at(lines[found.first - 1].text))
      --found.first;
    for (int j = i + 1; j < n; ++j) {
      if (lines[j].code && lines[j].indent <= body_indent) break;
      if (!lines[j].starts_statement || lines[j].code) found.last = j;  // trailing blank lines stay
    }
    return found;
  }
  return std::nullopt;
}

std::string replace_lines(std::string_view source, const MethodLines& lines, std::string_view replacement) {
  std::string out;
  size_t pos = 0;
  int line = 0;
  while (pos < source.size()) {
    size_t end = source.find('\n', pos);
    size_t next = end == std::string_view::npos ? source.size() : end + 1;
    if (line == lines.first) out += replacement;
    if (line < lines.first || line > lines.last) out += source.substr(pos, next - pos);
    pos = next;
    ++line;
  }
  return out;
}

Result<std::string> python_raw_string(std::string text) {
  if (text.empty() || text.back() != '\n') text += '\n';
  for (const char* q : {"'''", "\"\"\""})
    if (text.find(q) == std::string::npos) return std::string("r") + q + text + q;
  return Error{"the text holds both ''' and \"\"\", so no Python raw string literal can carry it unchanged"};
}

}  // namespace cutegen
