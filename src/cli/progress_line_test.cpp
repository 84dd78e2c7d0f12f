#include "cli/progress_line.h"

#include <gtest/gtest.h>

using namespace cutegen;
using cutegen::cli::ProgressLine;

TEST(ProgressLine, StatusShowsPhaseStepBestSolAndSpend) {
  LoopStatus s;
  s.phase = LoopPhase::optimize;
  s.step = 2;
  s.max_steps = 8;
  s.best_ms = 0.5692;
  s.best_speedup_eager = 0.92;
  s.best_sol_pct = 89.7;
  s.tokens = 12345;
  s.cost_usd = 0.1234;
  EXPECT_EQ(ProgressLine::status_text(s), "[optimize step 2/8] best 0.5692 ms 0.92x eager SOL 90% | 12345 tok $0.123");
  s.replaying = true;
  EXPECT_NE(ProgressLine::status_text(s).find("(replaying log)"), std::string::npos);
}

TEST(ProgressLine, BeforeAnyKernelOnlyThePhaseAndSpendShow) {
  LoopStatus s;
  s.phase = LoopPhase::synthesize;
  EXPECT_EQ(ProgressLine::status_text(s), "[synthesize] | 0 tok $0.000");
}

namespace {
// What a ProgressBoard writes to stderr during `body`.
template <class F>
std::string stderr_of(F body) {
  testing::internal::CaptureStderr();
  body();
  return testing::internal::GetCapturedStderr();
}
}  // namespace

TEST(ProgressBoard, OnATerminalTheStatusLinesAreRedrawnInPlaceBelowTheEvents) {
  cutegen::cli::ProgressBoard board(true);
  std::string first = stderr_of([&] { board.update({"suite: 0/2", "  gpu0: a 1s"}, "a: started on gpu0"); });
  EXPECT_EQ(first, "a: started on gpu0\nsuite: 0/2\n  gpu0: a 1s");
  // The next update climbs back over both status lines, clearing them, then writes the event above.
  std::string second = stderr_of([&] { board.update({"suite: 1/2", "  gpu0: idle"}, "a: correct"); });
  EXPECT_EQ(second, "\r\033[K\033[F\033[Ka: correct\nsuite: 1/2\n  gpu0: idle");
  std::string tick = stderr_of([&] { board.update({"suite: 1/2", "  gpu0: idle"}, ""); });
  EXPECT_EQ(tick, "\r\033[K\033[F\033[Ksuite: 1/2\n  gpu0: idle");
}

TEST(ProgressBoard, OffATerminalOnlyEventsAreWrittenWithTheSuiteLine) {
  cutegen::cli::ProgressBoard board(false);
  EXPECT_EQ(stderr_of([&] { board.update({"suite: 0/2", "  gpu0: a"}, ""); }), "");
  std::string line = stderr_of([&] { board.update({"suite: 1/2", "  gpu0: idle"}, "a: correct"); });
  EXPECT_NE(line.find(" a: correct  [suite: 1/2]\n"), std::string::npos) << line;
  EXPECT_EQ(line.find("gpu0"), std::string::npos);
}

// Issue 32: a problem named with escape sequences (or an LLM reply quoted in an event) rewrote the
// terminal. Only the board's own cursor movements are obeyed; what it quotes is shown escaped.
TEST(ProgressBoard, EscapeSequencesInTaskNamesAndEventsAreShownNotObeyed) {
  cutegen::cli::ProgressBoard board(true);
  const std::string evil = "x\x1b]8;;http://evil/\x07name\x1b[2J\rfake\nline";
  std::string out = stderr_of([&] { board.update({"suite: 0/1", "  gpu0: " + evil + " 1s"}, evil + ": started"); });
  EXPECT_EQ(out, "x\\x1b]8;;http://evil/\\x07name\\x1b[2J\\rfake\nline: started\n"
                 "suite: 0/1\n  gpu0: x\\x1b]8;;http://evil/\\x07name\\x1b[2J\\rfake\\nline 1s");
  cutegen::cli::ProgressBoard log(false);
  std::string logged = stderr_of([&] { log.update({"suite: " + evil}, "event \x1b[31mred"); });
  EXPECT_EQ(logged.find('\x1b'), std::string::npos) << logged;
  EXPECT_EQ(logged.find('\r'), std::string::npos) << logged;
}

TEST(ProgressLine, AnEventLineCannotRewriteTheStatusLine) {
  LoopStatus s;
  for (bool terminal : {true, false}) {
    ProgressLine line(terminal);
    std::string out = stderr_of([&] { line.update(s, "llm: HTTP 500: \x1b[1A\x1b[Kall kernels correct\r"); });
    line.finish();
    EXPECT_NE(out.find("llm: HTTP 500: \\x1b[1A\\x1b[Kall kernels correct\\r"), std::string::npos) << out;
    // The line's own redraw (\r\033[K) stays; nothing else.
    EXPECT_EQ(out.find('\x1b', terminal ? 3 : 0), std::string::npos) << out;
  }
}
