#include "llm/cassette.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/fs.h"
#include "common/sha256.h"
#include "llm/request_key.h"
#include "llm/testdata/test_support.h"

using namespace cutegen;
using namespace cutegen::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

class ReplayTest : public LlmTest {};

// Answers every request with a body chosen from the prompt, so different requests get different answers.
LocalServer echoing_server() {
  return LocalServer([](const httplib::Request& req, httplib::Response& res) {
    auto body = json::parse(req.body);
    std::string prompt = body["messages"].back()["content"];
    bool cut = prompt.find("long") != std::string::npos;
    res.set_content(openai_answer("answer to " + prompt, cut ? "length" : "stop", 1000 + prompt.size(), 77),
                    "application/json");
  });
}

}  // namespace

TEST(ReplayRequestHash, IsStableAndCoversKindModelMessagesAndParameters) {
  LlmRequest r;
  r.messages = {{Role::system, "sys"}, {Role::user, "hi"}};
  std::string h = request_hash("openai", "gpt-5", r);
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h, request_hash("openai", "gpt-5", r));
  // Canonical JSON: keys sorted, no whitespace; pinned so an accidental format change is noticed.
  EXPECT_EQ(request_identity("openai", "gpt-5", r).dump(),
            R"({"backend":"openai","messages":[{"role":"system","text":"sys"},{"role":"user","text":"hi"}],)"
            R"("model":"gpt-5","params":{},"v":1})");
  EXPECT_EQ(h, sha256_hex(request_identity("openai", "gpt-5", r).dump()));

  EXPECT_NE(h, request_hash("anthropic", "gpt-5", r));
  EXPECT_NE(h, request_hash("openai", "gpt-5-mini", r));
  auto other = r;
  other.messages[1].text = "hi!";
  EXPECT_NE(h, request_hash("openai", "gpt-5", other));
  other = r;
  other.messages[0].role = Role::user;
  EXPECT_NE(h, request_hash("openai", "gpt-5", other));
  other = r;
  other.params.temperature = 0.5;
  EXPECT_NE(h, request_hash("openai", "gpt-5", other));
  other = r;
  other.params.max_tokens = 10;
  EXPECT_NE(h, request_hash("openai", "gpt-5", other));
}

TEST_F(ReplayTest, RecordingThenReplayingGivesIdenticalTextUsageAndFinish) {
  auto cassette = tmp_ / "cassette";
  std::vector<LlmRequest> requests = {ask("first", "sys"), ask("a long one"), ask("third")};
  requests[2].params.max_tokens = 500;
  std::vector<LlmResponse> recorded;
  {
    auto server = echoing_server();
    auto c = config("openai:gpt-5", server.url());
    c.record_dir = cassette;
    auto backend = make(c);
    for (const auto& request : requests) {
      auto r = backend->complete(request);
      ASSERT_TRUE(r.ok()) << r.error().message;
      recorded.push_back(*r);
    }
    EXPECT_EQ(server.request_count(), 3u);
  }  // the server is gone: replay must not need it

  int files = 0;
  for (const auto& entry : fs::directory_iterator(cassette)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    auto j = json::parse(*read_file(entry.path()));
    EXPECT_EQ(entry.path().filename().string(), j["hash"].get<std::string>() + ".json");
    EXPECT_EQ(j["request"]["backend"], "openai");
    EXPECT_EQ(j["request"]["model"], "gpt-5");
    EXPECT_FALSE(j.dump().find("Authorization") != std::string::npos) << "headers must not be recorded";
  }
  EXPECT_EQ(files, 3);

  auto replay = make(config("replay:" + cassette.string()));
  EXPECT_EQ(replay->model(), "gpt-5");
  for (std::size_t i = 0; i < requests.size(); ++i) {
    auto r = replay->complete(requests[i]);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->text, recorded[i].text);
    EXPECT_EQ(r->finish, recorded[i].finish);
    EXPECT_EQ(r->finish_detail, recorded[i].finish_detail);
    EXPECT_EQ(r->model, recorded[i].model);
    EXPECT_EQ(r->usage.input_tokens, recorded[i].usage.input_tokens);
    EXPECT_EQ(r->usage.cached_input_tokens, recorded[i].usage.cached_input_tokens);
    EXPECT_EQ(r->usage.output_tokens, recorded[i].usage.output_tokens);
    EXPECT_EQ(r->usage.reasoning_tokens, recorded[i].usage.reasoning_tokens);
    EXPECT_TRUE(r->replayed);
  }
  EXPECT_EQ(recorded[1].finish, FinishReason::length) << "the truncated answer was recorded as such";
}

TEST_F(ReplayTest, AMissNamesTheRequestHashAndItsFirstUserLine) {
  auto cassette = tmp_ / "cassette";
  {
    auto server = echoing_server();
    auto c = config("openai:gpt-5", server.url());
    c.record_dir = cassette;
    ASSERT_TRUE(make(c)->complete(ask("recorded")).ok());
  }
  auto replay = make(config("replay:" + cassette.string()));
  auto request = ask("optimise this GEMM\nsecond line");
  auto r = replay->complete(request);
  ASSERT_FALSE(r.ok());
  const auto& m = r.error().message;
  EXPECT_NE(m.find(request_hash("openai", "gpt-5", request)), std::string::npos) << m;
  EXPECT_NE(m.find("\"optimise this GEMM\""), std::string::npos) << m;
  EXPECT_EQ(m.find("second line"), std::string::npos) << m;
  EXPECT_NE(m.find(cassette.string()), std::string::npos) << m;

  auto changed = ask("recorded");
  changed.params.temperature = 0.1;  // the same prompt with other parameters is another request
  EXPECT_FALSE(replay->complete(changed).ok());
  EXPECT_TRUE(replay->complete(ask("recorded")).ok());
}

TEST_F(ReplayTest, RecordingWrapsAnyBackend) {
  auto cassette = tmp_ / "cassette";
  auto c = config("exec:tr a-z A-Z");
  c.record_dir = cassette;
  auto recorded = make(c)->complete(ask("shout"));
  ASSERT_TRUE(recorded.ok()) << recorded.error().message;
  auto replayed = make(config("replay:" + cassette.string()))->complete(ask("shout"));
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  EXPECT_EQ(replayed->text, "=== USER ===\nSHOUT\n");
  EXPECT_EQ(replayed->text, recorded->text);
}

TEST_F(ReplayTest, FailedCallsAreNotRecorded) {
  auto cassette = tmp_ / "cassette";
  auto c = config("exec:exit 1");
  c.record_dir = cassette;
  EXPECT_FALSE(make(c)->complete(ask("x")).ok());
  EXPECT_FALSE(fs::exists(cassette) && !fs::is_empty(cassette));
}

TEST_F(ReplayTest, MissingCassetteDirectoryIsAnError) {
  auto backend = make_backend(config("replay:" + (tmp_ / "nope").string()), deps());
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(backend.error().message.find("does not exist"), std::string::npos) << backend.error().message;
}

TEST_F(ReplayTest, ACorruptEntryIsAnErrorNamingTheFile) {
  auto cassette = tmp_ / "cassette";
  ASSERT_TRUE(write_file_atomic(cassette / "junk.json", "{not json").ok());
  auto backend = make_backend(config("replay:" + cassette.string()), deps());
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(backend.error().message.find("junk.json"), std::string::npos) << backend.error().message;
}

// Demo cassettes: prompts carry live measurements, so entries are matched by position, guarded by the
// first user line (the kind of question).
TEST_F(ReplayTest, AMatchInOrderCassetteAnswersChangedPromptsInRecordedOrder) {
  auto cassette = tmp_ / "cassette";
  {
    auto server = echoing_server();
    auto c = config("openai:gpt-5", server.url());
    c.record_dir = cassette;
    auto backend = make(c);
    ASSERT_TRUE(backend->complete(ask("synthesize\neager 0.61 ms")).ok());
    ASSERT_TRUE(backend->complete(ask("optimize step 1\nbest 3.10 ms")).ok());
  }
  auto order = read_file(cassette / "recorded-order");
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(std::count(order->begin(), order->end(), '\n'), 2);
  {
    auto exact_only = make(config("replay:" + cassette.string()));
    EXPECT_FALSE(exact_only->complete(ask("synthesize\neager 0.58 ms")).ok()) << "without match-in-order a miss is a miss";
  }
  ASSERT_TRUE(write_file_atomic(cassette / "match-in-order", *order).ok());
  auto replay = make(config("replay:" + cassette.string()));
  auto first = replay->complete(ask("synthesize\neager 0.58 ms"));  // other numbers, same question
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->text, "answer to synthesize\neager 0.61 ms");
  auto off_script = replay->complete(ask("diagnose\nmismatch"));
  ASSERT_FALSE(off_script.ok());
  EXPECT_NE(off_script.error().message.find("off the cassette's script at entry 2"), std::string::npos)
      << off_script.error().message;
  EXPECT_NE(off_script.error().message.find("\"optimize step 1\""), std::string::npos);
  auto second = replay->complete(ask("optimize step 1\nbest 2.95 ms"));
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->text, "answer to optimize step 1\nbest 3.10 ms");
}

// A run interrupted after two answers and resumed: the loop takes those two from its log, and the
// cassette's next entry must answer the first question the resumed run really asks.
TEST_F(ReplayTest, AMatchInOrderCassetteSkipsAnswersAResumedRunTookFromItsLog) {
  auto cassette = tmp_ / "cassette";
  {
    auto server = echoing_server();
    auto c = config("openai:gpt-5", server.url());
    c.record_dir = cassette;
    auto backend = make(c);
    for (const char* q : {"synthesize\neager 0.61 ms", "repair\ncompile error", "optimize step 1\nbest 3.10 ms"})
      ASSERT_TRUE(backend->complete(ask(q)).ok());
  }
  auto order = read_file(cassette / "recorded-order");
  ASSERT_TRUE(order.ok());
  ASSERT_TRUE(write_file_atomic(cassette / "match-in-order", *order).ok());
  auto replay = make(config("replay:" + cassette.string()));
  replay->answered_from_log(ask("synthesize\neager 0.58 ms"));
  replay->answered_from_log(ask("repair\ncompile error"));
  replay->answered_from_log(ask("something the cassette never saw"));  // leaves the position alone
  auto next = replay->complete(ask("optimize step 1\nbest 2.95 ms"));
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(next->text, "answer to optimize step 1\nbest 3.10 ms");
}

TEST_F(ReplayTest, AMatchInOrderFileNamingAMissingEntryIsRefused) {
  auto cassette = tmp_ / "cassette";
  {
    auto server = echoing_server();
    auto c = config("openai:gpt-5", server.url());
    c.record_dir = cassette;
    ASSERT_TRUE(make(c)->complete(ask("hello")).ok());
  }
  ASSERT_TRUE(write_file_atomic(cassette / "match-in-order", "nonexistent.json\n").ok());
  auto c = config("replay:" + cassette.string());
  auto backend = make_backend(c, deps());
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(backend.error().message.find("nonexistent.json"), std::string::npos);
}
