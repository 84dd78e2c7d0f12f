#pragma once
// Text from outside cutegen (a server's reply, an LLM's answer, a file name, a kernel's output) made
// safe to show on a terminal. A terminal obeys control characters wherever they come from: ESC starts
// sequences that move the cursor, rewrite lines, set the window title, make hyperlinks (OSC 8) or
// write the clipboard (OSC 52); CR returns to the start of a line so later text hides earlier text;
// C1 code points (U+0080..U+009F, and the same bytes outside UTF-8) act as ESC-sequences on their
// own on some terminals. Each such character is shown as a visible escape (`\x1b`, `\r`, `\u009b`),
// so what a user reads is what was sent, and nothing sent can change what else they read.
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace cutegen {

enum class LineBreaks {
  escape,  // one line: a name or a table cell (\n and \t are escaped too, so nothing fakes a line)
  keep,    // a message or document of several lines: \n and \t pass, every other control is escaped
};

// `text` with every C0 control (but \n and \t when `breaks` is keep), DEL, C1 code point and byte
// that is not valid UTF-8 written as a visible escape. Valid UTF-8 text otherwise passes unchanged.
std::string terminal_safe(std::string_view text, LineBreaks breaks = LineBreaks::escape);

// fmt::print for output that quotes outside text: the whole formatted text goes through
// terminal_safe(..., LineBreaks::keep). cutegen's own lines hold no control characters but \n.
template <typename... Args>
void print_safe(std::FILE* out, fmt::format_string<Args...> format, Args&&... args) {
  std::string text = terminal_safe(fmt::format(format, std::forward<Args>(args)...), LineBreaks::keep);
  std::fwrite(text.data(), 1, text.size(), out);
}

}  // namespace cutegen
