#include "common/process.h"

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

using namespace cutegen;
using namespace std::chrono_literals;

TEST(PosixProcessRunner, CapturesStdoutStderrAndExitCode) {
  PosixProcessRunner r;
  auto res = r.run({.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"}});
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->out, "out\n");
  EXPECT_EQ(res->err, "err\n");
  EXPECT_EQ(res->exit_code, 3);
  EXPECT_FALSE(res->succeeded());
  EXPECT_EQ(res->describe_end(), "exit code 3");
}

TEST(PosixProcessRunner, FeedsStdinLargerThanAPipeBuffer) {
  PosixProcessRunner r;
  std::string big(1 << 20, 'x');
  auto res = r.run({.argv = {"wc", "-c"}, .stdin_data = big});
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(std::stoul(res->out), big.size());
}

TEST(PosixProcessRunner, TimeoutKillsTheWholeProcessGroup) {
  PosixProcessRunner r;
  // The grandchild holds stdout open; without a group kill we would wait for it for 30 s.
  auto res = r.run({.argv = {"sh", "-c", "sleep 30 & sleep 30"}, .timeout = 300ms});
  ASSERT_TRUE(res.ok());
  EXPECT_TRUE(res->timed_out);
  EXPECT_LT(res->wall_seconds, 5.0);
  EXPECT_NE(res->describe_end().find("timed out"), std::string::npos);
}

TEST(PosixProcessRunner, TimeoutAppliesAfterTheChildClosesItsOutput) {
  PosixProcessRunner r;
  auto res = r.run({.argv = {"sh", "-c", "exec >&- 2>&-; sleep 30"}, .timeout = 300ms});
  ASSERT_TRUE(res.ok());
  EXPECT_TRUE(res->timed_out);
  EXPECT_LT(res->wall_seconds, 5.0);
}

TEST(PosixProcessRunner, AStopRequestedFromAnotherThreadKillsTheWholeGroup) {
  PosixProcessRunner r;
  for (const char* script : {"sleep 30 & sleep 30", "exec >&- 2>&-; sleep 30"}) {  // with and without its output open
    std::stop_source stop;
    std::thread later([&] {
      std::this_thread::sleep_for(200ms);
      stop.request_stop();
    });
    auto res = r.run({.argv = {"sh", "-c", script}, .timeout = 60s, .stop = stop.get_token()});
    later.join();
    ASSERT_TRUE(res.ok());
    EXPECT_TRUE(res->cancelled) << script;
    EXPECT_FALSE(res->timed_out);
    EXPECT_FALSE(res->succeeded());
    EXPECT_LT(res->wall_seconds, 5.0);
    EXPECT_NE(res->describe_end().find("no longer needed"), std::string::npos);
  }
}

TEST(PosixProcessRunner, AStopNeverRequestedChangesNothing) {
  PosixProcessRunner r;
  std::stop_source stop;
  auto res = r.run({.argv = {"sh", "-c", "sleep 0.1; echo done"}, .stop = stop.get_token()});
  ASSERT_TRUE(res.ok());
  EXPECT_TRUE(res->succeeded());
  EXPECT_FALSE(res->cancelled);
  EXPECT_EQ(res->out, "done\n");
}

TEST(PosixProcessRunner, ReportsDeathBySignal) {
  PosixProcessRunner r;
  auto res = r.run({.argv = {"sh", "-c", "kill -SEGV $$"}});
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->term_signal, SIGSEGV);
  EXPECT_NE(res->describe_end().find("signal 11"), std::string::npos);
}

TEST(PosixProcessRunner, MissingProgramIsAnErrorNamingIt) {
  PosixProcessRunner r;
  auto res = r.run({.argv = {"no-such-program-cutegen"}});
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.error().message.find("no-such-program-cutegen"), std::string::npos);
}

TEST(PosixProcessRunner, CapsAFloodOfOutput) {
  PosixProcessRunner r;
  auto res = r.run({.argv = {"sh", "-c", "head -c 5000000 /dev/zero"}, .max_output_bytes = 1000});
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->out.size(), 1000u);
  EXPECT_TRUE(res->output_truncated);
  EXPECT_TRUE(res->succeeded());
}

TEST(PosixProcessRunner, PassesEnvironmentAndWorkingDirectory) {
  PosixProcessRunner r;
  auto res = r.run({.argv = {"sh", "-c", "echo $CUTEGEN_T; pwd"}, .cwd = "/tmp", .env = {{"CUTEGEN_T", "hello"}}});
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->out, "hello\n/tmp\n");
}
