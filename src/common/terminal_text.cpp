#include "common/terminal_text.h"

namespace cutegen {
namespace {

// The length of the valid UTF-8 sequence starting at s[i] (overlong forms, surrogates and code
// points above U+10FFFF are invalid), or 0.
size_t utf8_length(std::string_view s, size_t i, char32_t& code_point) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = byte(i);
  size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 ? 2 : 0;
  if (n == 0 || b > 0xF4 || i + n > s.size()) return 0;
  char32_t cp = b & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
    return 0;
  code_point = cp;
  return n;
}

}  // namespace

std::string terminal_safe(std::string_view text, LineBreaks breaks) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c < 0x80) {  // C0 controls and DEL
      if (breaks == LineBreaks::keep && (c == '\n' || c == '\t')) out += static_cast<char>(c);
      else if (c == '\n') out += "\\n";
      else if (c == '\t') out += "\\t";
      else if (c == '\r') out += "\\r";
      else out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    char32_t cp = 0;
    size_t n = utf8_length(text, i, cp);
    if (n == 0) {  // not UTF-8: a lone byte, which a terminal in an 8-bit mode may take for a C1 control
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else if (cp >= 0x80 && cp <= 0x9F) {  // C1 controls (U+009B is CSI, U+009D is OSC)
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace cutegen
