#pragma once
// A scripted LlmBackend for the tests of every stage that talks to an LLM (the agent loop, prompts):
// answers come from a queue in order, every request is kept for assertions, and running out of answers
// is an Error naming the request, so a loop that calls more often than its test expects fails loudly.
// Header-only so that other stages' test binaries need nothing but cutegen_llm. Thread-safe.
//
//   auto fake = std::make_shared<FakeLlmBackend>();
//   fake->answer("diagnosis: ...").answer("<<<<<<< SEARCH ...", FinishReason::length).fail("HTTP 500");
//   auto client = make_fake_client(fake, {.budget = {.max_calls = 10}});  // Result<unique_ptr<LlmClient>>
//   ... run the loop with **client ...
//   EXPECT_EQ(fake->requests().size(), 3u);
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "llm/llm_client.h"
#include "llm/llm_types.h"
#include "llm/price_table.h"

namespace cutegen {

// Token counts for a scripted answer; reported, nothing cached.
inline Usage fake_usage(long long input_tokens, long long output_tokens) {
  Usage u;
  u.input_tokens = input_tokens;
  u.output_tokens = output_tokens;
  return u;
}

class FakeLlmBackend final : public LlmBackend {
 public:
  using Handler = std::function<Result<LlmResponse>(const LlmRequest&)>;

  explicit FakeLlmBackend(std::string model = "fake-model") : model_(std::move(model)) {}

  // Queues the next answer.
  FakeLlmBackend& answer(std::string text, FinishReason finish = FinishReason::stop,
                         Usage usage = fake_usage(1000, 200)) {
    LlmResponse r;
    r.text = std::move(text);
    r.finish = finish;
    r.finish_detail = finish == FinishReason::length ? "length" : finish == FinishReason::stop ? "stop" : "other";
    r.usage = usage;
    return respond(std::move(r));
  }
  FakeLlmBackend& respond(LlmResponse response) {
    if (response.model.empty()) response.model = model_;
    std::lock_guard<std::mutex> lock(mu_);
    script_.emplace_back(std::move(response));
    return *this;
  }
  // Queues a failed call (what a backend returns after its retries gave up).
  FakeLlmBackend& fail(std::string message) {
    std::lock_guard<std::mutex> lock(mu_);
    script_.emplace_back(Error{std::move(message)});
    return *this;
  }
  // Answers whatever comes once the queue is empty (default: an Error saying the script ran out).
  FakeLlmBackend& otherwise(Handler handler) {
    std::lock_guard<std::mutex> lock(mu_);
    otherwise_ = std::move(handler);
    return *this;
  }

  std::string kind() const override { return "fake"; }
  std::string model() const override { return model_; }

  Result<LlmResponse> complete(const LlmRequest& request) override {
    Handler otherwise;
    std::size_t number = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
      number = requests_.size();
      if (!script_.empty()) {
        Result<LlmResponse> next = std::move(script_.front());
        script_.pop_front();
        return next;
      }
      otherwise = otherwise_;
    }
    if (otherwise) return otherwise(request);
    return Error{fmt::format("fake LLM: no answer scripted for call {} (first user line: \"{}\")", number,
                             first_user_line(request.messages))};
  }

  std::vector<LlmRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  std::size_t pending() const {  // queued answers not served yet
    std::lock_guard<std::mutex> lock(mu_);
    return script_.size();
  }

 private:
  const std::string model_;
  mutable std::mutex mu_;
  std::deque<Result<LlmResponse>> script_;
  Handler otherwise_;
  std::vector<LlmRequest> requests_;
};

// Lends a backend to an LlmClient (which owns its backend) while the caller keeps a handle on it.
class SharedBackend final : public LlmBackend {
 public:
  explicit SharedBackend(std::shared_ptr<LlmBackend> inner) : inner_(std::move(inner)) {}
  std::string kind() const override { return inner_->kind(); }
  std::string model() const override { return inner_->model(); }
  bool costs_money() const override { return inner_->costs_money(); }
  std::optional<int> default_max_tokens() const override { return inner_->default_max_tokens(); }
  Result<LlmResponse> complete(const LlmRequest& request) override { return inner_->complete(request); }

 private:
  std::shared_ptr<LlmBackend> inner_;
};

// An LlmClient around `fake`. Without `prices` the fake's model costs $1 per million tokens in and $2 out,
// so cost budgets can be tested too. Fails only when options.usage_log cannot be opened.
inline Result<std::unique_ptr<LlmClient>> make_fake_client(const std::shared_ptr<FakeLlmBackend>& fake,
                                                           LlmClientOptions options = {},
                                                           std::optional<PriceTable> prices = std::nullopt) {
  if (!prices) {
    nlohmann::json table = {{"models", {{fake->model(), {{"input", 1.0}, {"output", 2.0}}}}}};
    auto parsed = PriceTable::parse(table.dump(), "fake prices");
    if (!parsed) return parsed.error();
    prices = std::move(*parsed);
  }
  return LlmClient::create(std::make_unique<SharedBackend>(fake), std::move(*prices), std::move(options));
}

}  // namespace cutegen
