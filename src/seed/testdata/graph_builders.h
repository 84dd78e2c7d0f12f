#pragma once
// Operator graphs as the worker's `trace` answer spells them (docs/worker-protocol.md), built by hand
// for the matcher tests: inputs, parameters, op nodes, references and constants, and the graph.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/testdata/test_helpers.h"
#include "seed/seed.h"
#include "seed/testdata/all_routes.h"

namespace cutegen::seed::testing {

using json = nlohmann::json;

inline json typed(json node, const std::vector<int64_t>& shape, const std::string& dtype = "float32") {
  node["dtype"] = dtype;
  node["shape"] = shape;
  node["contiguous"] = true;
  return node;
}
inline json input(int id, const std::string& name, const std::vector<int64_t>& shape) {
  return typed({{"id", id}, {"name", name}, {"op", "input"}, {"index", id}}, shape);
}
inline json param(int id, const std::string& name, int index, const std::vector<int64_t>& shape) {
  return typed({{"id", id}, {"name", name}, {"op", "param"}, {"index", index}}, shape);
}
inline json ref(int id) { return {{"ref", id}}; }
inline json num(double v) { return {{"const", v}}; }
inline json node(int id, const std::string& op, json args, json params, const std::vector<int64_t>& shape,
                 const std::string& dtype = "float32") {
  return typed({{"id", id}, {"name", op + std::to_string(id)}, {"op", op}, {"args", args}, {"params", params}}, shape,
               dtype);
}
inline json graph(json nodes, int out, int num_inputs, json params = json::array()) {
  return {{"traced", true}, {"nodes", nodes}, {"outputs", {ref(out)}}, {"num_inputs", num_inputs}, {"params", params}};
}

// The matcher's answer for a graph that must parse (a parse error fails the test).
inline SeedMatch match(const json& j) {
  auto g = OpGraph::from_json(j);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? match_seed(*g) : SeedMatch{};
}

using ::cutegen::testing::contains;

// torch.matmul(op(A), op(B)) of two forward inputs, op = transpose where asked: A is given (M, K) or (K, M),
// B (K, N) or (N, K).
inline json product(int64_t m, int64_t n, int64_t k, bool ta = false, bool tb = false) {
  json nodes = {input(0, "A", ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}),
                input(1, "B", tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n})};
  int a = 0, b = 1, id = 2;
  if (ta) nodes.push_back(node(a = id++, "transpose", {ref(0)}, {{"dim0", -2}, {"dim1", -1}}, {m, k}));
  if (tb) nodes.push_back(node(b = id++, "transpose", {ref(1)}, {{"dim0", -2}, {"dim1", -1}}, {k, n}));
  nodes.push_back(node(id, "matmul", {ref(a), ref(b)}, json::object(), {m, n}));
  return graph(nodes, id, 2);
}

// The generated seed of a graph under a precision policy; fails the test when there is none.
inline std::string seed_source(const json& g, Precision precision = Precision::strict) {
  auto parsed = OpGraph::from_json(g);
  EXPECT_TRUE(parsed.ok());
  if (!parsed.ok()) return "";
  auto seed = seed_from_graph(*parsed, "mm.py", precision);
  EXPECT_TRUE(seed.ok()) << seed.error().message;
  if (!seed.ok()) return "";
  EXPECT_TRUE(seed->found()) << seed->match.reason;
  return seed->source;
}

}  // namespace cutegen::seed::testing
