#pragma once
// Cassettes: one JSON file per request, DIR/<request hash>.json, holding the request identity (never
// headers or keys) and the response. `--record DIR` wraps any backend and writes them; `replay:DIR`
// answers from them and treats a miss as an error, which makes agent-loop tests and demos deterministic.
//
// Recording also appends each entry's file name to DIR/recorded-order. A cassette that holds a file
// named DIR/match-in-order (same format: one entry file name per line) is a *demo* cassette: a request
// with no exact match gets the next entry of that order, provided the recorded request's first user
// line equals this request's. Demos need this because the loop's prompts carry live measurements
// (baseline and kernel times) that differ on every run and every GPU; the first line still pins the
// kind of question, so a loop that goes off script fails loudly instead of receiving wrong answers.
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/llm_types.h"

namespace cutegen {

inline constexpr int kCassetteFormat = 1;

nlohmann::json cassette_entry(const std::string& kind, const std::string& model, const LlmRequest& request,
                              const LlmResponse& response);

class RecordingBackend final : public LlmBackend {
 public:
  RecordingBackend(std::unique_ptr<LlmBackend> inner, std::filesystem::path dir);

  std::string kind() const override { return inner_->kind(); }
  std::string model() const override { return inner_->model(); }
  bool costs_money() const override { return inner_->costs_money(); }
  std::optional<int> default_max_tokens() const override { return inner_->default_max_tokens(); }
  // Failed calls are not recorded. An answer whose recording cannot be written comes back with
  // recording_error set: the user asked for the recording, but the answer was paid for and its usage
  // must still be logged (LlmClient then fails the call).
  Result<LlmResponse> complete(const LlmRequest& request) override;

 private:
  std::unique_ptr<LlmBackend> inner_;
  std::filesystem::path dir_;
  std::mutex order_mu_;
};

class ReplayBackend final : public LlmBackend {
 public:
  // Scans DIR once for the (backend, model) pairs it holds recordings of; a request is looked up under
  // each pair's hash, so `replay:DIR` needs no model of its own.
  static Result<std::unique_ptr<ReplayBackend>> open(const std::filesystem::path& dir);

  std::string kind() const override { return "replay"; }
  bool costs_money() const override { return false; }
  std::string model() const override;  // the recorded model when there is exactly one
  Result<LlmResponse> complete(const LlmRequest& request) override;
  // A resumed run's logged answers were given without asking: the match-in-order position moves past
  // each one, so the first new question meets the entry recorded for it, not the cassette's first.
  void answered_from_log(const LlmRequest& request) override;

 private:
  // The first user line of the match-in-order entry at the cursor ("" if unreadable).
  Result<std::string> first_line_at_cursor() const;
  ReplayBackend(std::filesystem::path dir, std::vector<std::pair<std::string, std::string>> identities,
                std::vector<std::string> order);
  Result<LlmResponse> load_entry(const std::filesystem::path& path) const;
  std::filesystem::path dir_;
  std::vector<std::pair<std::string, std::string>> identities_;  // (backend kind, model), sorted
  std::vector<std::string> order_;                                // match-in-order entries; empty: exact only
  std::mutex mu_;
  size_t cursor_ = 0;  // next entry of order_
};

}  // namespace cutegen
