#include "compile/diagnostics.h"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

namespace cutegen {
namespace {

struct Frame {
  std::string name;
  int line = 0;
  std::string file;  // empty: same file as the error's own position (EDG's convention)
};

struct RawEntry {
  std::string severity;  // "error", "warning", ...
  std::string tool;      // "" for the front end, "ptxas", "nvlink", "nvcc"
  std::string file;
  int line = 0;
  std::string message;
  std::vector<std::string> details;
  std::vector<Frame> frames;  // innermost first, as EDG prints them
};

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

std::string trim_spaces(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::string shorten_message(const std::string& s, std::size_t max_chars = 200) {
  if (s.size() <= max_chars) return s;
  return s.substr(0, max_chars) + " ...";
}

// Drops EDG's " [with T=..., U=...]" blocks: they restate template arguments at great length.
std::string strip_with_blocks(const std::string& s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (s.compare(i, 7, " [with ") == 0) {
      int depth = 0;
      std::size_t j = i + 1;
      for (; j < s.size(); ++j) {
        if (s[j] == '[') ++depth;
        if (s[j] == ']' && --depth == 0) break;
      }
      i = j + 1;
      continue;
    }
    out += s[i++];
  }
  return out;
}

// "auto cute::local_partition(Tensor &&, ...) [with ...]" -> "cute::local_partition"
std::string function_name(std::string sig) {
  sig = strip_with_blocks(sig);
  for (const char* prefix : {"decltype(auto) ", "class ", "struct "}) {
    if (sig.rfind(prefix, 0) == 0) sig = sig.substr(std::char_traits<char>::length(prefix));
  }
  auto paren = sig.find("(");
  // operator() has its own parenthesis first
  auto op = sig.find("operator()");
  if (op != std::string::npos) paren = op + 10;
  std::string head = sig.substr(0, paren);
  // Drop template argument lists, keeping the name they belong to.
  std::string no_templates;
  int depth = 0;
  for (char c : head) {
    if (c == '<') ++depth;
    else if (c == '>') depth = std::max(0, depth - 1);
    else if (depth == 0) no_templates += c;
  }
  auto space = no_templates.find_last_of(' ');
  return trim_spaces(space == std::string::npos ? no_templates : no_templates.substr(space + 1));
}

// "/abs/path/include/cute/layout.hpp" -> "cute/layout.hpp"; other paths keep their last two parts.
std::string short_path(const std::string& path) {
  auto inc = path.rfind("/include/");
  if (inc != std::string::npos) return path.substr(inc + 9);
  auto last = path.rfind('/');
  if (last == std::string::npos) return path;
  auto prev = path.rfind('/', last - 1);
  return prev == std::string::npos ? path : path.substr(prev + 1);
}

bool is_detail_line(const std::string& t) {
  static const char* prefixes[] = {"argument types are", "object type is", "operand types are",
                                   "the current object", "both operands"};
  for (const char* p : prefixes)
    if (t.rfind(p, 0) == 0) return true;
  return false;
}

std::vector<RawEntry> parse(const std::string& log) {
  static const std::regex edg(R"(^(.+?)\((\d+)\): (catastrophic error|error|warning|remark|note)(?: #[\w-]+)?: (.*)$)");
  static const std::regex gcc(R"(^(.+?):(\d+):(?:\d+:)? (fatal error|error|warning|note): (.*)$)");
  static const std::regex tool(R"(^(ptxas|nvlink|nvcc|fatbinary)\s*(fatal|error|warning)\s*: (.*)$)");
  static const std::regex frame(R"((?:detected during(?::)?\s*)?(.*) at line (\d+)(?: of (.+))?$)");
  std::vector<RawEntry> entries;
  bool in_chain = false;
  for (const auto& line : split_lines(log)) {
    std::smatch m;
    if (std::regex_match(line, m, tool)) {
      entries.push_back({m[2].str() == "warning" ? "warning" : "error", m[1].str(), "", 0, m[3].str(), {}, {}});
      in_chain = false;
      continue;
    }
    if (!line.empty() && line[0] != ' ' &&
        (std::regex_match(line, m, edg) || std::regex_match(line, m, gcc))) {
      // A note (e.g. "candidate function template ... failed deduction") belongs to the error before it,
      // and so does the instantiation chain printed after the notes.
      if (m[3].str() == "note" && !entries.empty()) continue;
      entries.push_back({m[3].str() == "fatal error" || m[3].str() == "catastrophic error" ? "error" : m[3].str(), "",
                         m[1].str(), std::stoi(m[2].str()), m[4].str(), {}, {}});
      in_chain = false;
      continue;
    }
    if (entries.empty()) continue;
    std::string t = trim_spaces(line);
    if (t.rfind("detected during", 0) == 0) in_chain = true;
    if (in_chain && std::regex_search(t, m, frame) && t.find(" at line ") != std::string::npos) {
      entries.back().frames.push_back({function_name(m[1].str().substr(m[1].str().find('"') == std::string::npos
                                                                            ? 0
                                                                            : m[1].str().find('"') + 1)),
                                       std::stoi(m[2].str()), m[3].matched ? trim_spaces(m[3].str()) : ""});
      continue;
    }
    if (is_detail_line(t)) entries.back().details.push_back(shorten_message(strip_with_blocks(t)));
  }
  return entries;
}

bool same_file(const std::string& a, const std::string& candidate) {
  if (a == candidate) return true;
  // nvcc may print "./name.cu" or an absolute path ending in the name.
  return a.size() > candidate.size() && a.compare(a.size() - candidate.size(), candidate.size(), candidate) == 0 &&
         a[a.size() - candidate.size() - 1] == '/';
}

std::string source_line(const std::vector<std::string>& src, int line) {
  if (line <= 0 || line > static_cast<int>(src.size())) return "";
  return src[static_cast<std::size_t>(line - 1)];
}

}  // namespace

std::vector<std::string> performance_warnings(const std::string& log) {
  static const std::regex warning(R"(^ptxas\s+(?:info|warning)\s*:\s*(\(C\d+\) Potential Performance Loss: .*?)\s*$)");
  static const std::regex mangled(R"((_Z\w{58})\w+)");
  std::vector<std::string> out;
  for (const auto& line : split_lines(log)) {
    std::smatch m;
    if (!std::regex_match(line, m, warning)) continue;
    std::string text = std::regex_replace(m[1].str(), mangled, "$1...");
    if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(std::move(text));
  }
  return out;
}

CondensedDiagnostic condense_nvcc_log(const std::string& log, const std::string& candidate_name,
                                      const std::string& source, int max_errors) {
  CondensedDiagnostic out;
  auto entries = parse(log);
  std::map<int, std::size_t> by_line;  // candidate line -> index in out.errors
  std::vector<DiagnosticError> all;
  std::map<std::string, bool> seen_messages;
  for (const auto& e : entries) {
    if (e.severity != "error") continue;
    ++out.total_errors;
    DiagnosticError d;
    d.message = shorten_message(strip_with_blocks(e.message), 240);
    d.details = e.details;
    if (!e.tool.empty()) {
      d.message = e.tool + ": " + d.message;
    } else if (same_file(e.file, candidate_name)) {
      d.candidate_line = e.line;
    } else {
      d.origin = fmt::format("{}:{}", short_path(e.file), e.line);
      // The innermost frame in the candidate is where the candidate's code led into the header.
      for (std::size_t i = 0; i < e.frames.size(); ++i) {
        const auto& f = e.frames[i];
        const std::string& file = f.file.empty() ? e.file : f.file;
        if (same_file(file, candidate_name)) {
          d.candidate_line = f.line;
          for (std::size_t j = i + 1; j-- > 0;) {
            const auto& name = e.frames[j].name;
            if (d.via.size() < 5 && !name.empty() && (d.via.empty() || d.via.back() != name)) d.via.push_back(name);
          }
          break;
        }
      }
    }
    if (d.candidate_line > 0) {
      auto it = by_line.find(d.candidate_line);
      if (it != by_line.end()) {
        ++all[it->second].follow_on;
        continue;
      }
      by_line[d.candidate_line] = all.size();
    } else {
      if (seen_messages[d.message]) continue;
      seen_messages[d.message] = true;
    }
    all.push_back(std::move(d));
  }
  out.distinct_errors = static_cast<int>(all.size());
  for (std::size_t i = 0; i < all.size() && static_cast<int>(i) < max_errors; ++i) out.errors.push_back(all[i]);

  auto src = split_lines(source);
  std::string text;
  if (out.errors.empty()) {
    auto lines = split_lines(log);
    std::size_t from = lines.size() > 20 ? lines.size() - 20 : 0;
    text = "compiler output not recognised; its last lines:\n";
    for (std::size_t i = from; i < lines.size(); ++i) text += "  " + shorten_message(lines[i]) + "\n";
    out.text = text;
    return out;
  }
  text = fmt::format("{} error{} in {} distinct place{}{}:\n", out.total_errors, out.total_errors == 1 ? "" : "s",
                     out.distinct_errors, out.distinct_errors == 1 ? "" : "s",
                     out.distinct_errors > static_cast<int>(out.errors.size())
                         ? fmt::format(" (first {} shown)", out.errors.size())
                         : "");
  int n = 0;
  for (const auto& d : out.errors) {
    ++n;
    std::string where = d.candidate_line > 0 ? fmt::format("{}:{}: ", candidate_name, d.candidate_line) : "";
    text += fmt::format("[{}] {}{}{}\n", n, where, d.message, d.origin.empty() ? "" : "  (raised in " + d.origin + ")");
    for (std::size_t i = 0; i < d.details.size() && i < 2; ++i) text += "    " + d.details[i] + "\n";
    if (d.candidate_line > 0) {
      std::string code = source_line(src, d.candidate_line);
      if (!code.empty()) text += fmt::format("  {:>5} | {}\n", d.candidate_line, shorten_message(code, 160));
    }
    if (!d.via.empty()) {
      std::string chain;
      for (const auto& v : d.via) chain += (chain.empty() ? "" : " -> ") + v;
      text += "    via " + chain + "\n";
    }
    if (d.follow_on > 0) text += fmt::format("    (+{} follow-on error{} from this line)\n", d.follow_on, d.follow_on == 1 ? "" : "s");
  }
  out.text = text;
  return out;
}

}  // namespace cutegen

namespace cutegen {
namespace {

namespace fs = std::filesystem;

bool under_any(const fs::path& p, const std::vector<fs::path>& roots) {
  for (const auto& root : roots) {
    auto rel = p.lexically_relative(root);
    if (!rel.empty() && *rel.begin() != ".." && rel != ".") return true;
  }
  return false;
}

// The candidate by the name nvcc was given, or a file beneath a root both as written and once its
// symbolic links are resolved (a link beneath a root may lead anywhere).
class Quotable {
 public:
  explicit Quotable(const QuotableFiles& q) : candidate_(q.candidate) {
    for (const auto& root : q.roots) {
      lexical_.push_back(root.lexically_normal());
      std::error_code ec;
      auto real = fs::weakly_canonical(root, ec);
      resolved_.push_back(ec ? lexical_.back() : real);
    }
  }
  bool operator()(const std::string& path) {
    if (path == candidate_ || path == "./" + candidate_) return true;
    // A CuTe error names the same headers hundreds of times: resolve each once.
    auto [it, fresh] = known_.try_emplace(path, false);
    if (fresh) it->second = decide(path);
    return it->second;
  }

 private:
  bool decide(const std::string& path) const {
    fs::path p(path);
    if (!p.is_absolute()) return false;
    p = p.lexically_normal();
    if (!under_any(p, lexical_)) return false;
    std::error_code ec;
    auto real = fs::weakly_canonical(p, ec);
    return !ec && under_any(real, resolved_);
  }

  std::string candidate_;
  std::vector<fs::path> lexical_, resolved_;
  std::map<std::string, bool> known_;
};

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The file a report line names, from where it says it comes from, whatever the words after that:
// "path(12): ..." (EDG), "path:12: ..." and "path:12:3: ..." (GCC, GNU as, ld's scripts: "Error:",
// "Warning:", "Info:", ...), "In file included from path:12," and "path: In function ...",
// "path: At global scope:", "path: Assembler messages:". The shortest such prefix of the line counts:
// text after a location is the tool's, and a longer path would have to be a real directory named
// like "candidate.cu:5: x". Parsed by hand: template instantiation lines run to many kilobytes, where
// backtracking regexes are slow or overflow the stack.
std::optional<std::string> report_path(std::string_view l) {
  std::string_view rest = l;
  constexpr std::string_view kIncluded = "In file included from ";
  if (rest.substr(0, kIncluded.size()) == kIncluded) rest.remove_prefix(kIncluded.size());
  std::optional<std::size_t> end;  // where the path ends
  // One pass (a line of a million parentheses must not take quadratic time): "(digits)" holds no '('.
  for (std::size_t i = 0, open = std::string_view::npos; i < rest.size(); ++i) {
    if (rest[i] == '(') open = i;
    if (rest[i] != ')' || open == std::string_view::npos) continue;
    if (open > 0 && all_digits(rest.substr(open + 1, i - open - 1)) && rest.substr(i + 1, 1) == ":") {
      end = open;
      break;
    }
    open = std::string_view::npos;
  }
  for (std::size_t c = rest.find(':'); c != std::string_view::npos && c > 0 && (!end || c < *end);
       c = rest.find(':', c + 1)) {
    std::size_t d = c + 1;
    while (d < rest.size() && rest[d] >= '0' && rest[d] <= '9') ++d;
    if (d > c + 1 && (d == rest.size() || rest[d] == ':' || rest[d] == ',')) {
      end = c;
      break;
    }
  }
  if (!end) {
    for (std::string_view marker : {": In ", ": At global scope", ": At top level", ": Assembler messages:"}) {
      std::size_t p = rest.find(marker);
      if (p != std::string_view::npos && p > 0 && (!end || p < *end)) end = p;
    }
  }
  if (!end) return std::nullopt;
  return std::string(rest.substr(0, *end));
}

// EDG's instantiation chain: "... at line 12 of path" -> path.
std::optional<std::string> chain_location(std::string_view l) {
  std::size_t p = l.rfind(" at line ");
  if (p == std::string_view::npos) return std::nullopt;
  std::size_t of = l.find(" of ", p + 9);
  if (of == std::string_view::npos || !all_digits(l.substr(p + 9, of - p - 9))) return std::nullopt;
  return std::string(l.substr(of + 4));
}

}  // namespace

std::string redact_nvcc_log(const std::string& log, const QuotableFiles& quotable_files) {
  Quotable quotable(quotable_files);
  std::string out;
  std::string last_replacement;  // a run of hidden reports from one file becomes one line
  auto hide = [&](std::string replacement) {
    if (replacement != last_replacement) out += replacement + "\n";
    last_replacement = std::move(replacement);
  };
  auto keep = [&](const std::string& line) {
    last_replacement.clear();
    out += line + "\n";
  };
  bool hiding = false;  // inside the quoted context of a hidden report
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    // A report's quoted source, caret and instantiation chain are indented below it.
    if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) {
      if (hiding) continue;
      if (auto file = chain_location(line); file && !quotable(*file))
        hide(fmt::format("    (text from {} not shown)", *file));
      else
        keep(line);
      continue;
    }
    // Blank lines between hidden reports would count them.
    if (line.empty() && !last_replacement.empty()) {
      hiding = false;
      continue;
    }
    auto file = report_path(line);
    hiding = file && !quotable(*file);
    // Neither the text nor the line number: which lines a tool complains about tells about the file too.
    if (hiding) hide(fmt::format("{}: (text from {} not shown)", *file, *file));
    else keep(line);
  }
  return out;
}

}  // namespace cutegen
