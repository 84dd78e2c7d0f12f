#include "llm/budget.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "common/fs.h"
#include "llm/llm_client.h"
#include "llm/testdata/test_support.h"

using namespace cutegen;
using namespace cutegen::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Answers every call in-process: its prompt at ~4 bytes a token (below the client's bound, like a real
// tokenizer) and `output` tokens, never more than the request's max_tokens when `honour_max` is set.
class MeteredBackend final : public LlmBackend {
 public:
  MeteredBackend(long long output, bool honour_max) : output_(output), honour_max_(honour_max) {}
  std::string kind() const override { return "fake"; }
  std::string model() const override { return "priced"; }
  Result<LlmResponse> complete(const LlmRequest& request) override {
    ++calls;
    if (request.params.max_tokens) last_max_tokens = *request.params.max_tokens;
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    LlmResponse r;
    r.text = "ok";
    for (const auto& m : request.messages) r.usage.input_tokens += static_cast<long long>(m.text.size() / 4 + 1);
    r.usage.output_tokens = output_;
    if (honour_max_ && request.params.max_tokens && *request.params.max_tokens < output_) {
      r.usage.output_tokens = *request.params.max_tokens;
      r.finish = FinishReason::length;
    }
    r.model = "priced";
    return r;
  }
  std::atomic<int> calls{0};
  std::atomic<int> last_max_tokens{0};
  int delay_ms = 0;

 private:
  long long output_;
  bool honour_max_;
};

// $1 per million tokens in, $10 out.
PriceTable prices() { return *PriceTable::parse(R"({"models": {"priced": {"input": 1, "output": 10}}})", "t"); }

struct Client {
  MeteredBackend* backend;
  std::unique_ptr<LlmClient> client;
};

Client client(BudgetLimits limits, long long output = 2000, bool honour_max = true, GenerationParams defaults = {}) {
  auto backend = std::make_unique<MeteredBackend>(output, honour_max);
  auto* raw = backend.get();
  auto c = LlmClient::create(std::move(backend), prices(), {defaults, limits, std::nullopt});
  EXPECT_TRUE(c.ok());
  return {raw, std::move(*c)};
}

LlmRequest hello() { return {{{Role::user, "hello"}}, {}}; }

class BudgetHttp : public LlmTest {
 protected:
  // An openai config for model "pricey" at $10 per million tokens in and $100 out.
  LlmConfig pricey(const std::string& url) {
    EXPECT_TRUE(write_file_atomic(tmp_ / "prices.json", R"({"models": {"pricey": {"input": 10, "output": 100}}})").ok());
    auto c = config("openai:pricey", url);
    c.prices = tmp_ / "prices.json";
    return c;
  }
};

// A Chat Completions server: prompt tokens at ~4 bytes a token, `output` completion tokens, or fewer
// when `honour_max` and the request asks for fewer (then cut off, as a real server does).
LocalServer metered_server(long long output, bool honour_max) {
  return LocalServer([output, honour_max](const httplib::Request& req, httplib::Response& res) {
    auto body = json::parse(req.body);
    long long prompt = 0;
    for (const auto& m : body["messages"]) prompt += static_cast<long long>(m["content"].get<std::string>().size() / 4 + 1);
    long long out = output;
    std::string finish = "stop";
    if (honour_max && body.contains("max_completion_tokens") && body["max_completion_tokens"].get<long long>() < out) {
      out = body["max_completion_tokens"].get<long long>();
      finish = "length";
    }
    res.set_content(openai_answer("ok", finish, prompt, out, "pricey"), "application/json");
  });
}

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

TEST_F(BudgetHttp, ADollarBudgetAgainstAServerCharging11DollarsACallSpendsAtMostOneCall) {
  // The server ignores max_tokens and bills 110k output tokens ($11) whatever it is asked.
  auto server = metered_server(110'000, false);
  auto c = pricey(server.url());
  c.budget.max_cost_usd = 1.0;
  auto made = make_llm_client(c, deps());
  ASSERT_TRUE(made.ok()) << made.error().message;
  auto& client = **made;
  auto first = client.complete(ask("write a kernel"));
  ASSERT_TRUE(first.ok()) << first.error().message;
  // What the call asked for could cost at most the $1: ~10k output tokens at $100 per million.
  auto sent = json::parse(server.requests().at(0).body);
  ASSERT_TRUE(sent.contains("max_completion_tokens"));
  long long asked = sent["max_completion_tokens"].get<long long>();
  double worst = (static_cast<double>(prompt_token_bound(ask("write a kernel").messages)) * 10 + asked * 100.0) / 1e6;
  EXPECT_LE(worst, 1.0);
  EXPECT_GT(asked, 9'900);
  EXPECT_TRUE(first->record.capped_by_budget);
  for (int i = 0; i < 3; ++i) {
    auto next = client.complete(ask("write a kernel"));
    ASSERT_FALSE(next.ok());
    EXPECT_TRUE(is_budget_exhausted(next.error()));
    EXPECT_NE(next.error().message.find("run budget of $1.0000 is used up"), std::string::npos) << next.error().message;
    EXPECT_NE(next.error().message.find("$11.0"), std::string::npos) << "says what was spent: " << next.error().message;
  }
  EXPECT_EQ(server.request_count(), 1u);
}

TEST_F(BudgetHttp, ADollarBudgetIsNotPassedWhenTheServerHonoursTheCap) {
  auto server = metered_server(110'000, true);
  auto c = pricey(server.url());
  c.budget.max_cost_usd = 1.0;
  auto client = make_llm_client(c, deps());
  ASSERT_TRUE(client.ok()) << client.error().message;
  for (int i = 0; i < 5; ++i) (void)(*client)->complete(ask("write a kernel"));
  EXPECT_EQ(server.request_count(), 1u) << "what the first call left cannot pay for a useful answer";
  EXPECT_LE((*client)->budget().spent().cost_usd, 1.0);
  EXPECT_GT((*client)->budget().spent().cost_usd, 0.99);
}

TEST_F(BudgetHttp, ATokenBudgetCapsTheSecondCallAndRefusesTheThird) {
  auto server = metered_server(100'000, true);
  auto c = config("openai:gpt-5", server.url());
  c.params.max_tokens = 100'000;
  c.budget.max_tokens = 150'000;
  auto made = make_llm_client(c, deps(), tmp_ / "usage.jsonl");
  ASSERT_TRUE(made.ok()) << made.error().message;
  auto& client = **made;
  const std::string prompt(4000, 'x');  // ~1000 tokens, bounded by ~4050

  auto first = client.complete(ask(prompt));
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(json::parse(server.requests().at(0).body)["max_completion_tokens"], 100'000);
  EXPECT_FALSE(first->record.capped_by_budget);

  auto second = client.complete(ask(prompt));
  ASSERT_TRUE(second.ok()) << second.error().message;
  long long capped = json::parse(server.requests().at(1).body)["max_completion_tokens"].get<long long>();
  long long bound = prompt_token_bound(ask(prompt).messages);
  EXPECT_EQ(capped, 150'000 - first->response.usage.total() - bound) << "exactly what the budget has left";
  EXPECT_TRUE(second->record.capped_by_budget);
  EXPECT_EQ(second->record.max_tokens, capped);
  EXPECT_EQ(second->response.finish, FinishReason::length);

  auto third = client.complete(ask(prompt));
  ASSERT_FALSE(third.ok());
  EXPECT_TRUE(is_budget_exhausted(third.error()));
  EXPECT_NE(third.error().message.find("run budget of 150000 tokens"), std::string::npos) << third.error().message;
  EXPECT_EQ(server.request_count(), 2u);
  EXPECT_LE(client.budget().spent().tokens, 150'000);
  auto log = read_file(tmp_ / "usage.jsonl");
  ASSERT_TRUE(log.ok());
  EXPECT_NE(log->find("\"capped_by_budget\":true"), std::string::npos) << *log;
}

// Issue 32: a server answering `max_tokens: 100` with a claim of 10M output tokens was accepted
// silently. Its claim is charged in full, stops the run at the next call, and is said once.
TEST_F(BudgetHttp, AServerClaiming10MOutputTokensIsChargedStopsTheRunAndIsToldOnce) {
  auto server = metered_server(10'000'000, false);
  auto c = config("openai:gpt-5", server.url());
  c.params.max_tokens = 100;
  auto made = make_llm_client(c, deps(), tmp_ / "usage.jsonl");
  ASSERT_TRUE(made.ok()) << made.error().message;
  auto& unlimited = **made;
  for (int i = 0; i < 3; ++i) {
    auto call = unlimited.complete(ask("write a kernel"));
    ASSERT_TRUE(call.ok()) << call.error().message;
    EXPECT_EQ(call->record.usage.output_tokens, 10'000'000);
  }
  EXPECT_EQ(json::parse(server.requests().at(0).body)["max_completion_tokens"], 100);
  EXPECT_GE(unlimited.budget().spent().tokens, 30'000'000) << "every reported token is counted";
  auto lines = progress();
  ASSERT_EQ(std::count_if(lines.begin(), lines.end(), [](const auto& l) { return l.find("max_tokens") != std::string::npos; }),
            1)
      << "one warning per run, not per call";
  const std::string& warning = *std::find_if(lines.begin(), lines.end(), [](const auto& l) { return l.find("max_tokens") != std::string::npos; });
  EXPECT_EQ(warning.find('\n'), std::string::npos) << warning;
  EXPECT_NE(warning.find("10000000 output tokens for a request limited to 100"), std::string::npos) << warning;

  // Under a run budget of 1M tokens the first such answer passes it, and the run stops there.
  c.budget.max_tokens = 1'000'000;
  auto budgeted = make_llm_client(c, deps());
  ASSERT_TRUE(budgeted.ok()) << budgeted.error().message;
  ASSERT_TRUE((*budgeted)->complete(ask("write a kernel")).ok());
  auto next = (*budgeted)->complete(ask("write a kernel"));
  ASSERT_FALSE(next.ok());
  EXPECT_TRUE(is_budget_exhausted(next.error())) << next.error().message;
  EXPECT_NE(next.error().message.find("run budget of 1000000 tokens is used up"), std::string::npos) << next.error().message;
  EXPECT_EQ(server.request_count(), 4u);
}

TEST_F(BudgetHttp, AServerThatKeepsToMaxTokensIsNotWarnedAbout) {
  auto server = metered_server(5'000, true);
  auto c = config("openai:gpt-5", server.url());
  c.params.max_tokens = 100;
  auto client = make_llm_client(c, deps());
  ASSERT_TRUE(client.ok()) << client.error().message;
  ASSERT_TRUE((*client)->complete(ask("write a kernel")).ok());
  for (const auto& line : progress()) EXPECT_EQ(line.find("max_tokens"), std::string::npos) << line;
}

// A count that is no count would be charged as nothing (a string) or give spent tokens back (a
// negative one, or 2^64-1 read as -1): the answer is refused as an unexpected response, naming it.
TEST_F(BudgetHttp, UsageCountsThatAreNoTokenCountsAreRefusedNotCharged) {
  for (const std::string count : {"-10000000", "18446744073709551615", "\"10000000\"", "12.5", "1e30"}) {
    auto server = LocalServer([&count](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"model": "gpt-5", "choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
                          "usage": {"prompt_tokens": 10, "completion_tokens": )" + count + "}}",
                      "application/json");
    });
    auto c = config("openai:gpt-5", server.url());
    c.budget.max_tokens = 1'000'000;
    auto client = make_llm_client(c, deps());
    ASSERT_TRUE(client.ok()) << client.error().message;
    auto call = (*client)->complete(ask("write a kernel"));
    ASSERT_FALSE(call.ok()) << count << " was taken for a token count";
    EXPECT_NE(call.error().message.find("usage.completion_tokens is"), std::string::npos) << call.error().message;
    EXPECT_GE((*client)->budget().spent().tokens, 0) << count;
  }
  // A whole number written as a float is a count.
  auto server = LocalServer([](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 10.0, "completion_tokens": 7}})",
                    "application/json");
  });
  auto client = make_llm_client(config("openai:gpt-5", server.url()), deps());
  ASSERT_TRUE(client.ok());
  auto call = (*client)->complete(ask("hi"));
  ASSERT_TRUE(call.ok()) << call.error().message;
  EXPECT_EQ(call->response.usage.total(), 17);
}

TEST(Budget, ConcurrentCallsCannotOvershootTogether) {
  // Each call may write 5000 tokens; 8 threads ask at once. Counting only finished calls would let
  // every thread start while the budget looked unspent.
  auto c = client({.max_tokens = 50'000}, 5000, true, {.max_tokens = 5000});
  c.backend->delay_ms = 2;
  std::atomic<int> ok{0}, exhausted{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        auto r = c.client->complete(hello());
        if (r.ok()) ++ok;
        else if (is_budget_exhausted(r.error())) ++exhausted;
        else ++other;
      }
    });
  for (auto& t : threads) t.join();
  auto spent = c.client->budget().spent();
  EXPECT_LE(spent.tokens, 50'000);
  EXPECT_GE(ok, 9) << "the budget is used, not refused wholesale";
  EXPECT_EQ(ok + exhausted, 80);
  EXPECT_EQ(other, 0);
  EXPECT_EQ(c.backend->calls, ok);
  EXPECT_EQ(spent.calls, ok);
  EXPECT_EQ(spent.reserved_tokens, 0) << "every reservation was settled or given back";
  EXPECT_EQ(spent.reserved_usd, 0.0) << "exactly: no floating-point residue of the reservations";
  EXPECT_EQ(spent.in_flight, 0);
}

TEST(Budget, ConcurrentCallsCannotOvershootADollarBudgetTogether) {
  // 5000 output tokens at $10 per million: $0.05 a call; $0.30 pays for at most six.
  auto c = client({.max_cost_usd = 0.3}, 5000, true, {.max_tokens = 5000});
  c.backend->delay_ms = 2;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) (void)c.client->complete(hello());
    });
  for (auto& t : threads) t.join();
  EXPECT_LE(c.client->budget().spent().cost_usd, 0.3);
  EXPECT_GE(c.backend->calls, 5);
}

TEST(Budget, WithALimitEveryRequestStatesItsMaximum) {
  auto c = client({.max_tokens = 1'000'000});
  ASSERT_TRUE(c.client->complete(hello()).ok());
  EXPECT_EQ(c.backend->last_max_tokens, kBudgetedDefaultMaxTokens) << "an unbounded answer has no worst case";
  auto unlimited = client({.max_calls = 5});
  auto r = unlimited.client->complete(hello());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(unlimited.backend->last_max_tokens, 0) << "a call budget alone leaves max_tokens unset";
  EXPECT_FALSE(r->record.max_tokens.has_value());
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
  EXPECT_EQ(c.client->budget().spent().reserved_tokens, 0);
  EXPECT_TRUE(c.client->complete(hello()).ok());
}

TEST(Budget, TheNarrowerOfRunAndTaskBudgetCapsTheCall) {
  auto c = client({.max_tokens = 1'000'000}, 50'000, true, {.max_tokens = 50'000});
  Budget task({.max_tokens = 20'000}, "task");
  auto r = c.client->complete(hello(), {&task, "t"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(c.backend->last_max_tokens, 20'000 - prompt_token_bound(hello().messages));
  EXPECT_TRUE(r->record.capped_by_budget);
  EXPECT_LE(task.spent().tokens, 20'000);
  auto refused = c.client->complete(hello(), {&task, "t"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("task budget of 20000 tokens"), std::string::npos) << refused.error().message;
  EXPECT_EQ(c.client->budget().spent().reserved_tokens, 0);
}

TEST(Budget, ARemainderBelowAUsefulAnswerIsRefusedButASmallRequestThatFitsIsNot) {
  auto shape = [](std::optional<long long> max_output) {
    CallShape s;
    s.prompt_tokens = 100;
    s.max_output = max_output;
    return s;
  };
  Budget b({.max_tokens = 1000});
  auto small = b.claim(shape(200));
  ASSERT_TRUE(small.ok()) << small.error().message;
  EXPECT_EQ(small->max_output(), 200);
  small->settle(300, 0);
  auto big = b.check(shape(16000));  // room for 600: less than a useful answer
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("leaves room for 600 output tokens"), std::string::npos) << big.error().message;
  EXPECT_NE(big.error().message.find("300 tokens"), std::string::npos) << "names what was spent";
  EXPECT_TRUE(b.check(shape(500)).ok()) << "a request that fits whole is allowed";
}

TEST(Budget, ExtendedThinkingNeedsRoomForItsBudgetAndAnAnswer) {
  Budget b({.max_tokens = 10'000});
  CallShape s;
  s.prompt_tokens = 100;
  s.max_output = 16000;
  s.min_output = 9000 + kMinUsefulOutputTokens;
  EXPECT_FALSE(b.check(s).ok()) << "9900 tokens of room cannot hold 9000 thinking tokens and an answer";
  s.min_output = 4000 + kMinUsefulOutputTokens;
  auto claim = b.claim(s);
  ASSERT_TRUE(claim.ok());
  EXPECT_EQ(claim->max_output(), 9900);
}

TEST(Budget, AnUnsettledClaimGivesEverythingBack) {
  Budget b({.max_tokens = 10'000, .max_calls = 3});
  {
    CallShape s;
    s.prompt_tokens = 50;
    s.max_output = 2000;
    auto claim = b.claim(s);
    ASSERT_TRUE(claim.ok());
    EXPECT_EQ(b.spent().reserved_tokens, 2050);
    EXPECT_EQ(b.spent().calls, 1);
  }
  EXPECT_EQ(b.spent().reserved_tokens, 0);
  EXPECT_EQ(b.spent().calls, 0);
}

TEST(Budget, ADollarBudgetNeedsAPriceForTheModel) {
  auto backend = std::make_unique<MeteredBackend>(100, true);
  auto* raw = backend.get();
  auto c = LlmClient::create(std::move(backend), PriceTable{}, {{}, {.max_cost_usd = 5}, std::nullopt});
  ASSERT_TRUE(c.ok());
  auto r = (*c)->complete(hello());
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(is_budget_exhausted(r.error())) << "a configuration to fix, not a spent budget";
  EXPECT_NE(r.error().message.find("no entry for model 'priced'"), std::string::npos) << r.error().message;
  EXPECT_EQ(raw->calls, 0);
}

TEST_F(BudgetHttp, CallsThatCostNothingAreNotHeldToADollarBudget) {
  // exec reports no usage and has no price; its calls are counted, not priced.
  auto c = config("exec:echo fine");
  c.budget.max_cost_usd = 0.01;
  auto client = make_llm_client(c, deps());
  ASSERT_TRUE(client.ok()) << client.error().message;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE((*client)->complete(ask("hi")).ok()) << i;
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

TEST(Budget, ReplayedLogEntriesCountUntilALimitIsUsedUp) {
  Budget b({.max_tokens = 1000});
  EXPECT_TRUE(b.replay_call(600, 0.1).ok());
  EXPECT_TRUE(b.replay_call(600, 0.1).ok());
  auto r = b.replay_call(10, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(is_budget_exhausted(r.error()));
  EXPECT_EQ(b.spent().calls, 2);
  EXPECT_EQ(b.spent().tokens, 1200);
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
