#include "llm/price_table.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace cutegen;

namespace {

PriceTable table(const std::string& text) {
  auto t = PriceTable::parse(text, "test.json");
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return t.ok() ? *t : PriceTable{};
}

const char* kTable = R"({"about": "test prices",
  "models": {"gpt-5": {"input": 1.25, "cached_input": 0.125, "output": 10.0},
             "gpt-5-mini": {"input": 0.25, "cached_input": 0.025, "output": 2.0},
             "local": {"input": 2.0, "output": 4.0}}})";

}  // namespace

TEST(Cost, ComputedFromTheTablePerMillionTokensWithCachedInputCheaper) {
  Usage u;
  u.input_tokens = 1'000'000;
  u.cached_input_tokens = 200'000;
  u.output_tokens = 100'000;
  auto cost = table(kTable).cost(u, "gpt-5", "gpt-5");
  EXPECT_FALSE(cost.price_unknown);
  EXPECT_EQ(cost.priced_as, "gpt-5");
  EXPECT_NEAR(cost.usd, 0.8 * 1.25 + 0.2 * 0.125 + 0.1 * 10.0, 1e-12);
}

// Anthropic bills tokens written to the prompt cache above the input price: each input token is priced
// as what it was (read from the cache, written to it, neither).
TEST(Cost, CacheWritesArePricedAtTheirOwnRate) {
  auto t = PriceTable::parse(R"({"models": {"claude": {"input": 3.0, "cached_input": 0.3, "cache_write_input": 3.75,
                                                        "output": 15.0}}})",
                             "test");
  ASSERT_TRUE(t.ok()) << t.error().message;
  Usage u;
  u.input_tokens = 1'000'000;
  u.cached_input_tokens = 600'000;
  u.cache_write_tokens = 300'000;
  u.output_tokens = 10'000;
  EXPECT_NEAR(t->cost(u, "claude", "claude").usd, 0.1 * 3.0 + 0.6 * 0.3 + 0.3 * 3.75 + 0.01 * 15.0, 1e-12);
  // Without a cache-write price, written tokens cost the input price.
  auto plain = PriceTable::parse(R"({"models": {"m": {"input": 2.0, "output": 4.0}}})", "test");
  ASSERT_TRUE(plain.ok());
  EXPECT_NEAR(plain->cost(u, "m", "m").usd, 1.0 * 2.0 + 0.01 * 4.0, 1e-12);
  // The shipped table has Anthropic's write prices.
  auto shipped = PriceTable::load(PriceTable::default_path());
  ASSERT_TRUE(shipped.ok()) << shipped.error().message;
  EXPECT_DOUBLE_EQ(shipped->find("claude-sonnet-4-5")->second.cache_write_input, 3.75);
}

TEST(Cost, LongestPrefixNamesTheModel) {
  Usage u;
  u.input_tokens = 1'000'000;
  auto t = table(kTable);
  EXPECT_EQ(t.cost(u, "gpt-5-mini-2025-08-07", "").priced_as, "gpt-5-mini");
  EXPECT_NEAR(t.cost(u, "gpt-5-mini-2025-08-07", "").usd, 0.25, 1e-12);
  EXPECT_EQ(t.cost(u, "gpt-5-2025-08-07", "").priced_as, "gpt-5");
}

TEST(Cost, TheConfiguredModelIsTheFallbackForAnUnknownReportedName) {
  Usage u;
  u.output_tokens = 1'000'000;
  auto cost = table(kTable).cost(u, "/models/Meta-Llama-3-70B", "local");
  EXPECT_FALSE(cost.price_unknown);
  EXPECT_NEAR(cost.usd, 4.0, 1e-12);
}

TEST(Cost, UnknownModelCostsNothingAndIsFlagged) {
  Usage u;
  u.input_tokens = 5'000'000;
  u.output_tokens = 5'000'000;
  auto cost = table(kTable).cost(u, "mystery-model", "mystery-model");
  EXPECT_TRUE(cost.price_unknown);
  EXPECT_EQ(cost.usd, 0.0);
}

TEST(Cost, WithoutACachedPriceCachedTokensCostTheInputPrice) {
  Usage u;
  u.input_tokens = 1'000'000;
  u.cached_input_tokens = 1'000'000;
  EXPECT_NEAR(table(kTable).cost(u, "local", "").usd, 2.0, 1e-12);
}

TEST(Cost, MalformedTablesAreErrorsNamingTheProblem) {
  struct Case {
    const char* text;
    const char* expect;
  } cases[] = {
      {"[1,2]", "not a JSON object"},
      {R"({"modles": {}})", "unknown key 'modles'"},
      {R"({"models": {"m": {"input": 1}}})", "needs both input and output"},
      {R"({"models": {"m": {"input": -1, "output": 1}}})", "non-negative"},
      {R"({"models": {"m": {"input": 1, "output": 1, "cache": 1}}})", "unknown field models.m.cache"},
  };
  for (const auto& c : cases) {
    auto t = PriceTable::parse(c.text, "p.json");
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_NE(t.error().message.find(c.expect), std::string::npos) << t.error().message;
    EXPECT_NE(t.error().message.find("p.json"), std::string::npos) << t.error().message;
  }
}

TEST(Cost, MissingPriceFileSaysHowToPointAtOne) {
  auto t = PriceTable::load("/nonexistent/prices.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("llm.prices"), std::string::npos) << t.error().message;
}

TEST(Cost, TheShippedTableLoadsAndPricesCurrentModels) {
  EXPECT_EQ(PriceTable::default_path(), std::filesystem::path(CUTEGEN_SOURCE_DIR) / "config/prices.json");
  auto t = PriceTable::load(PriceTable::default_path());
  ASSERT_TRUE(t.ok()) << t.error().message;
  for (const char* model : {"gpt-5", "gpt-5-mini-2025-08-07", "claude-sonnet-4-5-20250929", "claude-opus-4-1"})
    EXPECT_TRUE(t->find(model).has_value()) << model;
  // Prefix matching must not price a small model as its big sibling.
  EXPECT_EQ(t->find("gpt-4o-mini")->first, "gpt-4o-mini");
  EXPECT_EQ(t->find("o3-mini")->first, "o3-mini");
  EXPECT_EQ(t->find("claude-opus-4-5-20251101")->first, "claude-opus-4-5");
}
