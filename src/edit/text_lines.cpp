#include "edit/text_lines.h"

#include <algorithm>
#include <cctype>

namespace cutegen {

SourceLines split_source_lines(std::string_view text) {
  SourceLines out;
  std::size_t crlf = 0, lf = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) {
      std::string_view last = text.substr(begin);
      if (!last.empty() && last.back() == '\r') last.remove_suffix(1);
      out.lines.emplace_back(last);
      out.final_newline = false;
      break;
    }
    std::string_view line = text.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
      ++crlf;
    } else {
      ++lf;
    }
    out.lines.emplace_back(line);
    begin = end + 1;
  }
  out.crlf = crlf > lf;
  return out;
}

std::string join_source_lines(const SourceLines& source) {
  const char* newline = source.crlf ? "\r\n" : "\n";
  std::string out;
  for (std::size_t i = 0; i < source.lines.size(); ++i) {
    out += source.lines[i];
    if (i + 1 < source.lines.size() || source.final_newline) out += newline;
  }
  return out;
}

std::string_view leading_whitespace(std::string_view line) {
  std::size_t n = line.find_first_not_of(" \t");
  return n == std::string_view::npos ? line : line.substr(0, n);
}

std::string_view trim_whitespace(std::string_view line) {
  std::size_t b = line.find_first_not_of(" \t\r\f\v");
  if (b == std::string_view::npos) return {};
  std::size_t e = line.find_last_not_of(" \t\r\f\v");
  return line.substr(b, e - b + 1);
}

bool is_blank(std::string_view line) { return trim_whitespace(line).empty(); }

std::string normalize_for_match(std::string_view line) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF", kNbsp = "\xC2\xA0";
  std::string out;
  out.reserve(line.size());
  bool pending_space = false;
  for (std::size_t i = 0; i < line.size();) {
    std::size_t width = 0;
    if (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\f' || line[i] == '\v') width = 1;
    else if (line.substr(i, 2) == kNbsp) width = 2;
    else if (line.substr(i, 3) == kBom) width = 3;
    if (width) {
      pending_space = !out.empty();
      i += width;
      continue;
    }
    // A space only separates two word characters ("int a", "unsigned long"); next to punctuation it
    // is layout ("a+b" and "a + b" are the same tokens).
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80); };
    if (pending_space && word(out.back()) && word(line[i])) out += ' ';
    pending_space = false;
    out += line[i++];
  }
  return out;
}

int indent_columns(std::string_view indent) {
  int cols = 0;
  for (char c : indent) cols = c == '\t' ? (cols / kTabColumns + 1) * kTabColumns : cols + 1;
  return cols;
}

double line_similarity(std::string_view a, std::string_view b) {
  a = trim_whitespace(a);
  b = trim_whitespace(b);
  // Long lines are compared on their first 200 characters: enough to rank candidates, and it keeps
  // the nearest-region search quadratic in lines rather than in characters.
  constexpr std::size_t kMaxChars = 200;
  a = a.substr(0, std::min(a.size(), kMaxChars));
  b = b.substr(0, std::min(b.size(), kMaxChars));
  if (a.empty() && b.empty()) return 1.0;
  if (a.empty() || b.empty()) return 0.0;
  // Levenshtein distance with one rolling row.
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return 1.0 - static_cast<double>(row[b.size()]) / static_cast<double>(std::max(a.size(), b.size()));
}

}  // namespace cutegen
