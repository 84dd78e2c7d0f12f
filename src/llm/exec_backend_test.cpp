#include "llm/exec_backend.h"

#include <gtest/gtest.h>

#include "common/testdata/fake_process_runner.h"
#include "llm/testdata/test_support.h"

using namespace cutegen;
using namespace cutegen::testing;
using namespace std::chrono_literals;

namespace {

class ExecBackendTest : public LlmTest {};

}  // namespace

TEST_F(ExecBackendTest, CommandGetsTheConversationOnStdinAndItsStdoutIsTheAnswer) {
  auto backend = make(config("exec:cat"));
  auto r = backend->complete(ask("write a kernel", "you write CuTe"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, "=== system ===\nyou write CuTe\n\n=== user ===\nwrite a kernel\n");
  EXPECT_EQ(r->finish, FinishReason::stop);
  EXPECT_FALSE(r->usage.reported);
  EXPECT_EQ(backend->model(), "cat");
}

TEST_F(ExecBackendTest, ShellSyntaxWorksAndParametersArriveAsEnvironment) {
  auto c = config("exec:grep -c user | tr -d '\\n'; echo \" $CUTEGEN_LLM_MAX_TOKENS $CUTEGEN_LLM_REASONING_EFFORT\"");
  c.model = "my-script";
  auto request = ask("hi");
  request.params.max_tokens = 321;
  request.params.reasoning_effort = "low";
  auto backend = make(c);
  auto r = backend->complete(request);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, "1 321 low\n");
  EXPECT_EQ(r->model, "my-script");
}

TEST_F(ExecBackendTest, FailingCommandIsAnErrorWithExitCodeAndStderrTail) {
  auto r = make(config("exec:echo noise >&2; echo 'model not found: foo' >&2; exit 3"))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  const auto& m = r.error().message;
  EXPECT_NE(m.find("exit code 3"), std::string::npos) << m;
  EXPECT_NE(m.find("noise | model not found: foo"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

TEST_F(ExecBackendTest, HangingCommandTimesOut) {
  auto c = config("exec:echo thinking >&2; sleep 30");
  c.timeout = 300ms;
  auto start = std::chrono::steady_clock::now();
  auto r = make(c)->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_NE(r.error().message.find("timed out"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("thinking"), std::string::npos) << r.error().message;
}

TEST_F(ExecBackendTest, NoOutputIsAnErrorNotAnEmptyAnswer) {
  auto r = make(config("exec:cat >/dev/null"))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("printed nothing"), std::string::npos) << r.error().message;
}

TEST_F(ExecBackendTest, RunsThroughTheProcessRunnerAsShCommand) {
  FakeProcessRunner fake([](const ProcessSpec&) -> Result<ProcessResult> { return FakeProcessRunner::exited(0, "ok"); });
  ExecBackend backend(fake, {"llm -m x", "", 42s});
  ASSERT_TRUE(backend.complete(ask("hi")).ok());
  auto calls = fake.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].argv, (std::vector<std::string>{"sh", "-c", "llm -m x"}));
  EXPECT_EQ(calls[0].timeout, 42s);
  EXPECT_EQ(calls[0].stdin_data, "=== user ===\nhi\n");
}
