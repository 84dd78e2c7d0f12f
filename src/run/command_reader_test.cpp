#include "run/command_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

namespace cutegen {
namespace {
using namespace std::chrono_literals;

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
  }
  void write(const std::string& s) const { ASSERT_EQ(::write(w, s.data(), s.size()), static_cast<ssize_t>(s.size())); }
};

TEST(CommandReader, SplitsLinesAcrossReadsAndEndsAtEof) {
  Pipe p;
  CommandReader reader(p.r, 1ms);
  p.write("{\"op\":\"ping\"}\n{\"op\":");
  EXPECT_EQ(reader.next(), "{\"op\":\"ping\"}");
  std::thread later([&] {
    std::this_thread::sleep_for(20ms);
    p.write("\"call\"}\n");
    ::close(p.w);
    p.w = -1;
  });
  EXPECT_EQ(reader.next(), "{\"op\":\"call\"}");
  later.join();
  EXPECT_EQ(reader.next(), std::nullopt);
}

TEST(CommandReader, SpinsForInputThatComesSoonAndSleepsForInputThatDoesNot) {
  Pipe p;
  {
    CommandReader reader(p.r, 2s);
    std::thread soon([&] {
      std::this_thread::sleep_for(10ms);
      p.write("a\n");
    });
    EXPECT_EQ(reader.next(), "a");
    soon.join();
    EXPECT_EQ(reader.sleeps(), 0) << "input within the spin window must not put the reader to sleep";
  }
  CommandReader reader(p.r, 1ms);
  std::thread late([&] {
    std::this_thread::sleep_for(50ms);
    p.write("b\n");
  });
  EXPECT_EQ(reader.next(), "b");
  late.join();
  EXPECT_EQ(reader.sleeps(), 1) << "past the spin window the reader sleeps in poll() instead of burning a core";
}

}  // namespace
}  // namespace cutegen
