#pragma once
// Reads an LLM answer: prose around either one whole kernel file (synthesis, explicit restart) or
// SEARCH/REPLACE edit blocks (repair, optimisation), plus a few labelled free-text notes. An
// optimisation step may instead decline: `NO_FURTHER_CHANGE: <reason>` and no edits.
//
// Every error message is written to be sent back to the LLM as is: it says what was wrong with the
// answer and what a correct answer looks like. prompts/rules.md teaches the same formats.
//
// Edit block format (whole lines; optionally inside a ``` fence; several blocks in one answer):
//   <<<<<<< SEARCH
//   exact existing lines
//   =======
//   replacement lines (empty to delete)
//   >>>>>>> REPLACE
// A SEARCH whose every line carries a consecutive listing number ("12 | code", as prompts number
// kernels) has those numbers removed, in SEARCH and in the REPLACE lines that carry them.
//
// Note convention: outside code fences and edit blocks, a line that starts with an upper-case label
// and a colon starts a note, e.g. `DIAGNOSIS: the k-loop reads sA before cp_async_wait`. Labels are
// one word of A-Z, 0-9 and '_' (2 to 32 characters, starting with a letter). Markdown decoration is
// tolerated: `**DIAGNOSIS:**`, `**DIAGNOSIS**:`, `## DIAGNOSIS:`, `- DIAGNOSIS:`, and the label in
// backticks as the prompts print it. The note's text is the rest of the line plus the lines after
// it, up to a blank line, the next label, a code fence or an edit block. A label given twice keeps
// both texts, joined by a blank line.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace cutegen {

// Labels the prompt templates ask for (prompts/*.md spell them the same way).
namespace note_label {
inline constexpr std::string_view kPlan = "PLAN";                  // synthesize: optional design summary
inline constexpr std::string_view kDiagnosis = "DIAGNOSIS";        // diagnose: what is wrong and why
inline constexpr std::string_view kLocation = "LOCATION";          // diagnose: where (lines, functions)
inline constexpr std::string_view kFix = "FIX";                    // diagnose: the localized change, in words
inline constexpr std::string_view kChanges = "CHANGES";            // repair: one-line summary of the edits
inline constexpr std::string_view kOptimization = "OPTIMIZATION";  // optimize: menu item and what changes
inline constexpr std::string_view kExpected = "EXPECTED";          // optimize: expected effect and why
inline constexpr std::string_view kNoFurtherChange = "NO_FURTHER_CHANGE";  // optimize: nothing left worth a step, and why
}  // namespace note_label

// Label (upper case, as written) -> text.
using AnswerNotes = std::map<std::string, std::string, std::less<>>;

// Whether the LLM backend reported that the answer hit its output-token limit. A cut-off answer is
// never applied, even when what arrived happens to parse: the missing part may be further edits.
enum class AnswerEnd { complete, truncated };

struct EditBlock {
  std::string search;   // whole lines, each ending in '\n'; never empty
  std::string replace;  // whole lines, each ending in '\n'; empty deletes the SEARCH lines
  int answer_line = 0;  // 1-based line of the block's SEARCH marker in the answer
};

struct EditAnswer {
  std::vector<EditBlock> blocks;  // in answer order; at least one
  AnswerNotes notes;
};

struct WholeFileAnswer {
  std::string source;          // the fenced block's content, lines ending in '\n'
  std::string fence_language;  // "cuda", "cpp", ... or "" for a bare ```
  int answer_line = 0;         // 1-based line of the opening fence
  AnswerNotes notes;
};

// Synthesis / restart: exactly one fenced block (```cuda, ```cu, ```cpp, ```c++, ```cxx, ```c or a
// bare ```) that defines cutegen_forward. None, several, or only SEARCH/REPLACE blocks are errors.
Result<WholeFileAnswer> parse_whole_file_answer(std::string_view answer, AnswerEnd end = AnswerEnd::complete);

// Repair / optimisation: one or more SEARCH/REPLACE blocks. Unterminated blocks, a missing divider,
// an empty SEARCH, stray or misspelt markers, and a whole file instead of edits are errors.
Result<EditAnswer> parse_edit_answer(std::string_view answer, AnswerEnd end = AnswerEnd::complete);

// An optimisation step's answer: edits (as parse_edit_answer reads them), or a decline.
struct OptimizeAnswer {
  std::optional<EditAnswer> edits;  // absent when the answer declined
  std::string decline_reason;       // the text of its NO_FURTHER_CHANGE note
  bool declined() const { return !edits; }
};

// Edits, or a `NO_FURTHER_CHANGE:` note with a reason and no edit block. A decline without a reason,
// or one that also carries edits, is an error saying which of the two to send; a cut-off answer is
// never used, whichever it was.
Result<OptimizeAnswer> parse_optimize_answer(std::string_view answer, AnswerEnd end = AnswerEnd::complete);

// The diagnose step's answer: prose only, with `DIAGNOSIS:` and `FIX:` required and `LOCATION:` optional.
struct DiagnosisAnswer {
  std::string diagnosis;
  std::string location;         // "" when not given
  std::string fix;
  AnswerNotes notes;
  bool contained_code = false;  // the answer had code anyway (ignored; the repair step asks for edits)
  // The three notes as labelled lines, ready to quote in the repair prompt.
  std::string summary() const;
};
Result<DiagnosisAnswer> parse_diagnosis_answer(std::string_view answer, AnswerEnd end = AnswerEnd::complete);

// The labelled notes of any answer (also a diagnosis, which has no code). Never fails.
AnswerNotes parse_answer_notes(std::string_view answer);

// An error naming every label in `labels` that `notes` lacks or leaves empty.
Status require_notes(const AnswerNotes& notes, const std::vector<std::string_view>& labels);

// True when some line of `code` defines (not merely declares or mentions) cutegen_forward or, for a
// kernel with a workspace, cutegen_forward_ws.
bool defines_entry_point(std::string_view code);

}  // namespace cutegen
