#include "llm/llm_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "common/fs.h"
#include "llm/request_key.h"
#include "llm/testdata/test_support.h"

using namespace cutegen;
using namespace cutegen::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

class LlmClientTest : public LlmTest {
 protected:
  std::unique_ptr<LlmClient> client(LlmConfig c, std::optional<std::filesystem::path> log = std::nullopt) {
    auto made = make_llm_client(c, deps(), log);
    EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error().message);
    return made.ok() ? std::move(*made) : nullptr;
  }
};

std::vector<json> read_jsonl(const std::filesystem::path& path) {
  std::vector<json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

}  // namespace

TEST_F(LlmClientTest, ConcurrentCallsFromSeveralThreadsEachGetTheirOwnAnswer) {
  // Answers echo the prompt, so any crossing of wires between threads shows up as a wrong answer.
  auto server = LocalServer([](const httplib::Request& req, httplib::Response& res) {
    std::this_thread::sleep_for(5ms);  // keep several calls in flight at once
    auto body = json::parse(req.body);
    res.set_content(openai_answer("re: " + body["messages"].back()["content"].get<std::string>(), "stop", 1000, 100),
                    "application/json");
  });
  auto log = tmp_ / "usage.jsonl";
  auto c = client(config("openai:gpt-5", server.url()), log);
  constexpr int kThreads = 8, kCalls = 5;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        std::string prompt = "thread " + std::to_string(t) + " call " + std::to_string(i);
        auto r = c->complete(ask(prompt), {nullptr, "task" + std::to_string(t)});
        if (!r.ok() || r->response.text != "re: " + prompt) ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(server.request_count(), std::size_t(kThreads * kCalls));
  auto spent = c->budget().spent();
  EXPECT_EQ(spent.calls, kThreads * kCalls);
  EXPECT_EQ(spent.tokens, kThreads * kCalls * 1100);
  // Per call: 750 uncached + 250 cached input, 100 output, at gpt-5 prices.
  double per_call = (750 * 1.25 + 250 * 0.125 + 100 * 10.0) / 1e6;
  EXPECT_NEAR(spent.cost_usd, kThreads * kCalls * per_call, 1e-9);
  auto records = read_jsonl(log);
  ASSERT_EQ(records.size(), std::size_t(kThreads * kCalls));
  for (const auto& r : records) EXPECT_NEAR(r["cost_usd"].get<double>(), per_call, 1e-12);
}

TEST_F(LlmClientTest, EachCallAppendsAUsageRecord) {
  auto count = std::make_shared<std::atomic<int>>(0);
  auto server = LocalServer([count](const httplib::Request&, httplib::Response& res) {
    if ((*count)++ == 0) {
      res.status = 429;
      res.set_header("Retry-After", "1");
      return;
    }
    res.set_content(openai_answer("ok", "length", 2'000'000, 1'000'000, "gpt-5-mini-2025-08-07"), "application/json");
  });
  auto log = tmp_ / "runs" / "r1" / "llm_usage.jsonl";
  auto c = client(config("openai:gpt-5-mini", server.url()), log);
  auto request = ask("hi");
  auto r = c->complete(request, {nullptr, "matmul"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->response.finish, FinishReason::length);

  auto records = read_jsonl(log);
  ASSERT_EQ(records.size(), 1u);
  const auto& rec = records[0];
  EXPECT_EQ(rec["backend"], "openai");
  EXPECT_EQ(rec["model"], "gpt-5-mini-2025-08-07");
  EXPECT_EQ(rec["task"], "matmul");
  EXPECT_EQ(rec["input_tokens"], 2'000'000);
  EXPECT_EQ(rec["cached_input_tokens"], 500'000);
  EXPECT_EQ(rec["output_tokens"], 1'000'000);
  EXPECT_EQ(rec["reasoning_tokens"], 200'000);
  EXPECT_NEAR(rec["cost_usd"].get<double>(), 1.5 * 0.25 + 0.5 * 0.025 + 1.0 * 2.0, 1e-9);
  EXPECT_EQ(rec["price_unknown"], false);
  EXPECT_EQ(rec["priced_as"], "gpt-5-mini");
  EXPECT_EQ(rec["attempts"], 2);
  EXPECT_EQ(rec["finish"], "length");
  EXPECT_EQ(rec["request_hash"], request_hash("openai", "gpt-5-mini", request));
  EXPECT_TRUE(rec["error"].is_null());
  EXPECT_GE(rec["latency_s"].get<double>(), 0.0);
  EXPECT_EQ(rec["time"].get<std::string>().back(), 'Z');
}

TEST_F(LlmClientTest, FailedCallsAreRecordedWithTheirErrorAndUnknownModelsAreFlagged) {
  auto log = tmp_ / "usage.jsonl";
  auto c = client(config("exec:exit 2"), log);
  ASSERT_FALSE(c->complete(ask("hi")).ok());
  auto ok_client = client(config("exec:echo fine"), log);
  auto r = ok_client->complete(ask("hi"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->record.cost.price_unknown);
  auto records = read_jsonl(log);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_NE(records[0]["error"].get<std::string>().find("exit code 2"), std::string::npos);
  EXPECT_EQ(records[1]["price_unknown"], true);
  EXPECT_EQ(records[1]["usage_reported"], false);
  EXPECT_EQ(records[1]["cost_usd"], 0.0);
}

TEST_F(LlmClientTest, ConfigDefaultsFillWhatARequestLeavesUnset) {
  auto server = LocalServer([](const httplib::Request&, httplib::Response& res) {
    res.set_content(openai_answer("ok"), "application/json");
  });
  auto cfg = config("openai:gpt-5", server.url());
  cfg.params.max_tokens = 4000;
  cfg.params.reasoning_effort = "medium";
  auto c = client(cfg);
  auto request = ask("hi");
  request.params.max_tokens = 50;
  ASSERT_TRUE(c->complete(request).ok());
  auto body = json::parse(server.requests().at(0).body);
  EXPECT_EQ(body["max_completion_tokens"], 50);
  EXPECT_EQ(body["reasoning_effort"], "medium");
}

TEST_F(LlmClientTest, ReplayedCallsCostNothingButCountTokens) {
  auto cassette = tmp_ / "cassette";
  {
    auto server = LocalServer([](const httplib::Request&, httplib::Response& res) {
      res.set_content(openai_answer("ok", "stop", 1000, 1000), "application/json");
    });
    auto cfg = config("openai:gpt-5", server.url());
    cfg.record_dir = cassette;
    auto r = client(cfg)->complete(ask("hi"));
    ASSERT_TRUE(r.ok());
    EXPECT_GT(r->record.cost.usd, 0);
  }
  auto c = client(config("replay:" + cassette.string()));
  auto r = c->complete(ask("hi"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->record.replayed);
  EXPECT_EQ(r->record.cost.usd, 0.0);
  EXPECT_EQ(c->budget().spent().tokens, 2000);
}

TEST_F(LlmClientTest, UnwritableUsageLogIsAnErrorAtCreation) {
  ASSERT_TRUE(write_file_atomic(tmp_ / "file", "x").ok());
  auto made = make_llm_client(config("exec:cat"), deps(), tmp_ / "file" / "usage.jsonl");
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().message.find("usage log"), std::string::npos) << made.error().message;
}

TEST_F(LlmClientTest, AServerThatAlwaysTruncatesIsAskedTwiceThenTheTaskStopsWithAdvice) {
  auto server = LocalServer([](const httplib::Request&, httplib::Response& res) {
    res.set_content(openai_answer("__global__ void k() { for (;;", "length", 500, 16000), "application/json");
  });
  auto cfg = config("openai:gpt-5", server.url());
  cfg.params.max_tokens = 16000;
  auto c = client(cfg);
  TruncationGuard guard;
  CallOptions task{.task = "relu", .truncation = &guard};
  for (int i = 0; i < 2; ++i) {
    auto r = c->complete(ask("write the kernel"), task);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->response.truncated());
  }
  auto third = c->complete(ask("write the kernel"), task);
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().kind, ErrorKind::truncated_repeatedly);
  EXPECT_NE(third.error().message.find("the last 2 answers were cut off at the token limit (max_tokens 16000)"),
            std::string::npos)
      << third.error().message;
  EXPECT_NE(third.error().message.find("raise llm.max_tokens, or the model is looping"), std::string::npos)
      << third.error().message;
  EXPECT_EQ(server.request_count(), 2u);
  EXPECT_EQ(c->budget().spent().calls, 2) << "the refused call was never counted";
  EXPECT_TRUE(c->complete(ask("another task")).ok()) << "the guard belongs to its task, not the client";
}

TEST(TruncationGuard, AnyCompleteAnswerEndsTheRun) {
  TruncationGuard guard;
  LlmResponse cut;
  cut.finish = FinishReason::length;
  LlmResponse whole;
  guard.observe(cut, 8000);
  guard.observe(whole);
  guard.observe(cut, 8000);
  EXPECT_TRUE(guard.check().ok()) << "one cut-off answer since the last complete one";
  guard.observe(cut, 3000, true);
  auto stop = guard.check();
  ASSERT_FALSE(stop.ok());
  EXPECT_NE(stop.error().message.find("raise the budget"), std::string::npos)
      << "when the budget lowered max_tokens, the limit to raise is the budget: " << stop.error().message;
}

TEST_F(LlmClientTest, AnAnswerWhoseRecordingFailsIsStillLoggedAndCharged) {
  auto server = LocalServer([](const httplib::Request&, httplib::Response& res) {
    res.set_content(openai_answer("paid for", "stop", 1000, 500), "application/json");
  });
  ASSERT_TRUE(write_file_atomic(tmp_ / "not-a-dir", "x").ok());
  auto cfg = config("openai:gpt-5", server.url());
  cfg.record_dir = tmp_ / "not-a-dir" / "cassette";
  auto log = tmp_ / "usage.jsonl";
  auto c = client(cfg, log);
  auto r = c->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("record:"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("the answer was paid for: 1500 tokens"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  EXPECT_EQ(c->budget().spent().tokens, 1500);
  EXPECT_GT(c->budget().spent().cost_usd, 0);
  auto records = read_jsonl(log);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["output_tokens"], 500);
  EXPECT_GT(records[0]["cost_usd"].get<double>(), 0);
  EXPECT_NE(records[0]["error"].get<std::string>().find("record:"), std::string::npos);
}
