#include "compile/source_scan.h"

#include <cctype>

namespace cutegen {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Phase 1 as GCC's preprocessor (which preprocesses both sides of a .cu for nvcc) reads it: a UTF-8
// byte-order mark at the start is skipped; "\r\n" and a lone "\r" end a line; form feed, vertical
// tab and NUL are blanks like space and tab — also before a '#' and between '#' and a directive's
// name. Read any other way, "\f#line 1 \"cute/tensor.hpp\"" or "x;\r#include </etc/passwd>" was no
// directive to the rules and a real one to nvcc (attacks/cute_only/cute_line_formfeed.cu).
std::string normalise_phase1(const std::string& src) {
  std::string out;
  out.reserve(src.size());
  std::size_t i = src.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  for (; i < src.size(); ++i) {
    char c = src[i];
    if (c == '\r') {
      if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
      out += '\n';
    } else if (c == '\f' || c == '\v' || c == '\0') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// Phase 2: removes backslash-newline (tolerating trailing blanks, as GCC does), keeping each
// remaining character's physical line. Expects normalise_phase1's output.
void splice(const std::string& src, std::string& out, std::vector<int>& lines) {
  int line = 1;
  for (std::size_t i = 0; i < src.size(); ++i) {
    char c = src[i];
    if (c == '\\') {
      std::size_t j = i + 1;
      while (j < src.size() && (src[j] == ' ' || src[j] == '\t')) ++j;
      if (j < src.size() && src[j] == '\n') {
        ++line;
        i = j;
        continue;
      }
    }
    out += c;
    lines.push_back(line);
    if (c == '\n') ++line;
  }
}

class Scanner {
 public:
  Scanner(const std::string& text, const std::vector<int>& lines) : s_(text), ln_(lines) {}

  SourceScan run() {
    while (i_ < s_.size()) step();
    end_line();
    return std::move(out_);
  }

 private:
  void put(char c, bool literal) {
    cur_.text += c;
    cur_.code += literal ? ' ' : c;
    cur_.line_of.push_back(ln_[i_ < ln_.size() ? i_ : ln_.size() - 1]);
  }
  void end_line() {
    if (!cur_.text.empty()) out_.lines.push_back(std::move(cur_));
    cur_ = {};
  }
  bool at(std::size_t k, const char* lit) const { return s_.compare(k, std::char_traits<char>::length(lit), lit) == 0; }

  // The identifier that ends just before `quote` in the current line, e.g. "u8R" for u8R"(...)".
  std::string prefix_before() const {
    const std::string& code = cur_.code;
    std::size_t b = code.size();
    while (b > 0 && ident_char(code[b - 1])) --b;
    return code.substr(b);
  }

  void step() {
    char c = s_[i_];
    if (c == '\n') {
      end_line();
      ++i_;
      return;
    }
    if (at(i_, "//")) {
      while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      put(' ', false);
      return;
    }
    if (at(i_, "/*")) {
      std::size_t close = s_.find("*/", i_ + 2);
      std::size_t end = close == std::string::npos ? s_.size() : close + 2;
      put(' ', false);
      i_ = end;
      return;
    }
    if (c == '"') {
      std::string prefix = prefix_before();
      if (!prefix.empty() && prefix.back() == 'R' &&
          (prefix == "R" || prefix == "u8R" || prefix == "uR" || prefix == "UR" || prefix == "LR")) {
        raw_string();
      } else {
        quoted('"');
      }
      return;
    }
    if (c == '\'') {
      // A digit separator (1'000'000) is not a character literal.
      std::string word = prefix_before();
      if (!word.empty() && std::isdigit(static_cast<unsigned char>(word.front()))) {
        put(c, false);
        ++i_;
        return;
      }
      quoted('\'');
      return;
    }
    put(c, false);
    ++i_;
  }

  void quoted(char q) {
    std::size_t start = i_;
    put(q, false);
    ++i_;
    std::string contents;
    while (i_ < s_.size() && s_[i_] != q && s_[i_] != '\n') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] != '\n') {
        contents += s_[i_];
        put(s_[i_++], true);
      }
      contents += s_[i_];
      put(s_[i_++], true);
    }
    if (i_ < s_.size() && s_[i_] == q) {
      put(q, false);
      ++i_;
    }
    if (q == '"') out_.literals.push_back({ln_[start], contents});
  }

  // R"delim( ... )delim": may span lines; nothing inside is a comment, directive or escape.
  void raw_string() {
    std::size_t start = i_;
    std::size_t open = s_.find('(', i_ + 1);
    if (open == std::string::npos || open - i_ - 1 > 16) {  // not a raw string after all
      quoted('"');
      return;
    }
    std::string delim = s_.substr(i_ + 1, open - i_ - 1);
    std::string close = ")" + delim + "\"";
    std::size_t end = s_.find(close, open + 1);
    std::size_t stop = end == std::string::npos ? s_.size() : end + close.size();
    std::string contents = s_.substr(open + 1, (end == std::string::npos ? s_.size() : end) - open - 1);
    for (; i_ < stop; ++i_) {
      bool inside = i_ > open && (end == std::string::npos || i_ < end);
      put(s_[i_] == '\n' ? ' ' : s_[i_], inside);
    }
    out_.literals.push_back({ln_[start], contents});
  }

  const std::string& s_;
  const std::vector<int>& ln_;
  std::size_t i_ = 0;
  LogicalLine cur_;
  SourceScan out_;
};

}  // namespace

SourceScan scan_source(const std::string& source) {
  std::string text;
  std::vector<int> lines;
  splice(normalise_phase1(source), text, lines);
  if (text.empty()) return {};
  return Scanner(text, lines).run();
}

}  // namespace cutegen
