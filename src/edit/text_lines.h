#pragma once
// Line-level view of a source file. Edits are anchored on lines, and kernels arrive from LLMs and
// editors with either line ending, so the split remembers the file's style to write it back unchanged.
#include <string>
#include <string_view>
#include <vector>

namespace cutegen {

struct SourceLines {
  std::vector<std::string> lines;  // without terminators ('\r' of CRLF removed too)
  bool crlf = false;               // most lines ended with "\r\n": joined back that way
  bool final_newline = true;       // the last line was terminated (false for "a\nb")
};

// "" gives no lines; "a\n" gives {"a"}; "a\nb" gives {"a","b"} with final_newline false.
SourceLines split_source_lines(std::string_view text);
std::string join_source_lines(const SourceLines& source);

// Leading spaces/tabs of a line, and the line without leading and trailing whitespace.
std::string_view leading_whitespace(std::string_view line);
std::string_view trim_whitespace(std::string_view line);
bool is_blank(std::string_view line);

// The form lines are compared in when an exact match fails: leading and trailing whitespace dropped;
// inside the line, whitespace kept as one space only between two word characters ("int a") and dropped
// next to punctuation ("a+b" equals "a + b"); a UTF-8 byte-order mark and no-break spaces (U+00A0,
// which some chat front ends substitute for ordinary spaces) count as whitespace. This equates lines
// that tokenize alike; the exceptions ("a - -b" vs "a--b", spaces in string literals) do not occur in
// the quoted kernel lines in practice, and an exact match is always tried first.
std::string normalize_for_match(std::string_view line);

// Indentation width in columns, a tab counting as kTabColumns (only used to compare and shift
// indentation, never to re-lay out a file).
inline constexpr int kTabColumns = 4;
int indent_columns(std::string_view indent);

// 0..1, how alike two lines are ignoring leading/trailing whitespace (1 - edit distance / longer length).
double line_similarity(std::string_view a, std::string_view b);

}  // namespace cutegen
