// Keys come from the environment and go only into request headers: never into a file, a record, a
// cassette, a progress line or an error message. This test drives every path that writes something.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "llm/llm_client.h"
#include "llm/testdata/test_support.h"

using namespace cutegen;
using namespace cutegen::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

class LlmSecretsTest : public LlmTest {};

// Echoes every header it got into its answers and errors: the worst case of a chatty server.
LocalServer leaky_server() {
  auto count = std::make_shared<std::atomic<int>>(0);
  return LocalServer([count](const httplib::Request& req, httplib::Response& res) {
    std::string headers;
    for (const auto& [k, v] : req.headers) headers += k + "=" + v + "; ";
    int n = (*count)++;
    if (n % 3 == 0) {
      res.status = 500;
      res.set_content(json({{"error", {{"message", "oops " + headers}}}}).dump(), "application/json");
    } else if (req.path.find("messages") != std::string::npos) {
      res.set_content(anthropic_answer("fine"), "application/json");
    } else {
      res.set_content(openai_answer("fine"), "application/json");
    }
  });
}

}  // namespace

TEST_F(LlmSecretsTest, KeysAppearInNoFileRecordCassetteProgressOrError) {
  auto server = leaky_server();
  auto usage = tmp_ / "usage.jsonl";
  std::vector<std::string> messages;
  for (const char* s : {"openai:gpt-5", "anthropic:claude-sonnet-4-5"}) {
    auto c = config(s, server.url());
    c.record_dir = tmp_ / "cassette";
    auto client = make_llm_client(c, deps(), usage);
    ASSERT_TRUE(client.ok()) << client.error().message;
    auto ok = (*client)->complete(ask("hello"));  // 500 first (quoting the headers), then an answer
    ASSERT_TRUE(ok.ok()) << ok.error().message;
    // Until the attempts run out: the final error quotes the last (leaky) response.
    c.retry.max_attempts = 1;
    auto failing = make_llm_client(c, deps(), usage);
    ASSERT_TRUE(failing.ok());
    for (int i = 0; i < 3; ++i) {
      auto r = (*failing)->complete(ask("again " + std::to_string(i)));
      if (!r.ok()) messages.push_back(r.error().message);
    }
  }
  ASSERT_FALSE(messages.empty());
  bool quoted_headers = false;
  for (const auto& m : messages) {
    EXPECT_FALSE(contains_secret(m)) << m;
    quoted_headers |= m.find("[redacted]") != std::string::npos;
  }
  EXPECT_TRUE(quoted_headers) << "the server's echo of the key should have been redacted, not absent";
  for (const auto& line : progress()) EXPECT_FALSE(contains_secret(line)) << line;

  // The server did get the keys: they were used, just never written.
  bool openai_key_sent = false, anthropic_key_sent = false;
  for (const auto& r : server.requests()) {
    openai_key_sent |= r.header("Authorization") == std::string("Bearer ") + kOpenAiSecret;
    anthropic_key_sent |= r.header("x-api-key") == kAnthropicSecret;
  }
  EXPECT_TRUE(openai_key_sent);
  EXPECT_TRUE(anthropic_key_sent);
  EXPECT_TRUE(std::filesystem::exists(usage));
  EXPECT_FALSE(std::filesystem::is_empty(tmp_ / "cassette"));
  // tmp_'s destructor scans usage.jsonl and every cassette file for the keys.
}

TEST_F(LlmSecretsTest, AnExecCommandPrintingTheKeyOnStderrDoesNotLeakItIntoTheError) {
  // The command inherits the environment, key included (an `llm`-style CLI needs it); the error quotes
  // the tail of its stderr.
  auto r = make(config("exec:echo \"using $OPENAI_API_KEY and $ANTHROPIC_API_KEY\" >&2; exit 1"))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("using [redacted] and [redacted]"), std::string::npos) << r.error().message;
  EXPECT_FALSE(contains_secret(r.error().message)) << r.error().message;
}
