#include "report/python_source.h"

#include <vector>

#include "common/python_lines.h"

namespace cutegen {
namespace {

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
  auto lines = scan_python_lines(source);
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
