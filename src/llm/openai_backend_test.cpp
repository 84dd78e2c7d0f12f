#include "llm/openai_backend.h"

#include <gtest/gtest.h>

#include "common/fs.h"
#include "llm/request_key.h"
#include "llm/testdata/test_support.h"

using namespace cutegen;
using namespace cutegen::testing;
using nlohmann::json;

namespace {

class OpenAiBackendTest : public LlmTest {};

LocalServer answering(std::string body, int status = 200) {
  return LocalServer([body, status](const httplib::Request&, httplib::Response& res) {
    res.status = status;
    res.set_content(body, "application/json");
  });
}

}  // namespace

TEST_F(OpenAiBackendTest, SendsModelMessagesAndKeyAndNoUnsetParameters) {
  auto server = answering(openai_answer("__global__ void k() {}"));
  auto backend = make(config("openai:gpt-5", server.url() + "/v1"));
  auto r = backend->complete(ask("write a kernel", "you write CuTe"));
  ASSERT_TRUE(r.ok()) << r.error().message;

  ASSERT_EQ(server.request_count(), 1u);
  auto got = server.requests()[0];
  EXPECT_EQ(got.path, "/v1/chat/completions");
  EXPECT_EQ(got.header("Authorization"), std::string("Bearer ") + kOpenAiSecret);
  EXPECT_EQ(got.header("Content-Type"), "application/json");
  auto body = json::parse(got.body);
  EXPECT_EQ(body["model"], "gpt-5");
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][0], json({{"role", "system"}, {"content", "you write CuTe"}}));
  EXPECT_EQ(body["messages"][1], json({{"role", "user"}, {"content", "write a kernel"}}));
  for (const char* absent : {"max_completion_tokens", "max_tokens", "temperature", "reasoning_effort"})
    EXPECT_FALSE(body.contains(absent)) << absent << " was sent although it is unset";

  EXPECT_EQ(r->text, "__global__ void k() {}");
  EXPECT_EQ(r->finish, FinishReason::stop);
  EXPECT_EQ(r->model, "gpt-5-2025-08-07");
  EXPECT_EQ(r->usage.input_tokens, 100);
  EXPECT_EQ(r->usage.cached_input_tokens, 25);
  EXPECT_EQ(r->usage.output_tokens, 50);
  EXPECT_EQ(r->usage.reasoning_tokens, 10);
  EXPECT_TRUE(r->usage.reported);
  EXPECT_EQ(r->attempts, 1);
}

TEST_F(OpenAiBackendTest, SendsParametersThatAreSet) {
  auto server = answering(openai_answer("ok"));
  auto backend = make(config("openai:o3", server.url()));
  auto request = ask("hi");
  request.params.max_tokens = 1234;
  request.params.temperature = 0.25;
  request.params.reasoning_effort = "high";
  ASSERT_TRUE(backend->complete(request).ok());
  auto body = json::parse(server.requests().at(0).body);
  EXPECT_EQ(body["max_completion_tokens"], 1234);
  EXPECT_EQ(body["temperature"], 0.25);
  EXPECT_EQ(body["reasoning_effort"], "high");
  EXPECT_FALSE(body.contains("max_tokens"));
}

TEST_F(OpenAiBackendTest, OlderServersCanGetMaxTokensInstead) {
  auto server = answering(openai_answer("ok"));
  auto c = config("openai:llama", server.url());
  c.max_tokens_param = "max_tokens";
  c.params.max_tokens = 99;  // from the config, for every request
  auto client = make_llm_client(c, deps());
  ASSERT_TRUE(client.ok()) << client.error().message;
  ASSERT_TRUE((*client)->complete(ask("hi")).ok());
  auto body = json::parse(server.requests().at(0).body);
  EXPECT_EQ(body["max_tokens"], 99);
  EXPECT_FALSE(body.contains("max_completion_tokens"));
}

TEST_F(OpenAiBackendTest, BaseUrlComesFromTheEnvironmentWhenNotConfigured) {
  auto server = answering(openai_answer("from env"));
  ::setenv("OPENAI_BASE_URL", (server.url() + "/v1/").c_str(), 1);
  auto backend = make(config("openai:gpt-5"));
  auto r = backend->complete(ask("hi"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, "from env");
  EXPECT_EQ(server.requests().at(0).path, "/v1/chat/completions");
}

TEST_F(OpenAiBackendTest, TruncatedAnswerIsReportedAsLengthNotAsComplete) {
  auto server = answering(openai_answer("template <class T> struct Half", "length"));
  auto r = make(config("openai:gpt-5", server.url()))->complete(ask("hi"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->finish, FinishReason::length);
  EXPECT_EQ(r->finish_detail, "length");
}

TEST_F(OpenAiBackendTest, ReasoningModelThatSpentTheLimitThinkingGivesAnEmptyTruncatedAnswer) {
  json body = json::parse(openai_answer("", "length"));
  body["choices"][0]["message"]["content"] = nullptr;
  auto server = answering(body.dump());
  auto r = make(config("openai:gpt-5", server.url()))->complete(ask("hi"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, "");
  EXPECT_EQ(r->finish, FinishReason::length);
}

TEST_F(OpenAiBackendTest, ContentFilterIsFinishOther) {
  auto server = answering(openai_answer("", "content_filter"));
  auto r = make(config("openai:gpt-5", server.url()))->complete(ask("hi"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->finish, FinishReason::other);
  EXPECT_EQ(r->finish_detail, "content_filter");
}

TEST_F(OpenAiBackendTest, MalformedJsonIsAClearErrorQuotingTheBody) {
  auto server = LocalServer([](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html>Bad Gateway from a proxy" + std::string(500, '!'), "text/html");
  });
  auto r = make(config("openai:gpt-5", server.url()))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  const auto& m = r.error().message;
  EXPECT_NE(m.find("openai: unexpected response (not JSON)"), std::string::npos) << m;
  EXPECT_NE(m.find("<html>Bad Gateway from a proxy"), std::string::npos) << m;
  EXPECT_LT(m.size(), 320u) << "the body must be quoted only in part: " << m;
  EXPECT_EQ(m.find('\n'), std::string::npos);
}

TEST_F(OpenAiBackendTest, ResponseWithoutChoicesIsAClearError) {
  auto server = answering(R"({"object": "chat.completion", "model": "x"})");
  auto r = make(config("openai:gpt-5", server.url()))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no choices"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(R"("object": "chat.completion")"), std::string::npos) << r.error().message;
}

TEST_F(OpenAiBackendTest, MissingUsageIsFlaggedNotInvented) {
  json body = json::parse(openai_answer("ok"));
  body.erase("usage");
  auto server = answering(body.dump());
  auto r = make(config("openai:gpt-5", server.url()))->complete(ask("hi"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->usage.reported);
  EXPECT_EQ(r->usage.total(), 0);
}

TEST_F(OpenAiBackendTest, ARefusalIsAnUnfinishedAnswerThatKeepsItsUsage) {
  json body = json::parse(openai_answer("", "stop", 1200, 40));
  body["choices"][0]["message"]["content"] = nullptr;
  body["choices"][0]["message"]["refusal"] = "I can't help with that.";
  auto server = answering(body.dump());
  auto log = tmp_ / "usage.jsonl";
  auto client = make_llm_client(config("openai:gpt-5", server.url()), deps(), log);
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto r = (*client)->complete(ask("hi"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->response.finish, FinishReason::other);
  EXPECT_EQ(r->response.finish_detail, "refusal");
  EXPECT_EQ(r->response.text, "I can't help with that.");
  EXPECT_EQ((*client)->budget().spent().tokens, 1240) << "the refused call was paid for";
  auto logged = read_file(log);
  ASSERT_TRUE(logged.ok());
  EXPECT_NE(logged->find("\"output_tokens\":40"), std::string::npos) << *logged;
}

TEST_F(OpenAiBackendTest, UnauthorizedIsNotRetriedNamesTheVariableAndNeverQuotesTheKey) {
  // Some servers echo what they got; the key must still not reach the message.
  auto server = LocalServer([](const httplib::Request& req, httplib::Response& res) {
    res.status = 401;
    res.set_content(json({{"error", {{"message", "Incorrect API key provided: " + req.get_header_value("Authorization")}}}}).dump(),
                    "application/json");
  });
  auto r = make(config("openai:gpt-5", server.url()))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(server.request_count(), 1u) << "401 must not be retried";
  EXPECT_TRUE(sleeps_.waits().empty());
  const auto& m = r.error().message;
  EXPECT_NE(m.find("HTTP 401"), std::string::npos) << m;
  EXPECT_NE(m.find("OPENAI_API_KEY"), std::string::npos) << m;
  EXPECT_NE(m.find("Incorrect API key provided: Bearer [redacted]"), std::string::npos) << m;
  EXPECT_FALSE(contains_secret(m)) << m;
}

TEST_F(OpenAiBackendTest, UnsetKeyVariableSendsNoAuthAndSaysToSetIt) {
  auto server = answering(R"({"error": {"message": "missing key"}})", 401);
  auto c = config("openai:gpt-5", server.url());
  c.api_key_env = "CUTEGEN_TEST_UNSET_KEY";
  ::unsetenv("CUTEGEN_TEST_UNSET_KEY");
  auto r = make(c)->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(server.requests().at(0).has_header("Authorization"));
  EXPECT_NE(r.error().message.find("CUTEGEN_TEST_UNSET_KEY is not set"), std::string::npos) << r.error().message;
}

TEST_F(OpenAiBackendTest, ForbiddenIsNotRetried) {
  auto server = answering(R"({"error": {"message": "model not available on your plan"}})", 403);
  auto r = make(config("openai:gpt-5", server.url()))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_NE(r.error().message.find("model not available on your plan"), std::string::npos);
  EXPECT_NE(r.error().message.find("OPENAI_API_KEY"), std::string::npos);
}

TEST_F(OpenAiBackendTest, BadRequestIsNotRetriedAndQuotesTheApiMessage) {
  auto server = answering(R"({"error": {"message": "Unsupported parameter: 'temperature'"}})", 400);
  auto r = make(config("openai:gpt-5", server.url()))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_NE(r.error().message.find("HTTP 400"), std::string::npos);
  EXPECT_NE(r.error().message.find("Unsupported parameter: 'temperature'"), std::string::npos) << r.error().message;
}

// Issue 32: an error quoting the server's reply carried its escape sequences to the terminal.
TEST_F(OpenAiBackendTest, AnErrorQuotingTheServerShowsItsControlCharactersEscaped) {
  auto server = answering(R"({"error": {"message": "bad\u001b]52;c;cm0gLXJmIH4=\u0007 request\rall good\u009b2J"}})", 400);
  auto r = make(config("openai:gpt-5", server.url()))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("bad\\x1b]52;c;cm0gLXJmIH4=\\x07 request all good\\u009b2J"), std::string::npos) << m;
  for (char c : m) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) << "raw control in: " << m;
  auto garbage = answering("\x1b[2J\x1b[H not json", 200);
  auto g = make(config("openai:gpt-5", garbage.url()))->complete(ask("hi"));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("(not JSON): \\x1b[2J\\x1b[H not json"), std::string::npos) << g.error().message;
}

TEST_F(OpenAiBackendTest, ThinkingBudgetIsRejectedBeforeSending) {
  auto server = answering(openai_answer("ok"));
  auto backend = make(config("openai:gpt-5", server.url()));
  auto request = ask("hi");
  request.params.thinking_budget = 2000;
  auto r = backend->complete(request);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("reasoning_effort"), std::string::npos);
  EXPECT_EQ(server.request_count(), 0u);
}

TEST_F(OpenAiBackendTest, BytesThatAreNotUtf8InAPromptAreSentReplacedNotThrown) {
  // A compiler log quoted into a prompt may carry Latin-1 bytes; JSON cannot hold them.
  auto server = answering(openai_answer("ok"));
  auto request = ask("nvcc said: caf\xe9 \xff");
  auto r = make(config("openai:gpt-5", server.url()))->complete(request);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto body = json::parse(server.requests().at(0).body);
  EXPECT_EQ(body["messages"][0]["content"], "nvcc said: caf\xef\xbf\xbd \xef\xbf\xbd");
  EXPECT_EQ(request_hash("openai", "gpt-5", request), request_hash("openai", "gpt-5", request));
}
