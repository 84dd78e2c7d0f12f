#include "llm/testdata/fake_backend.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

using namespace cutegen;

namespace {

LlmRequest ask(const std::string& text) { return {{{Role::system, "sys"}, {Role::user, text}}, {}}; }

}  // namespace

TEST(FakeLlmBackend, ServesTheScriptInOrderAndKeepsEveryRequest) {
  FakeLlmBackend fake;
  fake.answer("first").answer("cut", FinishReason::length).fail("openai: HTTP 500");
  EXPECT_EQ(fake.pending(), 3u);

  auto a = fake.complete(ask("one"));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->text, "first");
  EXPECT_FALSE(a->truncated());
  EXPECT_EQ(a->model, "fake-model");
  auto b = fake.complete(ask("two"));
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->truncated());
  auto c = fake.complete(ask("three"));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "openai: HTTP 500");

  auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].messages.back().text, "two");
  EXPECT_EQ(fake.pending(), 0u);
}

TEST(FakeLlmBackend, RunningOutOfAnswersIsAnErrorNamingTheCall) {
  FakeLlmBackend fake;
  fake.answer("only one");
  ASSERT_TRUE(fake.complete(ask("a")).ok());
  auto r = fake.complete(ask("an unexpected second call\nmore"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no answer scripted for call 2"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("\"an unexpected second call\""), std::string::npos) << r.error().message;
}

TEST(FakeLlmBackend, AHandlerAnswersOnceTheScriptIsEmpty) {
  FakeLlmBackend fake("m");
  fake.answer("scripted").otherwise([](const LlmRequest& r) -> Result<LlmResponse> {
    LlmResponse response;
    response.text = "echo " + r.messages.back().text;
    return response;
  });
  EXPECT_EQ(fake.complete(ask("x"))->text, "scripted");
  EXPECT_EQ(fake.complete(ask("y"))->text, "echo y");
  EXPECT_EQ(fake.complete(ask("z"))->text, "echo z");
}

TEST(FakeLlmBackend, ThroughAClientCallsArePricedRecordedAndBudgeted) {
  auto fake = std::make_shared<FakeLlmBackend>();
  for (int i = 0; i < 5; ++i) fake->answer("ok", FinishReason::stop, fake_usage(1'000'000, 500'000));
  auto client = make_fake_client(fake, {.budget = {.max_calls = 2}});
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto first = (*client)->complete(ask("a"));
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_DOUBLE_EQ(first->record.cost.usd, 1.0 + 1.0);  // $1/Mtok in, $2/Mtok out
  EXPECT_EQ(first->record.backend, "fake");
  ASSERT_TRUE((*client)->complete(ask("b")).ok());
  auto third = (*client)->complete(ask("c"));
  ASSERT_FALSE(third.ok());
  EXPECT_TRUE(is_budget_exhausted(third.error())) << third.error().message;
  EXPECT_EQ(fake->requests().size(), 2u) << "the refused call never reached the backend";
}

TEST(FakeLlmBackend, IsSafeFromSeveralThreads) {
  auto fake = std::make_shared<FakeLlmBackend>();
  constexpr int kThreads = 8, kCalls = 50;
  for (int i = 0; i < kThreads * kCalls; ++i) fake->answer("a" + std::to_string(i));
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kCalls; ++i) ok += fake->complete(ask("q")).ok() ? 1 : 0;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, kThreads * kCalls);
  EXPECT_EQ(fake->requests().size(), std::size_t(kThreads * kCalls));
  EXPECT_EQ(fake->pending(), 0u);
  EXPECT_FALSE(fake->complete(ask("one too many")).ok());
}

TEST(BudgetCheck, SaysBeforehandWhetherACallWouldBeRefused) {
  auto fake = std::make_shared<FakeLlmBackend>();
  fake->answer("ok", FinishReason::stop, fake_usage(600, 200));
  auto client = make_fake_client(fake, {.defaults = {.max_tokens = 1000}, .budget = {.max_tokens = 50'000}});
  ASSERT_TRUE(client.ok());
  Budget task({.max_tokens = 5500}, "task");
  CallOptions in_task{&task, "t"};

  auto request = ask(std::string(3933, 'x'));  // a prompt bound of 4000 tokens + 1000 max_tokens (the default)
  auto estimate = (*client)->estimate(request);
  EXPECT_EQ(estimate.tokens, 5000);
  EXPECT_NEAR(estimate.cost_usd, (4000 * 1.0 + 1000 * 2.0) / 1e6, 1e-12);
  EXPECT_TRUE((*client)->check_budget(request, in_task).ok()) << "5000 + nothing spent fits a 5500 task budget";

  ASSERT_TRUE((*client)->complete(ask("small"), in_task).ok());  // the task has now spent 800
  auto refused = (*client)->check_budget(request, in_task);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(is_budget_exhausted(refused.error()));
  EXPECT_NE(refused.error().message.find("the task budget of 5500 tokens leaves room for 700 output tokens"),
            std::string::npos)
      << refused.error().message;
  EXPECT_TRUE((*client)->check_budget(ask("small"), in_task).ok()) << "a smaller call still fits";
  EXPECT_EQ(task.spent().calls, 1) << "checking claims nothing";
}
