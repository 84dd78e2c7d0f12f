#include "llm/manual_backend.h"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "common/fs.h"
#include "llm/testdata/test_support.h"

using namespace cutegen;
using namespace cutegen::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

class ManualBackendTest : public LlmTest {
 protected:
  ManualOptions options() {
    ManualOptions o;
    o.dir = tmp_ / "manual";
    o.poll_interval = 10ms;
    o.timeout = 10s;
    o.progress = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    };
    return o;
  }
  std::mutex mu_;
  std::vector<std::string> lines_;
};

}  // namespace

TEST_F(ManualBackendTest, PicksUpAResponseWrittenByAnotherThread) {
  ManualBackend backend(options());
  auto request = ask("write a kernel", "you write CuTe");
  auto prompt = backend.prompt_path(request);
  auto response = backend.response_path(request);
  EXPECT_EQ(prompt.parent_path(), tmp_ / "manual");
  EXPECT_EQ(prompt.filename().string().size(), 64 + std::string(".prompt.md").size());

  std::thread person([&] {
    while (!fs::exists(prompt)) std::this_thread::sleep_for(5ms);
    auto text = read_file(prompt);
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(*text, "=== system ===\nyou write CuTe\n\n=== user ===\nwrite a kernel\n");
    EXPECT_TRUE(write_file_atomic(response, "the answer").ok());
  });
  auto r = backend.complete(request);
  person.join();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, "the answer");
  EXPECT_EQ(r->finish, FinishReason::stop);
  std::lock_guard<std::mutex> lock(mu_);
  ASSERT_FALSE(lines_.empty());
  EXPECT_NE(lines_[0].find(response.string()), std::string::npos) << lines_[0];
}

TEST_F(ManualBackendTest, AnAnswerAlreadyThereIsUsedAtOnce) {
  auto o = options();
  o.timeout = 1ms;  // would fail if it waited at all
  ManualBackend backend(o);
  auto request = ask("resume me");
  ASSERT_TRUE(write_file_atomic(backend.response_path(request), "answered earlier").ok());
  auto r = backend.complete(request);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, "answered earlier");
}

TEST_F(ManualBackendTest, DifferentRequestsGetDifferentFiles) {
  ManualBackend backend(options());
  EXPECT_NE(backend.prompt_path(ask("a")), backend.prompt_path(ask("b")));
}

TEST_F(ManualBackendTest, NoAnswerTimesOutNamingTheFileToWrite) {
  auto o = options();
  o.timeout = 100ms;
  ManualBackend backend(o);
  auto request = ask("nobody answers");
  auto r = backend.complete(request);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(backend.response_path(request).string()), std::string::npos) << r.error().message;
  EXPECT_TRUE(fs::exists(backend.prompt_path(request)));
}

TEST_F(ManualBackendTest, AnEmptyResponseFileIsNotAnAnswer) {
  auto o = options();
  o.timeout = 150ms;
  ManualBackend backend(o);
  auto request = ask("hi");
  fs::create_directories(o.dir);
  std::ofstream(backend.response_path(request)).close();
  EXPECT_FALSE(backend.complete(request).ok());
}

TEST_F(ManualBackendTest, ReportsProgressWhileWaiting) {
  auto o = options();
  o.timeout = 200ms;
  o.progress_every = 20ms;
  ManualBackend backend(o);
  EXPECT_FALSE(backend.complete(ask("hi")).ok());
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_GE(lines_.size(), 3u);
  EXPECT_NE(lines_.back().find("still waiting"), std::string::npos) << lines_.back();
}
