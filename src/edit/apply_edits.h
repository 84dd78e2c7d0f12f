#pragma once
// Applies SEARCH/REPLACE edit blocks to a kernel, anchored on existing text and never on line numbers
// (line numbers drift as soon as an earlier block changes the file; quoted text does not).
//
// Blocks apply in order, each to the text the previous ones produced (so a later block may anchor on
// an earlier block's replacement). Each SEARCH must match exactly one place, trying in turn: exactly
// (whole lines, line endings aside); ignoring indentation, trailing whitespace and spacing inside
// lines; and finally also ignoring blank lines. A looser tier is tried only when the stricter one
// found nothing. A tolerant match re-indents the replacement by the difference between the file's and
// the SEARCH's indentation of the first non-blank matched line, so code pasted at the wrong depth lands
// at the right one. The file's line ending style (LF or CRLF) and final newline are kept.
//
// All or nothing: when any block fails, nothing is applied and the error names the block, says why
// (not found: the most similar regions of the current text with line numbers, a similarity percentage
// and the first differing line; ambiguous: every place it matches, quoted with context; no-op: it
// changes nothing but whitespace) and is fit to send back to the LLM as is.
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "edit/answer_parser.h"

namespace cutegen {

enum class MatchKind {
  exact,                // SEARCH equals the lines character for character (line endings aside)
  whitespace_tolerant,  // equal after normalize_for_match (indentation, trailing and inner spacing)
  blank_lines_ignored,  // the non-blank lines are equal after normalize_for_match
};

struct AppliedEdit {
  int block = 0;       // 1-based block number
  MatchKind match = MatchKind::exact;
  int first_line = 0;  // 1-based lines the SEARCH matched, in the text the block was applied to
  int last_line = 0;
  int lines_removed = 0;  // last_line - first_line + 1
  int lines_added = 0;
};

struct EditResult {
  std::string source;  // the edited file
  std::vector<AppliedEdit> applied;
};

// `source` is the current kernel; it is never modified (the result is a new string).
Result<EditResult> apply_edits(std::string_view source, const std::vector<EditBlock>& blocks);

}  // namespace cutegen
