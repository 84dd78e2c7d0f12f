#include "common/terminal_text.h"

#include <gtest/gtest.h>

#include <cstdio>

using namespace cutegen;

TEST(TerminalSafe, PlainTextAndUnicodePassUnchanged) {
  EXPECT_EQ(terminal_safe("relu.py: 1.23x eager | $0.04"), "relu.py: 1.23x eager | $0.04");
  EXPECT_EQ(terminal_safe("softmax — 95% ✓ 数"), "softmax — 95% ✓ 数");
  EXPECT_EQ(terminal_safe(""), "");
}

TEST(TerminalSafe, EscapeSequencesAreShownNotObeyed) {
  // CSI (clear the screen), OSC 8 (a hyperlink), OSC 52 (write the clipboard), BEL.
  EXPECT_EQ(terminal_safe("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(terminal_safe("\x1b]8;;http://evil/\x07" "click\x1b]8;;\x07"), "\\x1b]8;;http://evil/\\x07click\\x1b]8;;\\x07");
  EXPECT_EQ(terminal_safe("\x1b]52;c;cm0gLXJmIH4=\x07"), "\\x1b]52;c;cm0gLXJmIH4=\\x07");
  EXPECT_EQ(terminal_safe(std::string_view("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(terminal_safe("del\x7f"), "del\\x7f");
}

TEST(TerminalSafe, ACarriageReturnCannotRewriteALine) {
  EXPECT_EQ(terminal_safe("FAIL\rPASS"), "FAIL\\rPASS");
  EXPECT_EQ(terminal_safe("FAIL\rPASS", LineBreaks::keep), "FAIL\\rPASS");
}

TEST(TerminalSafe, LineBreaksAreKeptOnlyWhereTextHasSeveralLines) {
  EXPECT_EQ(terminal_safe("a\nb\tc"), "a\\nb\\tc");
  EXPECT_EQ(terminal_safe("a\nb\tc", LineBreaks::keep), "a\nb\tc");
  EXPECT_EQ(terminal_safe("a\n\x1b[1Ab", LineBreaks::keep), "a\n\\x1b[1Ab");
}

TEST(TerminalSafe, C1ControlsAndBytesThatAreNotUtf8AreEscaped) {
  EXPECT_EQ(terminal_safe("\xc2\x9b" "31m"), "\\u009b31m");   // U+009B, CSI on a UTF-8 terminal
  EXPECT_EQ(terminal_safe("\xc2\x9d" "8;;x"), "\\u009d8;;x");  // U+009D, OSC
  EXPECT_EQ(terminal_safe("\x9b" "31m"), "\\x9b31m");          // the raw C1 byte, for an 8-bit terminal
  EXPECT_EQ(terminal_safe("\xc0\x9b"), "\\xc0\\x9b");           // an overlong form is not UTF-8
  EXPECT_EQ(terminal_safe("\xe2\x82"), "\\xe2\\x82");           // cut short
  EXPECT_EQ(terminal_safe("\xc2\xa0"), "\xc2\xa0");             // U+00A0 is printable
}

TEST(TerminalSafe, PrintSafeEscapesEveryArgumentButKeepsItsOwnLines) {
  char buf[256] = {};
  std::FILE* f = fmemopen(buf, sizeof buf, "w");
  ASSERT_NE(f, nullptr);
  print_safe(f, "task {}: {}\n", "evil\x1b]0;owned\x07", "line one\nline two\r");
  std::fclose(f);
  EXPECT_STREQ(buf, "task evil\\x1b]0;owned\\x07: line one\nline two\\r\n");
}
