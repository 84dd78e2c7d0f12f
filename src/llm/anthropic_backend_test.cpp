#include "llm/anthropic_backend.h"

#include <gtest/gtest.h>

#include <atomic>

#include "llm/testdata/test_support.h"

using namespace cutegen;
using namespace cutegen::testing;
using nlohmann::json;

namespace {

class AnthropicBackendTest : public LlmTest {};

LocalServer answering(std::string body, int status = 200) {
  return LocalServer([body, status](const httplib::Request&, httplib::Response& res) {
    res.status = status;
    res.set_content(body, "application/json");
  });
}

}  // namespace

TEST_F(AnthropicBackendTest, SendsHeadersTopLevelSystemAndTheRequiredMaxTokens) {
  auto server = answering(anthropic_answer("answer"));
  auto backend = make(config("anthropic:claude-sonnet-4-5", server.url()));
  auto request = ask("write a kernel", "you write CuTe");
  request.messages.push_back({Role::assistant, "a first try"});
  request.messages.push_back({Role::user, "now faster"});
  auto r = backend->complete(request);
  ASSERT_TRUE(r.ok()) << r.error().message;

  auto got = server.requests().at(0);
  EXPECT_EQ(got.path, "/v1/messages");
  EXPECT_EQ(got.header("x-api-key"), kAnthropicSecret);
  EXPECT_EQ(got.header("anthropic-version"), "2023-06-01");
  EXPECT_FALSE(got.has_header("Authorization"));
  auto body = json::parse(got.body);
  EXPECT_EQ(body["model"], "claude-sonnet-4-5");
  EXPECT_EQ(body["system"], "you write CuTe");
  EXPECT_EQ(body["max_tokens"], kAnthropicDefaultMaxTokens);
  ASSERT_EQ(body["messages"].size(), 3u) << "the system prompt is not a message";
  EXPECT_EQ(body["messages"][0], json({{"role", "user"}, {"content", "write a kernel"}}));
  EXPECT_EQ(body["messages"][1], json({{"role", "assistant"}, {"content", "a first try"}}));
  EXPECT_EQ(body["messages"][2], json({{"role", "user"}, {"content", "now faster"}}));
  EXPECT_FALSE(body.contains("temperature"));
  EXPECT_FALSE(body.contains("thinking"));

  EXPECT_EQ(r->text, "answer");
  EXPECT_EQ(r->finish, FinishReason::stop);
  EXPECT_EQ(r->finish_detail, "end_turn");
  EXPECT_EQ(r->model, "claude-sonnet-4-5-20250929");
  EXPECT_EQ(r->usage.input_tokens, 100);
  EXPECT_EQ(r->usage.output_tokens, 50);
}

TEST_F(AnthropicBackendTest, ThinkingIsRequestedWhenConfiguredAndThinkingBlocksAreNotTheAnswer) {
  json answer = json::parse(anthropic_answer("ignored"));
  answer["content"] = json::array({{{"type", "thinking"}, {"thinking", "let me tile by 128"}, {"signature", "sig"}},
                                   {{"type", "text"}, {"text", "part one, "}},
                                   {{"type", "redacted_thinking"}, {"data", "xyz"}},
                                   {{"type", "text"}, {"text", "part two"}}});
  auto server = answering(answer.dump());
  auto c = config("anthropic:claude-opus-4-5", server.url());
  c.params.thinking_budget = 4096;
  c.params.max_tokens = 20000;
  c.params.temperature = 1.0;
  auto client = make_llm_client(c, deps());
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto r = (*client)->complete(ask("hi"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->response.text, "part one, part two");
  auto body = json::parse(server.requests().at(0).body);
  EXPECT_EQ(body["thinking"], json({{"type", "enabled"}, {"budget_tokens", 4096}}));
  EXPECT_EQ(body["max_tokens"], 20000);
  EXPECT_EQ(body["temperature"], 1.0);
}

TEST_F(AnthropicBackendTest, ThinkingBudgetNotBelowMaxTokensFailsBeforeSending) {
  auto server = answering(anthropic_answer("x"));
  auto backend = make(config("anthropic:claude-opus-4-5", server.url()));
  auto request = ask("hi");
  request.params.thinking_budget = 16000;  // the default max_tokens
  auto r = backend->complete(request);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("must be below max_tokens 16000"), std::string::npos) << r.error().message;
  EXPECT_EQ(server.request_count(), 0u);
}

TEST_F(AnthropicBackendTest, MaxTokensStopIsReportedAsLength) {
  auto server = answering(anthropic_answer("cut he", "max_tokens"));
  auto r = make(config("anthropic:claude-sonnet-4-5", server.url()))->complete(ask("hi"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->finish, FinishReason::length);
  EXPECT_EQ(r->finish_detail, "max_tokens");
}

TEST_F(AnthropicBackendTest, CacheReadsCountAsCachedInput) {
  json answer = json::parse(anthropic_answer("ok"));
  answer["usage"] = {{"input_tokens", 10}, {"output_tokens", 7}, {"cache_read_input_tokens", 900},
                     {"cache_creation_input_tokens", 90}};
  auto server = answering(answer.dump());
  auto r = make(config("anthropic:claude-sonnet-4-5", server.url()))->complete(ask("hi"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->usage.input_tokens, 1000);  // Anthropic reports the three parts separately
  EXPECT_EQ(r->usage.cached_input_tokens, 900);
  EXPECT_EQ(r->usage.cache_write_tokens, 90);
  EXPECT_EQ(r->usage.output_tokens, 7);
}

// The loop marks its system message as the run's stable prefix: it goes out as a text block with a
// cache breakpoint, and the messages after it as they always did.
TEST_F(AnthropicBackendTest, ACachePrefixMessageCarriesACacheBreakpoint) {
  auto server = answering(anthropic_answer("answer"));
  auto backend = make(config("anthropic:claude-sonnet-4-5", server.url()));
  LlmRequest request;
  request.messages = {{Role::system, "the rules and the problem", true}, {Role::user, "one optimisation step"}};
  ASSERT_TRUE(backend->complete(request).ok());
  auto body = json::parse(server.requests().at(0).body);
  EXPECT_EQ(body["system"], json::array({{{"type", "text"},
                                          {"text", "the rules and the problem"},
                                          {"cache_control", {{"type", "ephemeral"}}}}}))
      << body.dump();
  EXPECT_EQ(body["messages"], json::array({{{"role", "user"}, {"content", "one optimisation step"}}}));
  // A marked user message gets the breakpoint on its block.
  request.messages = {{Role::user, "a long shared question", true}, {Role::user, "the variable part"}};
  ASSERT_TRUE(backend->complete(request).ok());
  body = json::parse(server.requests().at(1).body);
  EXPECT_FALSE(body.contains("system"));
  EXPECT_EQ(body["messages"][0]["content"][0]["cache_control"], json({{"type", "ephemeral"}})) << body.dump();
  EXPECT_EQ(body["messages"][1]["content"], "the variable part");
}

TEST_F(AnthropicBackendTest, ANegativeUsageCountIsRefusedNotChargedAsAGift) {
  json answer = json::parse(anthropic_answer("ok"));
  answer["usage"] = {{"input_tokens", 10}, {"output_tokens", -10'000'000}};
  auto server = answering(answer.dump());
  auto r = make(config("anthropic:claude-sonnet-4-5", server.url()))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("anthropic: unexpected response (usage.output_tokens is -10000000, not a token count"),
            std::string::npos)
      << r.error().message;
}

TEST_F(AnthropicBackendTest, UnauthorizedNamesTheVariableAndIsNotRetried) {
  auto server = answering(R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}})", 401);
  auto r = make(config("anthropic:claude-sonnet-4-5", server.url()))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_NE(r.error().message.find("invalid x-api-key"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("ANTHROPIC_API_KEY"), std::string::npos) << r.error().message;
  EXPECT_FALSE(contains_secret(r.error().message));
}

TEST_F(AnthropicBackendTest, OverloadedIsRetried) {
  std::atomic<int> calls{0};
  auto server = LocalServer([&calls](const httplib::Request&, httplib::Response& res) {
    if (calls++ == 0) {
      res.status = 529;
      res.set_content(R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})", "application/json");
    } else {
      res.set_content(anthropic_answer("second time"), "application/json");
    }
  });
  auto r = make(config("anthropic:claude-sonnet-4-5", server.url()))->complete(ask("hi"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, "second time");
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(sleeps_.waits().size(), 1u);
}

TEST_F(AnthropicBackendTest, MalformedJsonIsAClearError) {
  auto server = answering("{\"content\": [");
  auto r = make(config("anthropic:claude-sonnet-4-5", server.url()))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("anthropic: unexpected response (not JSON): {\"content\": ["), std::string::npos)
      << r.error().message;
}

TEST_F(AnthropicBackendTest, ResponseWithoutContentIsAClearError) {
  auto server = answering(R"({"type": "message", "stop_reason": "end_turn"})");
  auto r = make(config("anthropic:claude-sonnet-4-5", server.url()))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no content list"), std::string::npos) << r.error().message;
}

TEST_F(AnthropicBackendTest, ThinkingWithAnotherTemperatureThanOneFailsBeforeSending) {
  auto server = answering(anthropic_answer("x"));
  auto backend = make(config("anthropic:claude-opus-4-5", server.url()));
  auto request = ask("hi");
  request.params.thinking_budget = 2048;
  request.params.temperature = 0.2;
  auto r = backend->complete(request);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("temperature 0.2 cannot be combined with thinking_budget"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(server.request_count(), 0u);
}
