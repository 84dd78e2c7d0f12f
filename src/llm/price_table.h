#pragma once
// Dollar cost of a call from a user-editable price table (config/prices.json by default). Prices change
// and differ per contract, so they live in a file the user owns; nothing is looked up on the network.
//
//   {"models": {"gpt-5": {"input": 1.25, "cached_input": 0.125, "output": 10.0}, ...}}
//
// Prices are dollars per million tokens. A model matches its own name exactly, else the longest name in
// the table that is a prefix of it ("gpt-5-2025-08-07" is priced as "gpt-5"). `cached_input` (prompt-cache
// reads) and `cache_write_input` (tokens written to the cache, which Anthropic bills at 1.25x input) are
// optional: without them those tokens cost the full input price.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "common/result.h"
#include "llm/llm_types.h"

namespace cutegen {

struct ModelPrice {
  double input = 0;         // $ per million uncached input tokens
  double cached_input = 0;  // $ per million cached input tokens
  double cache_write_input = 0;  // $ per million input tokens written to the prompt cache
  double output = 0;        // $ per million output tokens (reasoning included)
};

struct Cost {
  double usd = 0;
  bool price_unknown = false;  // no entry matched: usd is 0, and that is not a measurement
  std::string priced_as;       // the table entry used
};

class PriceTable {
 public:
  PriceTable() = default;
  static Result<PriceTable> parse(const std::string& text, const std::string& source_name);
  static Result<PriceTable> load(const std::filesystem::path& path);

  // The table shipped in the source tree (config/prices.json).
  static std::filesystem::path default_path();

  std::optional<std::pair<std::string, ModelPrice>> find(const std::string& model) const;

  // Tries each name in turn (the model the server reported, then the one configured).
  Cost cost(const Usage& usage, const std::string& reported_model, const std::string& configured_model) const;

 private:
  std::map<std::string, ModelPrice> prices_;
};

}  // namespace cutegen
