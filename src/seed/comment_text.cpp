#include "seed/comment_text.h"

#include <fmt/format.h>

namespace cutegen::seed {

CommentText::CommentText(std::string_view raw) {
  text_.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const auto c = static_cast<unsigned char>(raw[i]);
    if (c < 0x20 || c == 0x7f) {
      text_ += fmt::format("\\x{:02x}", c);
    } else if (c == '\\') {
      text_ += "\\\\";
    } else if (c == '*' && i + 1 < raw.size() && raw[i + 1] == '/') {
      text_ += "*\\/";
      ++i;
    } else {
      text_ += static_cast<char>(c);
    }
  }
}

}  // namespace cutegen::seed
