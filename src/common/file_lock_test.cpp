#include "common/file_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {
using cutegen::testing::TempDir;
}  // namespace

TEST(FileLock, OneHolderAtATimeAndTheHolderIsNamed) {
  TempDir t;
  auto a = FileLock::try_lock(t.path / "locks/task.lock");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_TRUE(a->held());
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  EXPECT_EQ(FileLock::holder(t.path / "locks/task.lock"), std::to_string(::getpid()) + " on " + host);
  auto b = FileLock::try_lock(t.path / "locks/task.lock");
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->held());  // held elsewhere is an answer, not an error
  a->release();
  auto c = FileLock::try_lock(t.path / "locks/task.lock");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->held());
}

TEST(FileLock, AHolderKilledWithSigkillLeavesTheLockFree) {
  TempDir t;
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  if (child == 0) {
    auto l = FileLock::try_lock(t.path / "x.lock");
    char ok = l.ok() && l->held() ? '1' : '0';
    (void)!::write(ready[1], &ok, 1);
    ::pause();
    ::_exit(0);
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, '1');
  auto busy = FileLock::try_lock(t.path / "x.lock");
  ASSERT_TRUE(busy.ok());
  EXPECT_FALSE(busy->held());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  auto free = FileLock::try_lock(t.path / "x.lock");
  ASSERT_TRUE(free.ok());
  EXPECT_TRUE(free->held());
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(DeviceLock, NestedHoldsShareTheLockAndTheTimeHeldIsCounted) {
  TempDir t;
  DeviceLock lock(t.path / "gpu.lock");
  {
    auto outer = lock.hold();
    ASSERT_TRUE(outer.ok());
    auto inner = lock.hold();  // the profiler's hold around the judge's own
    ASSERT_TRUE(inner.ok());
    auto other = FileLock::try_lock(t.path / "gpu.lock");
    EXPECT_FALSE(other->held());
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  auto other = FileLock::try_lock(t.path / "gpu.lock");
  EXPECT_TRUE(other->held());
  other->release();
  EXPECT_GE(lock.held_seconds(), 0.03);
  EXPECT_LT(lock.held_seconds(), 5);
  auto none = hold_device(nullptr);  // no lock configured: a no-op hold
  EXPECT_TRUE(none.ok());
}

TEST(DeviceLock, ASecondHolderWaitsAndItsWaitIsCounted) {
  TempDir t;
  DeviceLock first(t.path / "gpu.lock"), second(t.path / "gpu.lock");
  auto h = first.hold();
  ASSERT_TRUE(h.ok());
  std::thread waiter([&] { auto w = second.hold(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  { auto release = std::move(*h); }
  waiter.join();
  EXPECT_GE(second.waited_seconds(), 0.04);
}
