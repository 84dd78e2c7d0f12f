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
  EXPECT_EQ(eof.error().message, "the process exited with status 0");
  p->kill();
  auto text = read_file(log);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "oops\n");
  std::filesystem::remove_all(*dir);
}

// A worker the kernel's out-of-memory killer ends (cutegen prompt on a KernelBench-size problem on a laptop)
// left only "the process exited" and an empty log: the signal, and what usually sends it, are the message.
TEST(LineProcess, AKilledChildIsNamedWithItsSignal) {
  auto p = LineProcess::start({.argv = {"sh", "-c", "echo ready; read line; kill -9 $$"}}, "/dev/null");
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(*p->read_line(5s), "ready");
  ASSERT_TRUE(p->write_line("go").ok());
  auto eof = p->read_line(5s);
  ASSERT_FALSE(eof.ok());
  EXPECT_NE(eof.error().message.find("the process was killed by signal 9 (SIGKILL)"), std::string::npos)
      << eof.error().message;
  EXPECT_NE(eof.error().message.find("out-of-memory killer"), std::string::npos) << eof.error().message;
  EXPECT_FALSE(p->running());
  p->kill();  // nothing left to kill: no error, no wait

  auto failed = LineProcess::start({.argv = {"sh", "-c", "exit 3"}}, "/dev/null");
  ASSERT_TRUE(failed.ok());
  auto gone = failed->read_line(5s);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().message, "the process exited with status 3");
}
