#pragma once
// Text from outside cutegen -- a problem's file name -- written into a generated kernel's comments. A file
// name may hold any byte but '/' and NUL: a newline in it would end the `//` comment and make the rest of
// the name code in the seed (issue 32). CommentText is the one way an emitter gets such text, and its
// constructor is the one place that escapes it, so no emitter can write the raw name.
#include <string>
#include <string_view>

namespace cutegen::seed {

class CommentText {
 public:
  // Control characters (newline, carriage return, tab, escape, DEL, ...) become \xNN; a backslash is doubled,
  // so an escaped name reads back unambiguously and no backslash can end a line and splice the next one into
  // the comment; `*/` becomes `*\/`, so no block comment can be closed by it. Printable text, UTF-8 included,
  // is kept as it is: an ordinary name reads the same.
  explicit CommentText(std::string_view raw);
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

}  // namespace cutegen::seed
