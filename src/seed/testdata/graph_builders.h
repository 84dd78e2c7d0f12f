#pragma once
// Operator graphs as the worker's `trace` answer spells them (docs/worker-protocol.md), built by hand
// for the matcher tests: inputs, parameters, op nodes, references and constants, and the graph.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "seed/matcher.h"

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

inline bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace cutegen::seed::testing
