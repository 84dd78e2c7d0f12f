#include "edit/apply_edits.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "edit/text_lines.h"

namespace cutegen {
namespace {

using Lines = std::vector<std::string>;
using LineEquals = std::function<bool(std::string_view, std::string_view)>;

bool exact_equal(std::string_view a, std::string_view b) { return a == b; }
bool tolerant_equal(std::string_view a, std::string_view b) { return trim_whitespace(a) == trim_whitespace(b); }

// 0-based starts of every place where `needle` matches consecutive lines of `hay`.
std::vector<std::size_t> find_matches(const Lines& hay, const Lines& needle, const LineEquals& eq) {
  std::vector<std::size_t> starts;
  if (needle.empty() || needle.size() > hay.size()) return starts;
  for (std::size_t p = 0; p + needle.size() <= hay.size(); ++p) {
    bool all = true;
    for (std::size_t j = 0; j < needle.size() && all; ++j) all = eq(hay[p + j], needle[j]);
    if (all) starts.push_back(p);
  }
  return starts;
}

std::string make_indent(int columns, bool tabs) {
  if (!tabs) return std::string(static_cast<std::size_t>(columns), ' ');
  return std::string(static_cast<std::size_t>(columns / kTabColumns), '\t') +
         std::string(static_cast<std::size_t>(columns % kTabColumns), ' ');
}

// A whitespace-tolerant match means the SEARCH was written at a different depth (or with tabs for
// spaces); the REPLACE was written at that same depth, so shift it by the same amount.
Lines reindent(const Lines& replace, const Lines& search, const Lines& file, std::size_t at) {
  std::size_t j = 0;
  while (j < search.size() && is_blank(search[j])) ++j;
  if (j == search.size()) return replace;
  std::string_view file_indent = leading_whitespace(file[at + j]);
  std::string_view search_indent = leading_whitespace(search[j]);
  if (file_indent == search_indent) return replace;
  const int delta = indent_columns(file_indent) - indent_columns(search_indent);
  bool tabs = false;
  for (std::size_t k = 0; k < search.size(); ++k) tabs = tabs || leading_whitespace(file[at + k]).find('\t') == 0;
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

std::string ranges_text(const std::vector<std::size_t>& starts, std::size_t length) {
  constexpr std::size_t kMaxListed = 6;
  std::string out;
  for (std::size_t i = 0; i < std::min(starts.size(), kMaxListed); ++i) {
    out += i ? ", " : "";
    out += length == 1 ? fmt::format("line {}", starts[i] + 1)
                       : fmt::format("lines {}-{}", starts[i] + 1, starts[i] + length);
  }
  if (starts.size() > kMaxListed) out += fmt::format(" and {} more", starts.size() - kMaxListed);
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
    if (!tolerant_equal(file[r.start + j], search[j])) {
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
      "indentation and trailing whitespace. {} SEARCH must copy existing lines exactly.\n",
      block_prefix(k, n), search.size(), search.size() == 1 ? "" : "s",
      trim_whitespace(*std::find_if_not(search.begin(), search.end(), [](const std::string& l) { return is_blank(l); })),
      not_applied(k, n));
  if (k > 1 && !find_matches(original, search, tolerant_equal).empty()) {
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
      return Error{fmt::format("{}: its SEARCH section is empty. {}", block_prefix(k, n), not_applied(k, n))};
    }

    MatchKind kind = MatchKind::exact;
    std::vector<std::size_t> starts = find_matches(file.lines, search, exact_equal);
    if (starts.empty()) {
      kind = MatchKind::whitespace_tolerant;
      starts = find_matches(file.lines, search, tolerant_equal);
    }
    if (starts.empty()) return not_found_error(k, n, file.lines, search, original);
    if (starts.size() > 1) {
      return Error{fmt::format(
          "{}: its SEARCH text matches {} places in the current kernel{} ({}), so it is ambiguous. {} Add "
          "neighbouring lines to SEARCH (and the same lines to REPLACE) until it matches exactly one place.",
          block_prefix(k, n), starts.size(), kind == MatchKind::exact ? "" : " when indentation is ignored",
          ranges_text(starts, search.size()), not_applied(k, n))};
    }

    const std::size_t at = starts.front();
    Lines replacement = kind == MatchKind::exact ? replace : reindent(replace, search, file.lines, at);
    bool changes_something = replacement.size() != search.size();
    for (std::size_t j = 0; j < replacement.size() && !changes_something; ++j)
      changes_something = !tolerant_equal(replacement[j], file.lines[at + j]);
    if (!changes_something) {
      return Error{fmt::format(
          "{}: it changes nothing: its REPLACE section is the same as the lines it matches ({}), apart from "
          "whitespace at most. {} Every block must make a real change; drop blocks that do not.",
          block_prefix(k, n), ranges_text({at}, search.size()), not_applied(k, n))};
    }

    result.applied.push_back(AppliedEdit{static_cast<int>(k), kind, static_cast<int>(at + 1),
                                         static_cast<int>(at + search.size()), static_cast<int>(search.size()),
                                         static_cast<int>(replacement.size())});
    file.lines.erase(file.lines.begin() + static_cast<std::ptrdiff_t>(at),
                     file.lines.begin() + static_cast<std::ptrdiff_t>(at + search.size()));
    file.lines.insert(file.lines.begin() + static_cast<std::ptrdiff_t>(at), replacement.begin(), replacement.end());
  }
  result.source = join_source_lines(file);
  if (result.source == source) {
    return Error{
        "The edit blocks together change nothing: a later block undoes an earlier one. No block was applied. Send "
        "only edits that leave the kernel different from now."};
  }
  return result;
}

}  // namespace cutegen
