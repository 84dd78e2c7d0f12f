#include "common/line_process.h"

#include <gtest/gtest.h>

#include "common/fs.h"

using namespace cutegen;
using namespace std::chrono_literals;

TEST(LineProcess, EchoesLinesBackAndForth) {
  auto p = LineProcess::start({.argv = {"cat"}}, "/dev/null");
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_TRUE(p->write_line("{\"a\": 1}").ok());
  ASSERT_TRUE(p->write_line("second").ok());
  auto l1 = p->read_line(5s);
  auto l2 = p->read_line(5s);
  ASSERT_TRUE(l1.ok() && l2.ok());
  EXPECT_EQ(*l1, "{\"a\": 1}");
  EXPECT_EQ(*l2, "second");
  EXPECT_TRUE(p->running());
}

TEST(LineProcess, ReadTimesOutAndKillsTheChild) {
  auto p = LineProcess::start({.argv = {"sleep", "30"}}, "/dev/null");
  ASSERT_TRUE(p.ok());
  auto t0 = std::chrono::steady_clock::now();
  auto line = p->read_line(200ms);
  EXPECT_FALSE(line.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_FALSE(p->running());
}

TEST(LineProcess, ExitIsReportedAndStderrGoesToTheLogFile) {
  auto dir = make_unique_dir(std::filesystem::temp_directory_path(), "cutegen-lp-");
  ASSERT_TRUE(dir.ok());
  auto log = (*dir / "err.log").string();
  auto p = LineProcess::start({.argv = {"sh", "-c", "echo oops >&2; echo partial"}}, log);
  ASSERT_TRUE(p.ok());
  auto first = p->read_line(5s);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, "partial");
  auto eof = p->read_line(5s);
  ASSERT_FALSE(eof.ok());
  EXPECT_NE(eof.error().message.find("exited"), std::string::npos);
  p->kill();
  auto text = read_file(log);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "oops\n");
  std::filesystem::remove_all(*dir);
}
