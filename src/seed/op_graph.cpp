#include "seed/op_graph.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace cutegen::seed {
namespace {

using json = nlohmann::json;

Error bad(const std::string& what) { return Error{fmt::format("the worker's trace answer is malformed: {}", what)}; }

// JSON has no inf/nan: the worker sends them as strings.
std::optional<double> number(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "inf" || s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-inf" || s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "nan" || s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  return std::nullopt;
}

Result<Operand> operand(const json& j, const std::string& where, std::size_t num_nodes) {
  if (!j.is_object()) return bad(where + " is not an object");
  if (auto r = j.find("ref"); r != j.end()) {
    if (!r->is_number_integer() || r->get<int64_t>() < 0 || r->get<std::size_t>() >= num_nodes)
      return bad(where + ".ref is not a node id");
    return Operand{.ref = r->get<int>()};
  }
  if (auto c = j.find("const"); c != j.end()) {
    auto v = number(*c);
    if (!v) return bad(where + ".const is not a number");
    return Operand{.value = *v};
  }
  return bad(where + " has neither ref nor const");
}

Result<ParamValue> param_value(const json& v, const std::string& where) {
  if (v.is_null()) return ParamValue{};
  if (v.is_boolean()) return ParamValue{v.get<bool>()};
  if (v.is_number()) return ParamValue{v.get<double>()};
  if (v.is_string()) {
    if (auto n = number(v)) return ParamValue{*n};
    return ParamValue{v.get<std::string>()};
  }
  if (v.is_array() && !v.empty()) {
    DimList dims;
    for (const json& d : v) {
      if (!d.is_number_integer()) return bad(where + " is a list with an entry that is not an integer");
      dims.push_back(d.get<int64_t>());
    }
    return ParamValue{std::move(dims)};
  }
  return bad(where + " is neither a scalar nor a non-empty list of integers");
}

template <class T>
Result<T> field(const json& j, const char* key, const std::string& where, T fallback) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return bad(fmt::format("{}.{} has the wrong type", where, key));
  }
}

Result<Node> parse_node(const json& j, std::size_t position, std::size_t num_nodes) {
  const std::string where = fmt::format("nodes[{}]", position);
  if (!j.is_object()) return bad(where + " is not an object");
  Node n;
  n.id = static_cast<int>(position);
  if (auto id = field<int>(j, "id", where, -1); !id || *id != n.id) return bad(where + ".id is not its position");
  auto op = field<std::string>(j, "op", where, "");
  if (!op || op->empty()) return bad(where + ".op is missing");
  n.op = *op;
  auto name = field<std::string>(j, "name", where, "");
  auto known = field<bool>(j, "known", where, true);
  auto note = field<std::string>(j, "note", where, "");
  auto inplace = field<bool>(j, "inplace", where, false);
  auto index = field<int>(j, "index", where, -1);
  auto scalar = field<bool>(j, "scalar", where, false);
  for (const auto* r : {&name, &note}) if (!*r) return r->error();
  for (const auto* r : {&known, &inplace, &scalar}) if (!*r) return r->error();
  if (!index) return index.error();
  n.name = *name;
  n.known = *known;
  n.note = *note;
  n.inplace = *inplace;
  n.index = *index;
  n.scalar = *scalar;
  if ((n.op == Op::input || n.op == Op::param) && n.index < 0) return bad(where + ".index is missing");
  if (auto args = j.find("args"); args != j.end()) {
    if (!args->is_array()) return bad(where + ".args is not a list");
    for (std::size_t i = 0; i < args->size(); ++i) {
      auto a = operand((*args)[i], fmt::format("{}.args[{}]", where, i), num_nodes);
      if (!a) return a.error();
      if (a->ref && *a->ref >= n.id) return bad(fmt::format("{}.args[{}] refers forward", where, i));
      n.args.push_back(*a);
    }
  }
  if (auto params = j.find("params"); params != j.end()) {
    if (!params->is_object()) return bad(where + ".params is not an object");
    for (const auto& [key, value] : params->items()) {
      auto v = param_value(value, fmt::format("{}.params.{}", where, key));
      if (!v) return v.error();
      n.params[key] = *v;
    }
  }
  auto dtype = field<std::string>(j, "dtype", where, "");
  if (!dtype) return dtype.error();
  if (n.scalar) {
    n.scalar_dtype = *dtype;
  } else if (j.contains("shape")) {
    auto shape = field<std::vector<int64_t>>(j, "shape", where, {});
    auto contiguous = field<bool>(j, "contiguous", where, true);
    if (!shape) return shape.error();
    if (!contiguous) return contiguous.error();
    n.type = TensorType{.dtype = *dtype, .shape = *shape, .contiguous = *contiguous};
  }
  return n;
}

}  // namespace

Result<OpGraph> OpGraph::from_json(const json& j) {
  if (!j.is_object()) return bad("not an object");
  OpGraph g;
  auto traced = j.find("traced");
  if (traced == j.end() || !traced->is_boolean()) return bad("traced is missing");
  g.traced = traced->get<bool>();
  if (!g.traced) {
    auto reason = field<std::string>(j, "reason", "answer", "");
    if (!reason || reason->empty()) return bad("an untraced answer without a reason");
    g.reason = *reason;
    return g;
  }
  auto nodes = j.find("nodes");
  if (nodes == j.end() || !nodes->is_array()) return bad("nodes is missing");
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    auto n = parse_node((*nodes)[i], i, nodes->size());
    if (!n) return n.error();
    g.nodes.push_back(std::move(*n));
  }
  auto outputs = j.find("outputs");
  if (outputs == j.end() || !outputs->is_array()) return bad("outputs is missing");
  for (std::size_t i = 0; i < outputs->size(); ++i) {
    auto o = operand((*outputs)[i], fmt::format("outputs[{}]", i), g.nodes.size());
    if (!o) return o.error();
    g.outputs.push_back(*o);
  }
  auto num_inputs = field<int>(j, "num_inputs", "answer", -1);
  auto params = field<std::vector<std::string>>(j, "params", "answer", {});
  if (!num_inputs || *num_inputs < 0) return bad("num_inputs is missing");
  if (!params) return params.error();
  g.num_inputs = *num_inputs;
  g.params = *params;
  return g;
}

}  // namespace cutegen::seed
