#include "edit/apply_edits.h"

#include <algorithm>

#include <fmt/format.h>

#include "edit/text_lines.h"

namespace cutegen {
namespace {

using Lines = std::vector<std::string>;

// Where a SEARCH matched: file lines [start, start + length). With blank lines ignored the region can
// be longer or shorter than the SEARCH.
struct Match {
  std::size_t start = 0;
  std::size_t length = 0;
};

Lines normalized(const Lines& lines) {
  Lines out;
  out.reserve(lines.size());
  for (const std::string& l : lines) out.push_back(normalize_for_match(l));
  return out;
}

// Every place where `needle` equals consecutive lines of `hay` (both already in the compared form).
std::vector<Match> find_runs(const Lines& hay, const Lines& needle) {
  std::vector<Match> found;
  if (needle.empty() || needle.size() > hay.size()) return found;
  for (std::size_t p = 0; p + needle.size() <= hay.size(); ++p) {
    bool all = true;
    for (std::size_t j = 0; j < needle.size() && all; ++j) all = hay[p + j] == needle[j];
    if (all) found.push_back({p, needle.size()});
  }
  return found;
}

// The last resort: LLMs often drop or add blank lines when quoting. Compare only the non-blank lines
// (normalized); a match spans from the file line of the first to that of the last.
std::vector<Match> find_ignoring_blank_lines(const Lines& file_norm, const Lines& search_norm) {
  std::vector<std::size_t> index;  // file line of each non-blank line
  Lines file_text, search_text;
  for (std::size_t i = 0; i < file_norm.size(); ++i)
    if (!file_norm[i].empty()) index.push_back(i), file_text.push_back(file_norm[i]);
  for (const std::string& l : search_norm)
    if (!l.empty()) search_text.push_back(l);
  std::vector<Match> found;
  for (Match m : find_runs(file_text, search_text)) {
    const std::size_t first = index[m.start], last = index[m.start + m.length - 1];
    found.push_back({first, last - first + 1});
  }
  return found;
}

Lines non_blank(const Lines& norm) {
  Lines out;
  for (const std::string& l : norm)
    if (!l.empty()) out.push_back(l);
  return out;
}

std::string make_indent(int columns, bool tabs) {
  if (!tabs) return std::string(static_cast<std::size_t>(columns), ' ');
  return std::string(static_cast<std::size_t>(columns / kTabColumns), '\t') +
         std::string(static_cast<std::size_t>(columns % kTabColumns), ' ');
}

// A tolerant match means the SEARCH was written at a different depth (or with tabs for spaces); the
// REPLACE was written at that same depth, so shift it by the difference between the first non-blank
// SEARCH line and the first non-blank line of the matched region, in the region's indentation style.
Lines reindent(const Lines& replace, const Lines& search, const Lines& file, Match m) {
  std::size_t j = 0;
  while (j < search.size() && is_blank(search[j])) ++j;
  std::size_t f = m.start;
  while (f < m.start + m.length && is_blank(file[f])) ++f;
  if (j == search.size() || f == m.start + m.length) return replace;
  std::string_view file_indent = leading_whitespace(file[f]);
  std::string_view search_indent = leading_whitespace(search[j]);
  if (file_indent == search_indent) return replace;
  const int delta = indent_columns(file_indent) - indent_columns(search_indent);
  bool tabs = false;
  for (std::size_t k = m.start; k < m.start + m.length; ++k) tabs = tabs || leading_whitespace(file[k]).find('\t') == 0;
  Lines out;
  out.reserve(replace.size());
  for (const std::string& r : replace) {
    if (is_blank(r)) {
      out.emplace_back();
      continue;
    }
    std::string_view lead = leading_whitespace(r);
    int columns = std::max(0, indent_columns(lead) + delta);
    out.push_back(make_indent(columns, tabs) + r.substr(lead.size()));
  }
  return out;
}

std::string quote_lines(const Lines& lines, std::size_t first, std::size_t count) {
  // Long regions are shown by their head and tail: enough to recognise the place.
  constexpr std::size_t kMaxShown = 12, kHead = 8, kTail = 3;
  std::string out;
  for (std::size_t k = 0; k < count; ++k) {
    if (count > kMaxShown && k == kHead) {
      out += fmt::format("  {:>5} | ... ({} more lines)\n", "", count - kHead - kTail);
      k = count - kTail - 1;
      continue;
    }
    out += fmt::format("  {:>5} | {}\n", first + k + 1, lines[first + k]);
  }
  return out;
}

std::string range_text(Match m) {
  return m.length == 1 ? fmt::format("line {}", m.start + 1) : fmt::format("lines {}-{}", m.start + 1, m.start + m.length);
}

std::string ranges_text(const std::vector<Match>& matches) {
  constexpr std::size_t kMaxListed = 6;
  std::string out;
  for (std::size_t i = 0; i < std::min(matches.size(), kMaxListed); ++i) out += (i ? ", " : "") + range_text(matches[i]);
  if (matches.size() > kMaxListed) out += fmt::format(" and {} more", matches.size() - kMaxListed);
  return out;
}

struct Region {
  std::size_t start = 0;
  std::size_t length = 0;
  double score = 0;
};

// The 1-3 windows of the file most like `search`, line by line, not overlapping each other.
std::vector<Region> nearest_regions(const Lines& file, const Lines& search) {
  std::vector<Region> regions;
  if (file.empty()) return regions;
  const std::size_t length = std::min(search.size(), file.size());
  const std::size_t windows = file.size() - length + 1;
  std::vector<Region> all;
  all.reserve(windows);
  for (std::size_t p = 0; p < windows; ++p) {
    double sum = 0;
    for (std::size_t j = 0; j < length; ++j) sum += line_similarity(file[p + j], search[j]);
    all.push_back({p, length, sum / static_cast<double>(search.size())});
  }
  std::stable_sort(all.begin(), all.end(), [](const Region& a, const Region& b) { return a.score > b.score; });
  constexpr double kWorthShowing = 0.5;  // beyond the best one, weaker look-alikes only add noise
  for (const Region& r : all) {
    if (regions.size() == 3) break;
    if (!regions.empty() && r.score < kWorthShowing) break;
    bool overlaps = std::any_of(regions.begin(), regions.end(), [&](const Region& q) {
      return r.start < q.start + q.length && q.start < r.start + r.length;
    });
    if (!overlaps) regions.push_back(r);
  }
  return regions;
}

std::string first_difference(const Lines& file, const Region& r, const Lines& search) {
  for (std::size_t j = 0; j < r.length; ++j) {
    if (normalize_for_match(file[r.start + j]) != normalize_for_match(search[j])) {
      return fmt::format("first difference: SEARCH line {} is \"{}\" but line {} is \"{}\"", j + 1,
                         trim_whitespace(search[j]), r.start + j + 1, trim_whitespace(file[r.start + j]));
    }
  }
  return fmt::format("SEARCH has {} more line(s) than remain in the file", search.size() - r.length);
}

std::string block_prefix(std::size_t k, std::size_t n) {
  return n == 1 ? std::string("The edit block") : fmt::format("Edit block {} of {}", k, n);
}

std::string not_applied(std::size_t k, std::size_t n) {
  if (k == n) return "No block was applied.";
  return fmt::format("No block was applied; block{} after it {} not checked.", n - k > 1 ? "s" : "",
                     n - k > 1 ? "were" : "was");
}

Error not_found_error(std::size_t k, std::size_t n, const Lines& file, const Lines& search, const Lines& original) {
  std::string msg = fmt::format(
      "{}: its SEARCH text ({} line{}, starting \"{}\") does not match the current kernel, not even ignoring "
      "indentation, spacing and blank lines. {} SEARCH must copy existing lines exactly.\n",
      block_prefix(k, n), search.size(), search.size() == 1 ? "" : "s",
      trim_whitespace(*std::find_if_not(search.begin(), search.end(), [](const std::string& l) { return is_blank(l); })),
      not_applied(k, n));
  if (k > 1 && !find_ignoring_blank_lines(normalized(original), normalized(search)).empty()) {
    msg += fmt::format(
        "Note: this text is in the kernel as it was before this answer, but an earlier block of this answer "
        "changed it. Blocks apply in order, so a SEARCH must quote the text as blocks 1-{} left it (or merge the "
        "blocks into one).\n",
        k - 1);
  }
  std::vector<Region> regions = nearest_regions(file, search);
  if (regions.empty()) return Error{msg + "The current kernel is empty."};
  msg += regions.size() == 1 ? "The most similar region of the current kernel is:\n"
                             : "The most similar regions of the current kernel are:\n";
  for (const Region& r : regions) {
    msg += fmt::format("lines {}-{} ({:.0f}% similar; {}):\n", r.start + 1, r.start + r.length, 100 * r.score,
                       first_difference(file, r, search));
    msg += quote_lines(file, r.start, r.length);
  }
  msg.pop_back();
  return Error{msg};
}

Error ambiguous_error(std::size_t k, std::size_t n, const Lines& file, const std::vector<Match>& matches,
                      MatchKind kind) {
  constexpr std::string_view kHow[] = {"", " when indentation and spacing are ignored",
                                       " when indentation, spacing and blank lines are ignored"};
  std::string msg = fmt::format(
      "{}: its SEARCH text matches {} places in the current kernel{} ({}), so it is ambiguous. {} Add "
      "neighbouring lines that differ between these places to SEARCH (and the same lines to REPLACE) until it "
      "matches exactly one place.\n",
      block_prefix(k, n), matches.size(), kHow[static_cast<int>(kind)], ranges_text(matches), not_applied(k, n));
  // Each place with a line of context either side: the context is what tells them apart.
  constexpr std::size_t kQuoted = 3;
  for (std::size_t i = 0; i < std::min(matches.size(), kQuoted); ++i) {
    const Match m = matches[i];
    const std::size_t first = m.start > 0 ? m.start - 1 : 0;
    const std::size_t last = std::min(file.size(), m.start + m.length + 1);
    msg += fmt::format("match {} ({}):\n", i + 1, range_text(m));
    msg += quote_lines(file, first, last - first);
  }
  msg.pop_back();
  return Error{msg};
}

}  // namespace

Result<EditResult> apply_edits(std::string_view source, const std::vector<EditBlock>& blocks) {
  if (blocks.empty()) return Error{"There are no edit blocks to apply."};
  SourceLines file = split_source_lines(source);
  const Lines original = file.lines;
  EditResult result;
  const std::size_t n = blocks.size();
  for (std::size_t k = 1; k <= n; ++k) {
    const EditBlock& block = blocks[k - 1];
    const Lines search = split_source_lines(block.search).lines;
    const Lines replace = split_source_lines(block.replace).lines;
    if (std::all_of(search.begin(), search.end(), [](const std::string& l) { return is_blank(l); })) {
      return Error{fmt::format(
          "{}: its SEARCH section is empty. {} To insert code, quote the line(s) just before the insertion point "
          "in SEARCH and repeat them at the top of REPLACE, followed by the new lines.",
          block_prefix(k, n), not_applied(k, n))};
    }

    // Tiers, strictest first; a looser tier is only tried when the stricter one found nothing, so an
    // exact match is never made ambiguous by look-alikes that differ in whitespace.
    const Lines file_norm = normalized(file.lines), search_norm = normalized(search);
    MatchKind kind = MatchKind::exact;
    std::vector<Match> matches = find_runs(file.lines, search);
    if (matches.empty()) {
      kind = MatchKind::whitespace_tolerant;
      matches = find_runs(file_norm, search_norm);
    }
    if (matches.empty()) {
      kind = MatchKind::blank_lines_ignored;
      matches = find_ignoring_blank_lines(file_norm, search_norm);
    }
    if (matches.empty()) return not_found_error(k, n, file.lines, search, original);
    if (matches.size() > 1) return ambiguous_error(k, n, file.lines, matches, kind);

    const Match m = matches.front();
    Lines replacement = kind == MatchKind::exact ? replace : reindent(replace, search, file.lines, m);
    const Lines region(file.lines.begin() + static_cast<std::ptrdiff_t>(m.start),
                       file.lines.begin() + static_cast<std::ptrdiff_t>(m.start + m.length));
    if (non_blank(normalized(replacement)) == non_blank(normalized(region))) {
      return Error{fmt::format(
          "{}: it changes nothing: its REPLACE section is the same as the lines it matches ({}), apart from "
          "whitespace at most. {} Every block must make a real change; drop blocks that do not.",
          block_prefix(k, n), range_text(m), not_applied(k, n))};
    }

    result.applied.push_back(AppliedEdit{static_cast<int>(k), kind, static_cast<int>(m.start + 1),
                                         static_cast<int>(m.start + m.length), static_cast<int>(m.length),
                                         static_cast<int>(replacement.size())});
    file.lines.erase(file.lines.begin() + static_cast<std::ptrdiff_t>(m.start),
                     file.lines.begin() + static_cast<std::ptrdiff_t>(m.start + m.length));
    file.lines.insert(file.lines.begin() + static_cast<std::ptrdiff_t>(m.start), replacement.begin(),
                      replacement.end());
  }
  // Whitespace-only differences do not count: a later block that restores what an earlier one changed
  // leaves the kernel as it was.
  if (non_blank(normalized(file.lines)) == non_blank(normalized(original))) {
    return Error{
        "The edit blocks together change nothing: a later block undoes an earlier one. No block was applied. Send "
        "only edits that leave the kernel different from now."};
  }
  result.source = join_source_lines(file);
  return result;
}

}  // namespace cutegen
