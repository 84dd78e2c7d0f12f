#include "compile/source_rules.h"

#include <cctype>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "compile/source_scan.h"

namespace cutegen {
namespace {

constexpr const char* kAllowedIncludes =
    "include only CUDA toolkit and C/C++ standard headers (<cuda_runtime.h>, <cstdint>, <cuda/...>) and "
    "<cute/...>, <cutlass/...>, <cutegen/...>";

std::vector<std::string> split_path(const std::string& p) {
  std::vector<std::string> parts;
  std::size_t b = 0;
  while (true) {
    std::size_t e = p.find('/', b);
    parts.push_back(p.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) return parts;
    b = e + 1;
  }
}

bool header_like(const std::string& name) {
  auto dot = name.rfind('.');
  if (dot == std::string::npos) return true;  // <vector>, <cuda/std/atomic>
  static const std::set<std::string> ext = {"h", "hpp", "hxx", "hh", "cuh", "inl", "ipp", "tcc", "inc"};
  return ext.count(name.substr(dot + 1)) > 0;
}

std::string trim_line(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::string shorten_snippet(const std::string& s, std::size_t n = 80) {
  return s.size() <= n ? s : s.substr(0, n) + "...";
}

// The header name at `pos` of `text` ("..." or <...>), or nullopt when what follows is not one
// (a macro: a computed include).
std::optional<std::string> header_name_at(const std::string& text, std::size_t pos) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  if (pos >= text.size()) return std::nullopt;
  char open = text[pos];
  char close = open == '<' ? '>' : open == '"' ? '"' : 0;
  if (!close) return std::nullopt;
  std::size_t end = text.find(close, pos + 1);
  if (end == std::string::npos) return std::nullopt;
  return text.substr(pos + 1, end - pos - 1);
}

std::optional<std::string> pragma_problem(const std::string& pragma) {
  static const std::regex refused(
      R"(^\s*((GCC|clang)\s+(dependency|system_header)|include_alias|system_header)\b)");
  if (std::regex_search(pragma, refused))
    return fmt::format("'#pragma {}' changes how files are found or treated; remove it",
                       shorten_snippet(trim_line(pragma), 60));
  return std::nullopt;
}

class Checker {
 public:
  std::vector<CheckViolation> run(const std::string& source) {
    SourceScan scan = scan_source(source);
    for (const auto& line : scan.lines) {
      directive(line);
      tokens(line);
    }
    for (const auto& lit : scan.literals) literal(lit);
    return std::move(out_);
  }

 private:
  void add(const char* code, int line, const std::string& message) {
    std::string text = fmt::format("line {}: {}", line, message);
    if (seen_.insert(text).second) out_.push_back({code, text});
  }

  void include_target(const LogicalLine& l, std::size_t pos, const std::string& what, int line) {
    auto target = header_name_at(l.text, pos);
    if (!target) {
      add("include-computed", line,
          fmt::format("{} with a macro instead of a header name is refused: write the header name, e.g. "
                      "#include <cute/tensor.hpp>", what));
      return;
    }
    if (auto problem = include_problem(*target))
      add("include-not-allowed", line, fmt::format("{} \"{}\": {}", what, shorten_snippet(*target), *problem));
  }

  void directive(const LogicalLine& l) {
    const std::string& c = l.code;
    std::size_t p = c.find_first_not_of(" \t");
    if (p == std::string::npos) return;
    if (c.compare(p, 1, "#") == 0) {
      p += 1;
    } else if (c.compare(p, 2, "%:") == 0) {
      p += 2;
    } else if (c.compare(p, 3, "?\?=") == 0) {
      p += 3;
    } else {
      return;
    }
    while (p < c.size() && (c[p] == ' ' || c[p] == '\t')) ++p;
    std::size_t e = p;
    while (e < c.size() && (std::isalnum(static_cast<unsigned char>(c[e])) || c[e] == '_')) ++e;
    std::string name = c.substr(p, e - p);
    int line = l.line_at(c.find_first_not_of(" \t"));
    if (name.empty()) return;
    if (std::isdigit(static_cast<unsigned char>(name[0]))) {
      add("line-directive", line,
          "GNU linemarkers ('# <number> \"file\"') are refused: they would rename the code in diagnostics and "
          "line tables; remove the line");
    } else if (name == "line") {
      add("line-directive", line,
          "#line directives are refused: they would falsify diagnostics and device line tables; remove them");
    } else if (name == "include") {
      include_target(l, e, "#include", line);
    } else if (name == "include_next" || name == "import") {
      add("include-not-allowed", line, fmt::format("#{} is refused: use #include with an allowed header", name));
    } else if (name == "embed") {
      add("embed", line, "#embed is refused: the kernel may not read files at compile time");
    } else if (name == "pragma") {
      if (auto problem = pragma_problem(l.text.substr(e))) add("pragma-not-allowed", line, *problem);
    }
  }

  void tokens(const LogicalLine& l) {
    const std::string& c = l.code;
    static const std::regex has_include(R"(\b__has_include(_next)?\s*\()");
    static const std::regex has_embed(R"(\b__has_embed\b)");
    static const std::regex pragma_op(R"(\b_Pragma\s*\(\s*)");
    static const std::regex clock(R"(\b(__DATE__|__TIME__|__TIMESTAMP__)\b)");
    static const std::regex exit_handler(
        R"(\b(atexit|at_quick_exit|on_exit|__cxa_atexit|__cxa_thread_atexit|__cxa_thread_atexit_impl)\b)");
    static const std::regex gnu_attr(R"(\b__attribute(__)?\s*\(\s*\()");
    static const std::regex load_time(R"(\b_*(constructor|destructor)_*\b)");
    static const std::regex asm_reads(R"(\.\s*(incbin|include)\b)");
    static const std::regex init_section(R"(\b(preinit_array|init_array|fini_array)\b|\.(ctors|dtors)\b)");
    for (std::sregex_iterator it(c.begin(), c.end(), has_include), end; it != end; ++it) {
      auto pos = static_cast<std::size_t>(it->position() + it->length());
      include_target(l, pos, "__has_include", l.line_at(static_cast<std::size_t>(it->position())));
    }
    for (std::sregex_iterator it(c.begin(), c.end(), has_embed), end; it != end; ++it)
      add("embed", l.line_at(static_cast<std::size_t>(it->position())),
          "__has_embed is refused: the kernel may not read files at compile time");
    for (std::sregex_iterator it(c.begin(), c.end(), pragma_op), end; it != end; ++it) {
      auto pos = static_cast<std::size_t>(it->position() + it->length());
      std::size_t q = pos;
      while (q < c.size() && std::isalnum(static_cast<unsigned char>(c[q]))) ++q;  // L"", u8"" prefixes
      if (q >= l.text.size() || l.text[q] != '"') {
        add("pragma-not-allowed", l.line_at(pos),
            "_Pragma with a computed argument is refused: write '#pragma ...' or _Pragma(\"...\") directly");
        continue;
      }
      std::size_t close = q + 1;
      while (close < l.text.size() && l.text[close] != '"') close += l.text[close] == '\\' ? 2 : 1;
      std::string arg = l.text.substr(q + 1, std::min(close, l.text.size()) - q - 1);
      std::string unescaped;
      for (std::size_t k = 0; k < arg.size(); ++k) unescaped += (arg[k] == '\\' && k + 1 < arg.size()) ? arg[++k] : arg[k];
      if (auto problem = pragma_problem(unescaped)) add("pragma-not-allowed", l.line_at(pos), *problem);
    }
    for (std::sregex_iterator it(c.begin(), c.end(), clock), end; it != end; ++it)
      add("nondeterministic-build", l.line_at(static_cast<std::size_t>(it->position())),
          fmt::format("{} is refused: the build must not depend on the time it runs", it->str()));
    for (std::sregex_iterator it(c.begin(), c.end(), exit_handler), end; it != end; ++it)
      add("load-time-code", l.line_at(static_cast<std::size_t>(it->position())),
          fmt::format("{} registers host code to run at exit, which the contract forbids: do all work inside "
                      "cutegen_forward", it->str()));
    // GNU and standard attributes: constructor/destructor and section placement are host code that runs
    // when the library is loaded or unloaded.
    auto check_attribute = [&](std::size_t from, std::size_t to) {
      std::string body = c.substr(from, to - from);
      std::smatch m;
      if (std::regex_search(body, m, load_time))
        add("load-time-code", l.line_at(from),
            fmt::format("the '{}' attribute runs host code when the library is loaded or unloaded, which the "
                        "contract forbids: do all work inside cutegen_forward", m[1].str()));
    };
    for (std::sregex_iterator it(c.begin(), c.end(), gnu_attr), end; it != end; ++it) {
      auto open = static_cast<std::size_t>(it->position() + it->length());
      check_attribute(open, balanced_end(c, open - 1, '(', ')'));
    }
    for (std::size_t p = c.find("[["); p != std::string::npos; p = c.find("[[", p + 2))
      check_attribute(p + 2, balanced_end(c, p, '[', ']'));
    std::smatch m;
    for (const std::string* s : {&l.code, &l.text}) {
      if (std::regex_search(*s, m, asm_reads))
        add("asm-reads-file", l.line_at(static_cast<std::size_t>(m.position())),
            fmt::format("the assembler directive '.{}' reads a file at compile time and is refused; remove it",
                        m[1].str()));
      if (std::regex_search(*s, m, init_section))
        add("load-time-code", l.line_at(static_cast<std::size_t>(m.position())),
            "placing code or data in .init_array/.fini_array/.ctors/.dtors runs host code when the library is "
            "loaded or unloaded, which the contract forbids: do all work inside cutegen_forward");
    }
  }

  // Literals may hold assembler text or section names (asm(".incbin ..."), section(".init_array")).
  void literal(const Literal& lit) {
    static const std::regex init_like(R"(^\s*\.(init|fini)\b)");
    std::smatch m;
    if (std::regex_search(lit.contents, m, init_like))
      add("load-time-code", lit.line,
          fmt::format("the section name '.{}' places code that runs when the library is loaded or unloaded; "
                      "remove it", m[1].str()));
  }

  // Index just past the bracket matching the one at `open` (or the end of the text).
  static std::size_t balanced_end(const std::string& s, std::size_t open, char o, char cl) {
    int depth = 0;
    for (std::size_t i = open; i < s.size(); ++i) {
      if (s[i] == o) ++depth;
      if (s[i] == cl && --depth == 0) return i;
    }
    return s.size();
  }

  std::vector<CheckViolation> out_;
  std::set<std::string> seen_;
};

}  // namespace

std::optional<std::string> include_problem(const std::string& target) {
  if (target.empty()) return std::string("an empty header name; ") + kAllowedIncludes;
  if (target.front() == '/' || target.front() == '~')
    return std::string("absolute paths are refused; ") + kAllowedIncludes;
  if (target.find('\\') != std::string::npos) return std::string("backslashes are refused; ") + kAllowedIncludes;
  static const std::regex component(R"([A-Za-z0-9_+.-]+)");
  auto parts = split_path(target);
  for (const auto& part : parts) {
    if (part == "..") return std::string("'..' in a header path is refused; ") + kAllowedIncludes;
    if (part == "." || !std::regex_match(part, component))
      return std::string("not a plain header path; ") + kAllowedIncludes;
  }
  if (!header_like(parts.back()))
    return std::string("not a header file (allowed: no extension or .h, .hpp, .cuh, .inl ...); ") + kAllowedIncludes;
  if (parts.size() == 1) return std::nullopt;
  static const std::set<std::string> roots = {"cute", "cutlass", "cutegen",     "cuda",  "cub", "thrust", "nv",
                                              "cooperative_groups", "crt", "sys", "bits", "ext", "experimental"};
  if (roots.count(parts.front())) return std::nullopt;
  return fmt::format("'{}/' is not an allowed header root; {}", parts.front(), kAllowedIncludes);
}

std::vector<CheckViolation> check_source_rules(const std::string& source) { return Checker().run(source); }

}  // namespace cutegen
