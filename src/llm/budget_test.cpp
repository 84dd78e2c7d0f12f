#include "llm/budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "llm/llm_client.h"

using namespace cutegen;

namespace {

// Answers every call with fixed usage and counts the calls that reached it.
class CountingBackend final : public LlmBackend {
 public:
  explicit CountingBackend(Usage usage) : usage_(usage) {}
  std::string kind() const override { return "fake"; }
  std::string model() const override { return "priced"; }
  Result<LlmResponse> complete(const LlmRequest&) override {
    ++calls;
    LlmResponse r;
    r.text = "ok";
    r.usage = usage_;
    r.model = "priced";
    return r;
  }
  std::atomic<int> calls{0};

 private:
  Usage usage_;
};

PriceTable prices() { return *PriceTable::parse(R"({"models": {"priced": {"input": 1000, "output": 1000}}})", "t"); }

struct Client {
  CountingBackend* backend;
  std::unique_ptr<LlmClient> client;
};

Client client(BudgetLimits limits, long long input_tokens = 100, long long output_tokens = 100) {
  Usage u;
  u.input_tokens = input_tokens;
  u.output_tokens = output_tokens;
  auto backend = std::make_unique<CountingBackend>(u);
  auto* raw = backend.get();
  auto c = LlmClient::create(std::move(backend), prices(), {{}, limits, std::nullopt});
  EXPECT_TRUE(c.ok());
  return {raw, std::move(*c)};
}

LlmRequest hello() { return {{{Role::user, "hello"}}, {}}; }

}  // namespace

TEST(Budget, MaxCallsStopsFurtherCallsWithARecognisableError) {
  auto c = client({.max_calls = 2});
  EXPECT_TRUE(c.client->complete(hello()).ok());
  EXPECT_TRUE(c.client->complete(hello()).ok());
  auto third = c.client->complete(hello());
  ASSERT_FALSE(third.ok());
  EXPECT_TRUE(is_budget_exhausted(third.error())) << third.error().message;
  EXPECT_NE(third.error().message.find("run budget of 2 calls"), std::string::npos) << third.error().message;
  EXPECT_EQ(c.backend->calls, 2) << "an exhausted budget must stop the call before it is made";
}

TEST(Budget, MaxTokensStopsOnceReached) {
  auto c = client({.max_tokens = 450});  // 200 tokens a call
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(c.client->complete(hello()).ok()) << i;  // 0, 200, 400 < 450
  auto r = c.client->complete(hello());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(is_budget_exhausted(r.error()));
  EXPECT_NE(r.error().message.find("450 tokens"), std::string::npos) << r.error().message;
  EXPECT_EQ(c.client->budget().spent().tokens, 600);
}

TEST(Budget, MaxCostStopsOnceReached) {
  // $1000/Mtok * 200 tokens = $0.20 a call
  auto c = client({.max_cost_usd = 0.5});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(c.client->complete(hello()).ok()) << i;
  auto r = c.client->complete(hello());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(is_budget_exhausted(r.error()));
  EXPECT_NEAR(c.client->budget().spent().cost_usd, 0.6, 1e-9);
}

TEST(Budget, ATaskBudgetStopsItsTaskWithoutUsingUpTheRun) {
  auto c = client({.max_calls = 10});
  Budget task({.max_calls = 1}, "task");
  EXPECT_TRUE(c.client->complete(hello(), {&task, "t1"}).ok());
  auto r = c.client->complete(hello(), {&task, "t1"});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(is_budget_exhausted(r.error()));
  EXPECT_NE(r.error().message.find("task budget"), std::string::npos) << r.error().message;
  EXPECT_EQ(c.client->budget().spent().calls, 1) << "the refused call must not count against the run";
  EXPECT_TRUE(c.client->complete(hello()).ok());
}

TEST(Budget, OtherErrorsAreNotBudgetErrors) { EXPECT_FALSE(is_budget_exhausted(Error{"openai: HTTP 500"})); }

TEST(Budget, MaxCallsHoldsExactlyUnderConcurrency) {
  auto c = client({.max_calls = 25});
  std::atomic<int> ok{0}, exhausted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        auto r = c.client->complete(hello());
        if (r.ok()) ++ok;
        else if (is_budget_exhausted(r.error())) ++exhausted;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 25);
  EXPECT_EQ(exhausted, 55);
  EXPECT_EQ(c.backend->calls, 25);
}

TEST(Budget, LimitsParseFromConfigAndRejectUnknownKeys) {
  auto l = budget_limits_from_json({{"max_tokens", 1000}, {"max_cost_usd", 2.5}, {"max_calls", 7}}, "llm.budget");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->max_tokens, 1000);
  EXPECT_EQ(l->max_cost_usd, 2.5);
  EXPECT_EQ(l->max_calls, 7);
  auto bad = budget_limits_from_json({{"max_dollars", 3}}, "llm.budget");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("llm.budget.max_dollars"), std::string::npos);
}
