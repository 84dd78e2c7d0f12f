#pragma once
// A lexical view of a candidate's source good enough for the source rules: translation phases 1-3
// (line splices, comments, string/character/raw-string literals) without macro expansion. The rules
// only need to know where directives start and what is code, what is a literal and what is a comment.
#include <string>
#include <vector>

namespace cutegen {

// One logical line: ends at a newline that is outside comments and literals. Comments are replaced by
// one space, line splices are removed; `line_of[i]` is the physical (1-based) line of text[i].
struct LogicalLine {
  std::string text;  // literals verbatim
  std::string code;  // the same with the contents of every literal replaced by spaces
  std::vector<int> line_of;
  int first_line() const { return line_of.empty() ? 0 : line_of.front(); }
  int line_at(std::size_t pos) const { return pos < line_of.size() ? line_of[pos] : first_line(); }
};

struct Literal {
  int line = 0;
  std::string contents;  // between the quotes (raw strings: between the parentheses), escapes not decoded
};

struct SourceScan {
  std::vector<LogicalLine> lines;
  std::vector<Literal> literals;  // string literals only (character literals cannot hold a path)
};

SourceScan scan_source(const std::string& source);

}  // namespace cutegen
