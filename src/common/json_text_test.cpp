#include "common/json_text.h"

#include <gtest/gtest.h>

namespace cutegen {
namespace {

TEST(JsonText, InvalidUtf8BecomesReplacementCharacterInsteadOfThrowing) {
  nlohmann::json j = {{"log", std::string("bad byte \xff here")}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // why dump_json exists
  std::string text = dump_json(j);
  EXPECT_NE(text.find("\xEF\xBF\xBD"), std::string::npos) << text;  // U+FFFD
  EXPECT_EQ(nlohmann::json::parse(text)["log"].get<std::string>(), "bad byte \xEF\xBF\xBD here");
}

TEST(JsonText, ValidTextIsWrittenAsPlainDumpWouldWriteIt) {
  nlohmann::json j = {{"a", "ok \xE2\x86\x92 arrow"}, {"n", 3}};
  EXPECT_EQ(dump_json(j), j.dump());
  EXPECT_EQ(dump_json(j, 2), j.dump(2));
}

TEST(JsonText, ClipNeverSplitsAMultiByteCharacter) {
  EXPECT_EQ(clip_utf8("short", 10), "short");
  // "ab→c": the arrow is 3 bytes (positions 2..4). Cutting at 4 bytes + "..." would split it.
  std::string s = "ab\xE2\x86\x92" "cdefgh";
  std::string clipped = clip_utf8(s, 7);  // room for 4 bytes, then "..."
  EXPECT_EQ(clipped, "ab...");
  EXPECT_NO_THROW((void)nlohmann::json(clipped).dump());
  EXPECT_EQ(clip_utf8("abcdefghij", 8), "abcde...");
  EXPECT_EQ(clip_utf8("\xE2\x86\x92\xE2\x86\x92\xE2\x86\x92", 8), "\xE2\x86\x92...");
}

TEST(JsonText, FirstLineStopsAtTheNewlineAndClips) {
  EXPECT_EQ(first_line("one\ntwo"), "one");
  EXPECT_EQ(first_line("only"), "only");
  EXPECT_EQ(first_line(""), "");
  EXPECT_EQ(first_line("abcdefghij\nk", 8), "abcde...");
  EXPECT_EQ(first_line("\xE2\x86\x92\xE2\x86\x92\xE2\x86\x92\nx", 8), "\xE2\x86\x92...");
}

}  // namespace
}  // namespace cutegen
