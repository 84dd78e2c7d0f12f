#include "llm/price_table.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "common/fs.h"

// Baked in by CMake (see src/CMakeLists.txt) so a built tree finds its table without any environment.
#ifndef CUTEGEN_DEFAULT_PRICE_TABLE
#define CUTEGEN_DEFAULT_PRICE_TABLE "config/prices.json"
#endif

namespace cutegen {
using nlohmann::json;

Result<PriceTable> PriceTable::parse(const std::string& text, const std::string& source) {
  auto j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{fmt::format("price table {} is not a JSON object", source)};
  PriceTable table;
  for (const auto& [key, v] : j.items()) {
    if (key == "about") continue;  // free text for the humans who edit the file
    if (key != "models")
      return Error{fmt::format("price table {}: unknown key '{}' (expected \"models\" and optionally \"about\")", source, key)};
    if (!v.is_object()) return Error{fmt::format("price table {}: \"models\" must be an object", source)};
    for (const auto& [model, price] : v.items()) {
      if (!price.is_object()) return Error{fmt::format("price table {}: models.{} must be an object", source, model)};
      ModelPrice p;
      bool has_cached = false, has_write = false;
      for (const auto& [field, value] : price.items()) {
        if (!value.is_number() || value.get<double>() < 0)
          return Error{fmt::format("price table {}: models.{}.{} must be a non-negative number ($ per million tokens)",
                                   source, model, field)};
        if (field == "input") {
          p.input = value.get<double>();
        } else if (field == "cached_input") {
          p.cached_input = value.get<double>();
          has_cached = true;
        } else if (field == "cache_write_input") {
          p.cache_write_input = value.get<double>();
          has_write = true;
        } else if (field == "output") {
          p.output = value.get<double>();
        } else {
          return Error{fmt::format("price table {}: unknown field models.{}.{} (expected input, cached_input, cache_write_input, output)",
                                   source, model, field)};
        }
      }
      if (!price.contains("input") || !price.contains("output"))
        return Error{fmt::format("price table {}: models.{} needs both input and output prices", source, model)};
      if (!has_cached) p.cached_input = p.input;
      if (!has_write) p.cache_write_input = p.input;
      table.prices_[model] = p;
    }
  }
  return table;
}

Result<PriceTable> PriceTable::load(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return Error{fmt::format("price table: {} (set llm.prices or --prices to a price file)", text.error().message)};
  return parse(*text, path.string());
}

std::filesystem::path PriceTable::default_path() { return CUTEGEN_DEFAULT_PRICE_TABLE; }

std::optional<std::pair<std::string, ModelPrice>> PriceTable::find(const std::string& model) const {
  if (model.empty()) return std::nullopt;
  if (auto it = prices_.find(model); it != prices_.end()) return *it;
  std::optional<std::pair<std::string, ModelPrice>> best;
  for (const auto& [name, price] : prices_)
    if (model.rfind(name, 0) == 0 && (!best || name.size() > best->first.size())) best = {name, price};
  return best;
}

Cost PriceTable::cost(const Usage& u, const std::string& reported_model, const std::string& configured_model) const {
  auto entry = find(reported_model);
  if (!entry) entry = find(configured_model);
  if (!entry) return {0, true, ""};
  const ModelPrice& p = entry->second;
  // Each input token at its own price: read from the cache, written to it, or neither.
  long long cached = std::min(u.cached_input_tokens, u.input_tokens);
  long long written = std::min(u.cache_write_tokens, u.input_tokens - cached);
  double usd = (static_cast<double>(u.input_tokens - cached - written) * p.input +
                static_cast<double>(cached) * p.cached_input + static_cast<double>(written) * p.cache_write_input +
                static_cast<double>(u.output_tokens) * p.output) / 1e6;
  return {usd, false, entry->first};
}

}  // namespace cutegen
