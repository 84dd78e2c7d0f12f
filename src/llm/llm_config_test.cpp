#include "llm/llm_config.h"

#include <gtest/gtest.h>

#include "llm/cassette.h"
#include "llm/testdata/test_support.h"

using namespace cutegen;
using namespace cutegen::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

class LlmConfigTest : public LlmTest {};

LlmConfig spec(const std::string& s) {
  LlmConfig c;
  auto r = apply_llm_spec(c, s);
  EXPECT_TRUE(r.ok()) << s << ": " << (r.ok() ? "" : r.error().message);
  return c;
}

std::string spec_error(const std::string& s) {
  LlmConfig c;
  auto r = apply_llm_spec(c, s);
  EXPECT_FALSE(r.ok()) << s;
  return r.ok() ? "" : r.error().message;
}

std::string config_error(const json& j) {
  auto r = apply_llm_config({}, j);
  EXPECT_FALSE(r.ok()) << j.dump();
  return r.ok() ? "" : r.error().message;
}

}  // namespace

TEST_F(LlmConfigTest, SpecStringsNameTheBackendAndWhatIdentifiesIt) {
  auto c = spec("openai:gpt-5");
  EXPECT_EQ(c.backend, "openai");
  EXPECT_EQ(c.model, "gpt-5");
  c = spec("anthropic:claude-sonnet-4-5");
  EXPECT_EQ(c.backend, "anthropic");
  EXPECT_EQ(c.model, "claude-sonnet-4-5");
  c = spec("exec:llm -m gpt-5 --option x:y");
  EXPECT_EQ(c.backend, "exec");
  EXPECT_EQ(c.command, "llm -m gpt-5 --option x:y");
  c = spec("replay:tests/cassettes/a");
  EXPECT_EQ(c.dir, "tests/cassettes/a");
  c = spec("manual:/tmp/answers");
  EXPECT_EQ(c.backend, "manual");
  EXPECT_EQ(c.dir, "/tmp/answers");
  c = spec("openai:hf.co/org/model:Q4_K_M");  // Ollama-style names keep their colons
  EXPECT_EQ(c.model, "hf.co/org/model:Q4_K_M");
}

TEST_F(LlmConfigTest, BadSpecStringsSayWhatIsExpected) {
  EXPECT_NE(spec_error("gpt-5").find("expected openai:MODEL"), std::string::npos);
  EXPECT_NE(spec_error("gemini:pro").find("unknown backend 'gemini'"), std::string::npos);
  EXPECT_NE(spec_error("openai:").find("MODEL is missing"), std::string::npos);
  EXPECT_NE(spec_error("replay:").find("DIR is missing"), std::string::npos);
}

TEST_F(LlmConfigTest, ConfigObjectSetsEveryKnownKey) {
  auto j = json::parse(R"({
    "backend": "openai", "model": "gpt-5", "base_url": "http://localhost:8000/v1", "api_key_env": "MY_KEY",
    "max_tokens": 8000, "temperature": 0.3, "reasoning_effort": "high", "max_tokens_param": "max_tokens",
    "timeout_s": 120, "call_deadline_s": 600, "connect_timeout_s": 2.5, "max_attempts": 6, "backoff_initial_s": 0.5, "backoff_max_s": 8,
    "retry_after_max_s": 30, "poll_interval_s": 0.25, "record": "cass", "prices": "p.json",
    "budget": {"max_cost_usd": 5}, "task_budget": {"max_calls": 20}})");
  auto c = apply_llm_config({}, j);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->base_url, "http://localhost:8000/v1");
  EXPECT_EQ(c->api_key_env, "MY_KEY");
  EXPECT_EQ(c->params.max_tokens, 8000);
  EXPECT_EQ(c->params.temperature, 0.3);
  EXPECT_EQ(c->params.reasoning_effort, "high");
  EXPECT_EQ(c->max_tokens_param, "max_tokens");
  EXPECT_EQ(c->timeout, 120s);
  EXPECT_EQ(c->retry.deadline, 600s);
  EXPECT_EQ(c->connect_timeout, 2500ms);
  EXPECT_EQ(c->retry.max_attempts, 6);
  EXPECT_EQ(c->retry.initial_backoff, 500ms);
  EXPECT_EQ(c->retry.max_backoff, 8s);
  EXPECT_EQ(c->retry.max_retry_after, 30s);
  EXPECT_EQ(c->poll_interval, 250ms);
  EXPECT_EQ(c->record_dir, "cass");
  EXPECT_EQ(c->prices, "p.json");
  EXPECT_EQ(c->budget.max_cost_usd, 5.0);
  EXPECT_EQ(c->task_budget.max_calls, 20);
  EXPECT_TRUE(validate_llm_config(*c).ok());
}

TEST_F(LlmConfigTest, DefaultTimeoutsBoundACallToMinutesNotHours) {
  LlmConfig c;
  ASSERT_TRUE(apply_llm_spec(c, "openai:gpt-5").ok());
  EXPECT_EQ(effective_timeout(c), 300s);
  EXPECT_EQ(c.retry.deadline, 15min) << "all attempts and waits of one call together";
  ASSERT_TRUE(apply_llm_spec(c, "manual:dir").ok());
  EXPECT_EQ(effective_timeout(c), 24h) << "a person answering may take a while";
  EXPECT_NE(config_error({{"call_deadline_s", -1}}).find("llm.call_deadline_s must be a positive"), std::string::npos);
}

TEST_F(LlmConfigTest, UnknownKeysAndWrongTypesAreErrors) {
  EXPECT_NE(config_error({{"modle", "gpt-5"}}).find("unknown key llm.modle"), std::string::npos);
  EXPECT_NE(config_error({{"api_key", "sk-..."}}).find("unknown key llm.api_key"), std::string::npos)
      << "keys come from the environment only";
  EXPECT_NE(config_error({{"max_tokens", "lots"}}).find("llm.max_tokens must be a positive integer"), std::string::npos);
  EXPECT_NE(config_error({{"timeout_s", 0}}).find("llm.timeout_s must be a positive"), std::string::npos);
  EXPECT_NE(config_error({{"backend", "gemini"}}).find("llm.backend 'gemini' is unknown"), std::string::npos);
  EXPECT_NE(config_error({{"budget", {{"max_usd", 1}}}}).find("llm.budget.max_usd"), std::string::npos);
  EXPECT_NE(config_error(json::array()).find("must be an object"), std::string::npos);
}

TEST_F(LlmConfigTest, ASpecReplacesTheBackendButKeepsTheRestOfTheConfig) {
  auto c = apply_llm_config({}, {{"backend", "openai"}, {"model", "gpt-5"}, {"timeout_s", 42}, {"temperature", 0.2}});
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(apply_llm_spec(*c, "exec:my-llm").ok());
  EXPECT_EQ(c->backend, "exec");
  EXPECT_EQ(c->command, "my-llm");
  EXPECT_EQ(c->model, "") << "the openai model must not label the exec backend";
  EXPECT_EQ(c->timeout, 42s);
  EXPECT_EQ(c->params.temperature, 0.2);
}

TEST_F(LlmConfigTest, ValidationCatchesMissingAndContradictorySettings) {
  auto invalid = [](LlmConfig c, const std::string& expect) {
    auto v = validate_llm_config(c);
    ASSERT_FALSE(v.ok()) << expect;
    EXPECT_NE(v.error().message.find(expect), std::string::npos) << v.error().message;
  };
  invalid(LlmConfig{}, "pass --llm");
  auto c = spec("openai:gpt-5");
  c.params.thinking_budget = 2048;
  invalid(c, "thinking_budget applies to the anthropic backend");
  c = spec("anthropic:claude-sonnet-4-5");
  c.params.reasoning_effort = "high";
  invalid(c, "reasoning_effort applies to the openai backend");
  c = spec("openai:gpt-5");
  c.base_url = "localhost:8000";
  invalid(c, "must start with http:// or https://");
  LlmConfig no_model;
  no_model.backend = "anthropic";
  invalid(no_model, "needs a model");
}

TEST_F(LlmConfigTest, ABaseUrlFromTheEnvironmentIsCheckedToo) {
  ::setenv("ANTHROPIC_BASE_URL", "api.anthropic.com", 1);
  auto b = make_backend(spec("anthropic:claude-sonnet-4-5"), deps());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("ANTHROPIC_BASE_URL=api.anthropic.com must start with http"), std::string::npos)
      << b.error().message;
}

TEST_F(LlmConfigTest, TheFactoryBuildsEachBackendAndWrapsItForRecording) {
  for (const char* s : {"openai:gpt-5", "anthropic:claude-sonnet-4-5", "exec:cat", "manual:/tmp/x"}) {
    auto c = spec(s);
    auto b = make(c);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->kind(), c.backend);
    c.record_dir = tmp_ / "rec";
    auto recorded = make(c);
    ASSERT_TRUE(recorded);
    EXPECT_NE(dynamic_cast<RecordingBackend*>(recorded.get()), nullptr) << s;
    EXPECT_EQ(recorded->kind(), c.backend);
  }
}

TEST_F(LlmConfigTest, KeysThatRunProgramsOrMoveKeysNeedTrust) {
  for (const char* key : {"command", "base_url", "api_key_env", "prices", "record"})
    EXPECT_TRUE(llm_key_needs_trust(key)) << key;
  for (const char* key : {"backend", "model", "max_tokens", "budget", "task_budget", "timeout_s", "call_deadline_s"})
    EXPECT_FALSE(llm_key_needs_trust(key)) << key;
}
