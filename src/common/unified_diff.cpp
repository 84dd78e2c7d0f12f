#include "common/unified_diff.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace cutegen {
namespace {

// Lines with their terminators ("a\n", "b\r\n", "c"): equality then covers line endings too.
std::vector<std::string_view> lines_with_ends(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    end = end == std::string_view::npos ? text.size() : end + 1;
    out.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return out;
}

enum class OpKind { equal, remove, insert };
struct Op {
  OpKind kind;
  int a;  // index into `before` of this line (equal/remove) or of the line it precedes (insert)
  int b;  // index into `after`, likewise
};

// Myers' greedy shortest edit script between a[0, n) and b[0, m), as forward ops.
std::vector<Op> edit_script(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  const int n = static_cast<int>(a.size()), m = static_cast<int>(b.size());
  // Equal head and tail lines need no search; for a one-step edit this leaves only a few lines.
  int head = 0;
  while (head < n && head < m && a[head] == b[head]) ++head;
  int tail = 0;
  while (tail < n - head && tail < m - head && a[n - 1 - tail] == b[m - 1 - tail]) ++tail;
  const int an = n - head - tail, bm = m - head - tail;

  std::vector<Op> middle;
  if (an > 0 || bm > 0) {
    const int max = an + bm;
    const int offset = max + 1;
    std::vector<int> v(2 * max + 3, 0);
    // trace[d] is v restricted to diagonals [-d-1, d+1] as it was before round d: all backtracking needs.
    std::vector<std::vector<int>> trace;
    auto A = [&](int i) { return a[head + i]; };
    auto B = [&](int j) { return b[head + j]; };
    bool done = false;
    for (int d = 0; d <= max && !done; ++d) {
      trace.emplace_back(v.begin() + offset - d - 1, v.begin() + offset + d + 2);
      for (int k = -d; k <= d; k += 2) {
        int x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])) ? v[offset + k + 1]
                                                                              : v[offset + k - 1] + 1;
        int y = x - k;
        while (x < an && y < bm && A(x) == B(y)) ++x, ++y;
        v[offset + k] = x;
        if (x >= an && y >= bm) {
          done = true;
          break;
        }
      }
    }
    int x = an, y = bm;
    for (int d = static_cast<int>(trace.size()) - 1; d >= 0; --d) {
      const std::vector<int>& t = trace[d];
      auto at = [&](int k) { return t[k + d + 1]; };
      const int k = x - y;
      const int prev_k = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
      const int prev_x = at(prev_k), prev_y = prev_x - prev_k;
      while (x > prev_x && y > prev_y) {
        --x, --y;
        middle.push_back({OpKind::equal, x, y});
      }
      if (d > 0) {
        if (x == prev_x) middle.push_back({OpKind::insert, x, prev_y});
        else middle.push_back({OpKind::remove, prev_x, y});
      }
      x = prev_x, y = prev_y;
    }
    std::reverse(middle.begin(), middle.end());
  }

  std::vector<Op> ops;
  ops.reserve(static_cast<std::size_t>(head + tail) + middle.size());
  for (int i = 0; i < head; ++i) ops.push_back({OpKind::equal, i, i});
  for (Op op : middle) ops.push_back({op.kind, op.a + head, op.b + head});
  for (int i = 0; i < tail; ++i) ops.push_back({OpKind::equal, n - tail + i, m - tail + i});
  return ops;
}

// diff -u numbering: 1-based first line, and a count of 1 is left implicit; an empty range names the
// line before it.
std::string range(int first0, int count) {
  if (count == 0) return fmt::format("{},0", first0);
  if (count == 1) return fmt::format("{}", first0 + 1);
  return fmt::format("{},{}", first0 + 1, count);
}

void append_line(std::string& out, char prefix, std::string_view line) {
  out += prefix;
  out += line;
  if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

}  // namespace

UnifiedDiff unified_diff(std::string_view before, std::string_view after, const DiffOptions& options) {
  UnifiedDiff diff;
  if (before == after) return diff;
  const std::vector<std::string_view> a = lines_with_ends(before), b = lines_with_ends(after);
  const std::vector<Op> ops = edit_script(a, b);
  const int context = std::max(0, options.context);

  std::vector<std::size_t> changes;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind != OpKind::equal) changes.push_back(i);

  diff.text = fmt::format("--- {}\n+++ {}\n", options.before_label, options.after_label);
  std::size_t c = 0;
  while (c < changes.size()) {
    // A hunk spans changes whose gaps of equal lines are at most 2*context (their contexts touch).
    const std::size_t start = changes[c] > static_cast<std::size_t>(context) ? changes[c] - context : 0;
    std::size_t last = changes[c];
    while (c + 1 < changes.size() && changes[c + 1] - last - 1 <= static_cast<std::size_t>(2 * context))
      last = changes[++c];
    ++c;
    const std::size_t end = std::min(ops.size(), last + 1 + static_cast<std::size_t>(context));

    int a_count = 0, b_count = 0;
    for (std::size_t i = start; i < end; ++i) {
      if (ops[i].kind != OpKind::insert) ++a_count;
      if (ops[i].kind != OpKind::remove) ++b_count;
    }
    diff.text += fmt::format("@@ -{} +{} @@\n", range(ops[start].a, a_count), range(ops[start].b, b_count));
    for (std::size_t i = start; i < end; ++i) {
      switch (ops[i].kind) {
        case OpKind::equal: append_line(diff.text, ' ', a[ops[i].a]); break;
        case OpKind::remove: append_line(diff.text, '-', a[ops[i].a]); ++diff.lines_removed; break;
        case OpKind::insert: append_line(diff.text, '+', b[ops[i].b]); ++diff.lines_added; break;
      }
    }
  }
  return diff;
}

}  // namespace cutegen
