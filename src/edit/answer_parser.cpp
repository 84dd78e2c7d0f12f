#include "edit/answer_parser.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "edit/text_lines.h"

namespace cutegen {
namespace {

constexpr std::string_view kEditFormatReminder =
    "Each edit block must look exactly like this (whole lines, markers on their own lines):\n"
    "<<<<<<< SEARCH\n"
    "existing lines, copied exactly from the current kernel\n"
    "=======\n"
    "the lines that replace them (nothing, to delete them)\n"
    ">>>>>>> REPLACE";

enum class Marker { none, search, divider, replace, malformed };

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
         });
}

// Marker lines are 5 to 9 repeated characters (7 is the documented form; LLMs miscount) with the
// keyword after '<' and '>' runs. A line that starts like a marker but is not one is reported rather
// than treated as code: silently keeping it would turn a typo into a confusing anchor mismatch.
Marker classify_marker(std::string_view line) {
  std::string_view t = trim_whitespace(line);
  auto run = [&](char c) {
    std::size_t n = 0;
    while (n < t.size() && t[n] == c) ++n;
    return n;
  };
  if (std::size_t n = run('='); n >= 5) {
    if (n == t.size()) return n <= 9 ? Marker::divider : Marker::none;
    return Marker::none;
  }
  for (auto [c, keyword, kind] : {std::tuple{'<', std::string_view("SEARCH"), Marker::search},
                                  std::tuple{'>', std::string_view("REPLACE"), Marker::replace}}) {
    std::size_t n = run(c);
    if (n < 5) continue;
    std::string_view rest = trim_whitespace(t.substr(n));
    return n <= 9 && equals_ignoring_case(rest, keyword) ? kind : Marker::malformed;
  }
  return Marker::none;
}

struct FenceOpen {
  char ch = '`';
  std::size_t length = 3;
  std::string language;  // lower case first word of the info string
  std::size_t indent = 0;  // spaces before the fence (a fence inside a list item is indented)
};

std::optional<FenceOpen> fence_opening(std::string_view line) {
  std::string_view t = trim_whitespace(line);
  if (t.empty() || (t[0] != '`' && t[0] != '~')) return std::nullopt;
  std::size_t n = 0;
  while (n < t.size() && t[n] == t[0]) ++n;
  if (n < 3) return std::nullopt;
  std::string_view info = trim_whitespace(t.substr(n));
  if (t[0] == '`' && info.find('`') != std::string_view::npos) return std::nullopt;  // inline code span
  FenceOpen f{t[0], n, {}, line.find_first_not_of(' ')};
  std::size_t word_end = std::min(info.find_first_of(" \t{"), info.size());
  for (char c : info.substr(0, word_end)) f.language += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return f;
}

bool closes_fence(const FenceOpen& open, std::string_view line) {
  std::string_view t = trim_whitespace(line);
  return t.size() >= open.length && std::all_of(t.begin(), t.end(), [&](char c) { return c == open.ch; });
}

bool is_fence_line(std::string_view line) { return fence_opening(line).has_value(); }

bool is_cpp_language(std::string_view language) {
  for (std::string_view ok : {"", "cuda", "cu", "cpp", "c++", "cxx", "cc", "c", "cuh", "hpp"})
    if (language == ok) return true;
  return false;
}

struct FencedBlock {
  FenceOpen open;
  int line = 0;  // 1-based line of the opening fence
  std::string content;
  bool closed = false;
};

std::vector<FencedBlock> fenced_blocks(const std::vector<std::string>& lines) {
  std::vector<FencedBlock> blocks;
  std::optional<FencedBlock> current;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (current) {
      if (closes_fence(current->open, lines[i])) {
        current->closed = true;
        blocks.push_back(std::move(*current));
        current.reset();
      } else {
        // Content is indented like its fence when the fence sits in a list item; that indentation
        // belongs to the Markdown, not to the code.
        std::string_view line = lines[i];
        std::size_t strip = 0;
        while (strip < current->open.indent && strip < line.size() && line[strip] == ' ') ++strip;
        current->content += line.substr(strip);
        current->content += '\n';
      }
    } else if (auto open = fence_opening(lines[i])) {
      current = FencedBlock{*open, static_cast<int>(i + 1), {}, false};
    }
  }
  if (current) blocks.push_back(std::move(*current));
  return blocks;
}

std::string join_line_numbers(const std::vector<int>& numbers) {
  std::string out;
  for (std::size_t i = 0; i < numbers.size(); ++i) out += (i ? ", " : "") + std::to_string(numbers[i]);
  return out;
}

Error truncated_error(std::string_view what_arrived, std::string_view how_to_shorten) {
  return Error{fmt::format(
      "The answer was cut off at the output-token limit{}, so none of it was used. Answer again, more "
      "compactly: {}",
      what_arrived, how_to_shorten)};
}

constexpr std::string_view kShorterEdits =
    "fewer or smaller SEARCH/REPLACE blocks (quote only the lines that change plus enough context to make each "
    "SEARCH unique) and little prose.";
constexpr std::string_view kShorterFile =
    "the complete file in one ```cuda block, with short comments and little prose before or after it.";

// `**DIAGNOSIS:** text`, `## DIAGNOSIS: text`, `DIAGNOSIS: text` -> {"DIAGNOSIS", "text"}.
std::optional<std::pair<std::string, std::string>> note_label_line(std::string_view line) {
  std::string_view t = trim_whitespace(line);
  while (!t.empty() && (t[0] == '#' || t[0] == '*' || t[0] == '-' || t[0] == '>' || t[0] == ' ' || t[0] == '_' ||
                        t[0] == '\t' || t[0] == '`')) {
    // '_' opens emphasis only before a label letter; a label itself never starts with '_'.
    t.remove_prefix(1);
  }
  std::size_t n = 0;
  if (t.empty() || !std::isupper(static_cast<unsigned char>(t[0]))) return std::nullopt;
  while (n < t.size() && (std::isupper(static_cast<unsigned char>(t[n])) ||
                          std::isdigit(static_cast<unsigned char>(t[n])) || t[n] == '_'))
    ++n;
  std::string label(t.substr(0, n));
  while (!label.empty() && label.back() == '_') label.pop_back();  // "__DIAGNOSIS__:" emphasis
  if (label.size() < 2 || label.size() > 32) return std::nullopt;
  std::string_view rest = t.substr(n);
  while (!rest.empty() && (rest[0] == '*' || rest[0] == '_' || rest[0] == '`')) rest.remove_prefix(1);
  if (rest.empty() || rest[0] != ':') return std::nullopt;
  rest.remove_prefix(1);
  while (!rest.empty() && (rest[0] == '*' || rest[0] == '_' || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '`'))
    rest.remove_prefix(1);
  return std::pair{label, std::string(trim_whitespace(rest))};
}

// Listings in prompts number their lines ("12 | code", as wide as the last number); LLMs sometimes copy those numbers into a
// SEARCH. When every line of a SEARCH carries such a prefix and the numbers run consecutively, the
// prefix is the listing's, not code (a C++ line like "1 | 2;" would not come with a consecutive run),
// so it is removed from SEARCH and from the REPLACE lines that carry it too.
std::optional<std::pair<long, std::size_t>> listing_prefix(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  const std::size_t digits = i;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  if (i == digits || i - digits > 7 || line.substr(i, 2) != " |") return std::nullopt;
  const long number = std::stol(std::string(line.substr(digits, i - digits)));
  i += 2;
  if (i < line.size() && line[i] != ' ' && line[i] != '\r') return std::nullopt;
  if (i < line.size() && line[i] == ' ') ++i;
  return std::pair{number, i};
}

void strip_listing_numbers(EditBlock& block) {
  std::vector<std::string> search = split_source_lines(block.search).lines;
  std::optional<long> previous;
  std::vector<std::size_t> cut;
  for (const std::string& line : search) {
    auto prefix = listing_prefix(line);
    if (!prefix || (previous && prefix->first != *previous + 1)) return;
    previous = prefix->first;
    cut.push_back(prefix->second);
  }
  if (cut.empty()) return;
  std::string stripped;
  for (std::size_t k = 0; k < search.size(); ++k) stripped += search[k].substr(cut[k]) + '\n';
  block.search = stripped;
  std::string replace;
  for (const std::string& line : split_source_lines(block.replace).lines) {
    auto prefix = listing_prefix(line);
    replace += (prefix ? line.substr(prefix->second) : line) + '\n';
  }
  block.replace = replace;
}

}  // namespace

namespace {

bool defines_function(std::string_view code, std::string_view name) {
  auto is_ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t at = code.find(name); at != std::string_view::npos; at = code.find(name, at + 1)) {
    if (at > 0 && is_ident(code[at - 1])) continue;
    std::size_t i = at + name.size();
    if (i < code.size() && is_ident(code[i])) continue;
    while (i < code.size() && std::isspace(static_cast<unsigned char>(code[i]))) ++i;
    if (i >= code.size() || code[i] != '(') continue;
    int depth = 0;
    for (; i < code.size(); ++i) {
      if (code[i] == '(') ++depth;
      if (code[i] == ')' && --depth == 0) break;
    }
    if (i >= code.size()) continue;
    ++i;
    while (i < code.size() && std::isspace(static_cast<unsigned char>(code[i]))) ++i;
    if (i < code.size() && code[i] == '{') return true;  // a body follows: a definition, not a declaration or call
  }
  return false;
}

}  // namespace

// Either form of the contract: a kernel with a workspace defines cutegen_forward_ws instead.
bool defines_entry_point(std::string_view code) {
  return defines_function(code, "cutegen_forward") || defines_function(code, "cutegen_forward_ws");
}

AnswerNotes parse_answer_notes(std::string_view answer) {
  const std::vector<std::string> lines = split_source_lines(answer).lines;
  AnswerNotes notes;
  std::optional<FenceOpen> fence;
  bool in_edit_block = false;
  std::string* current = nullptr;  // the note whose text continues on the next line
  for (const std::string& line : lines) {
    if (fence) {
      if (closes_fence(*fence, line)) fence.reset();
      continue;
    }
    Marker marker = classify_marker(line);
    if (in_edit_block) {
      if (marker == Marker::replace) in_edit_block = false;
      continue;
    }
    if (marker == Marker::search) {
      in_edit_block = true;
      current = nullptr;
      continue;
    }
    if (auto open = fence_opening(line)) {
      fence = open;
      current = nullptr;
      continue;
    }
    if (auto labelled = note_label_line(line)) {
      std::string& text = notes[labelled->first];
      if (!text.empty()) text += "\n\n";
      text += labelled->second;
      current = &text;
      continue;
    }
    if (is_blank(line) || marker != Marker::none) {
      current = nullptr;
      continue;
    }
    if (current) {
      if (!current->empty()) *current += '\n';
      *current += trim_whitespace(line);
    }
  }
  return notes;
}

Status require_notes(const AnswerNotes& notes, const std::vector<std::string_view>& labels) {
  std::vector<std::string> missing;
  for (std::string_view label : labels) {
    auto it = notes.find(label);
    if (it == notes.end() || is_blank(it->second)) missing.emplace_back(label);
  }
  if (missing.empty()) return ok_status();
  std::string list;
  for (std::size_t i = 0; i < missing.size(); ++i) list += fmt::format("{}`{}:`", i ? ", " : "", missing[i]);
  return Error{fmt::format(
      "The answer lacks the required line{} {}. Start a line with each label in capitals followed by a colon and "
      "its text, outside any code block, e.g. `{}: ...`.",
      missing.size() > 1 ? "s" : "", list, missing.front())};
}

Result<EditAnswer> parse_edit_answer(std::string_view answer, AnswerEnd end) {
  const std::vector<std::string> lines = split_source_lines(answer).lines;
  enum class State { outside, in_search, in_replace } state = State::outside;
  EditAnswer out;
  EditBlock block;
  auto number = [&] { return out.blocks.size() + 1; };
  auto block_error = [&](const std::string& problem) {
    return Error{fmt::format("Edit block {} (its SEARCH marker is on answer line {}): {}\n{}", number(),
                             block.answer_line, problem, kEditFormatReminder)};
  };

  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const int ln = static_cast<int>(i + 1);
    Marker marker = classify_marker(line);
    if (marker == Marker::malformed) {
      return Error{fmt::format(
          "Answer line {} looks like an edit marker but is not one: \"{}\". The only marker lines are "
          "\"<<<<<<< SEARCH\", \"=======\" and \">>>>>>> REPLACE\", each alone on its line.\n{}",
          ln, trim_whitespace(line), kEditFormatReminder)};
    }
    switch (state) {
      case State::outside:
        if (marker == Marker::search) {
          block = EditBlock{{}, {}, ln};
          state = State::in_search;
        } else if (marker == Marker::replace) {
          return Error{fmt::format(
              "Answer line {} has a \">>>>>>> REPLACE\" marker with no \"<<<<<<< SEARCH\" marker before it "
              "(after edit block {}). Every block starts with \"<<<<<<< SEARCH\".\n{}",
              ln, out.blocks.size(), kEditFormatReminder)};
        }
        // A lone "=======" outside a block is Markdown (a heading underline), not part of an edit.
        break;
      case State::in_search:
        if (marker == Marker::divider) {
          state = State::in_replace;
        } else if (marker == Marker::search) {
          return block_error(fmt::format(
              "another \"<<<<<<< SEARCH\" marker follows on answer line {} before this block's \"=======\" divider.",
              ln));
        } else if (marker == Marker::replace) {
          return block_error(fmt::format(
              "the \"=======\" divider between SEARCH and REPLACE is missing (the \">>>>>>> REPLACE\" marker is on "
              "answer line {}).",
              ln));
        } else if (is_fence_line(line)) {
          return block_error(fmt::format(
              "a ``` fence on answer line {} interrupts the SEARCH section. Put fences only around whole blocks.", ln));
        } else {
          block.search += line + '\n';
        }
        break;
      case State::in_replace:
        if (marker == Marker::replace) {
          if (std::all_of(block.search.begin(), block.search.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); })) {
            return block_error(
                "its SEARCH section is empty. Quote the existing lines to change; to insert new code, quote the "
                "line(s) just before the insertion point and repeat them at the top of REPLACE, followed by the "
                "new lines.");
          }
          strip_listing_numbers(block);
          out.blocks.push_back(std::move(block));
          block = EditBlock{};
          state = State::outside;
        } else if (marker == Marker::search) {
          return block_error(fmt::format(
              "it is not closed with \">>>>>>> REPLACE\" before the next \"<<<<<<< SEARCH\" marker on answer line {}.",
              ln));
        } else if (marker == Marker::divider) {
          return block_error(fmt::format("it has a second \"=======\" divider on answer line {}.", ln));
        } else if (is_fence_line(line)) {
          return block_error(fmt::format(
              "a ``` fence on answer line {} comes before the block's \">>>>>>> REPLACE\" marker. Close every "
              "block with \">>>>>>> REPLACE\" and put fences only around whole blocks.",
              ln));
        } else {
          block.replace += line + '\n';
        }
        break;
    }
  }

  const std::size_t complete = out.blocks.size();
  if (end == AnswerEnd::truncated) {
    return truncated_error(
        fmt::format(" after {} complete edit block{}{}", complete, complete == 1 ? "" : "s",
                    state == State::outside ? "" : " and part of another"),
        kShorterEdits);
  }
  if (state != State::outside) {
    return block_error(state == State::in_search
                           ? "the answer ends inside its SEARCH section: the \"=======\" divider and \">>>>>>> "
                             "REPLACE\" marker are missing."
                           : "the answer ends before its \">>>>>>> REPLACE\" marker.");
  }
  if (out.blocks.empty()) {
    if (defines_entry_point(answer)) {
      return Error{fmt::format(
          "The answer contains a whole file instead of SEARCH/REPLACE edit blocks. This step must change the "
          "current kernel with localized edits, not rewrite it: keep everything that works and send only the "
          "lines that change.\n{}",
          kEditFormatReminder)};
    }
    return Error{fmt::format("The answer contains no SEARCH/REPLACE edit block.\n{}", kEditFormatReminder)};
  }
  out.notes = parse_answer_notes(answer);
  return out;
}

Result<WholeFileAnswer> parse_whole_file_answer(std::string_view answer, AnswerEnd end) {
  if (end == AnswerEnd::truncated) return truncated_error(", before the file was complete", kShorterFile);
  const std::vector<std::string> lines = split_source_lines(answer).lines;
  const std::vector<FencedBlock> blocks = fenced_blocks(lines);

  std::vector<const FencedBlock*> candidates;
  std::vector<const FencedBlock*> other_language;
  for (const FencedBlock& b : blocks) {
    if (!b.closed) {
      return Error{fmt::format(
          "The code block opened on answer line {} is never closed with ```. If the answer was cut short, send it "
          "again: {}",
          b.line, kShorterFile)};
    }
    if (!defines_entry_point(b.content)) continue;
    (is_cpp_language(b.open.language) ? candidates : other_language).push_back(&b);
  }
  if (candidates.size() == 1) {
    const FencedBlock& b = *candidates.front();
    return WholeFileAnswer{b.content, b.open.language, b.line, parse_answer_notes(answer)};
  }
  constexpr std::string_view kWant =
      "Send exactly one fenced code block (```cuda ... ```) holding the complete .cu file, including its "
      "#include lines and the definition of cutegen_forward (or cutegen_forward_ws).";
  if (candidates.size() > 1) {
    std::vector<int> at;
    for (const FencedBlock* b : candidates) at.push_back(b->line);
    return Error{fmt::format(
        "The answer has {} code blocks that each define cutegen_forward (opening on answer lines {}), so it is "
        "unclear which one is the kernel. {}",
        candidates.size(), join_line_numbers(at), kWant)};
  }
  bool has_edit_blocks = std::any_of(lines.begin(), lines.end(),
                                     [](const std::string& l) { return classify_marker(l) == Marker::search; });
  if (has_edit_blocks) {
    return Error{fmt::format(
        "The answer contains SEARCH/REPLACE edit blocks, but this step needs the whole kernel file. {}", kWant)};
  }
  if (!other_language.empty()) {
    return Error{fmt::format(
        "The code block on answer line {} defines cutegen_forward but is marked as `{}`, not CUDA/C++. {}",
        other_language.front()->line, other_language.front()->open.language, kWant)};
  }
  if (blocks.empty()) {
    return Error{fmt::format("The answer contains no fenced code block. {}", kWant)};
  }
  return Error{fmt::format(
      "None of the answer's {} code block{} defines cutegen_forward (the entry point the contract requires, with "
      "its body). {}",
      blocks.size(), blocks.size() == 1 ? "" : "s", kWant)};
}

namespace {

bool has_search_marker(const std::vector<std::string>& lines) {
  return std::any_of(lines.begin(), lines.end(),
                     [](const std::string& l) { return classify_marker(l) == Marker::search; });
}

}  // namespace

Result<OptimizeAnswer> parse_optimize_answer(std::string_view answer, AnswerEnd end) {
  const std::vector<std::string> lines = split_source_lines(answer).lines;
  AnswerNotes notes = parse_answer_notes(answer);
  auto decline = notes.find(note_label::kNoFurtherChange);
  if (decline == notes.end()) {
    auto edits = parse_edit_answer(answer, end);
    if (!edits) return edits.error();
    return OptimizeAnswer{std::move(*edits), ""};
  }
  if (end == AnswerEnd::truncated)
    return truncated_error("", "one line `NO_FURTHER_CHANGE: <the reason>`, or the edits of one optimisation.");
  if (has_search_marker(lines))
    return Error{
        "The answer both declines (NO_FURTHER_CHANGE) and sends SEARCH/REPLACE edits. Send one of the two: the "
        "edits of one optimisation, or only the line `NO_FURTHER_CHANGE: <why nothing is left worth a step>`."};
  if (decline->second.find_first_not_of(" \t\n") == std::string::npos)
    return Error{
        "NO_FURTHER_CHANGE needs its reason on the same line: `NO_FURTHER_CHANGE: <why nothing is left worth a "
        "step>` (the evidence it rests on: the floor, the profile, the steps already tried)."};
  return OptimizeAnswer{std::nullopt, decline->second};
}

std::string DiagnosisAnswer::summary() const {
  std::string out = fmt::format("DIAGNOSIS: {}\n", diagnosis);
  if (!location.empty()) out += fmt::format("LOCATION: {}\n", location);
  out += fmt::format("FIX: {}\n", fix);
  return out;
}

Result<DiagnosisAnswer> parse_diagnosis_answer(std::string_view answer, AnswerEnd end) {
  if (end == AnswerEnd::truncated) {
    return truncated_error("",
                           "a few sentences after each of `DIAGNOSIS:`, `LOCATION:` and `FIX:`, and no code (the "
                           "next step asks for the edits).");
  }
  DiagnosisAnswer out;
  out.notes = parse_answer_notes(answer);
  if (auto missing = require_notes(out.notes, {note_label::kDiagnosis, note_label::kFix}); !missing.ok())
    return missing.error();
  out.diagnosis = out.notes.at(std::string(note_label::kDiagnosis));
  out.fix = out.notes.at(std::string(note_label::kFix));
  if (auto it = out.notes.find(note_label::kLocation); it != out.notes.end()) out.location = it->second;
  const std::vector<std::string> lines = split_source_lines(answer).lines;
  out.contained_code = has_search_marker(lines) || !fenced_blocks(lines).empty();
  return out;
}

}  // namespace cutegen
