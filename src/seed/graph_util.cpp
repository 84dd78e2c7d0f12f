#include "seed/graph_util.h"

#include <algorithm>
#include <set>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/pointwise_ops.h"

namespace cutegen::seed {

const double* number(const Node& n, const char* key) {
  auto it = n.params.find(key);
  return it == n.params.end() ? nullptr : std::get_if<double>(&it->second);
}

bool is_none(const Node& n, const char* key) {
  auto it = n.params.find(key);
  return it == n.params.end() || std::holds_alternative<std::monostate>(it->second);
}

bool flag(const Node& n, const char* key) {
  auto it = n.params.find(key);
  if (it == n.params.end()) return false;
  if (const bool* b = std::get_if<bool>(&it->second)) return *b;
  if (const double* d = std::get_if<double>(&it->second)) return *d != 0;
  return false;
}

int64_t product(const std::vector<int64_t>& s, std::size_t from, std::size_t to) {
  int64_t p = 1;
  for (std::size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

Result<const Node*> single_output(const OpGraph& g) {
  if (g.outputs.size() != 1 || !g.outputs[0].ref)
    return Error{fmt::format("forward() returns {} values; the seed writes one tensor", g.outputs.size())};
  return &g.node(*g.outputs[0].ref);
}

bool is_view_op(const Node& n) {
  // Spelled as the worker traces them: unsqueeze is normalised; the others keep torch's spelling.
  static const std::set<std::string, std::less<>> kViews = {
      "Tensor.squeeze", "torch.squeeze", "Tensor.view", "Tensor.reshape", "torch.reshape",
      "Tensor.flatten", "torch.flatten"};
  return n.op == Op::unsqueeze || kViews.count(n.op.spelling()) > 0;
}

const Node& through_views(const OpGraph& g, const Node& n) {
  const Node* v = &n;
  while (is_view_op(*v) && v->type && v->type->contiguous && !v->args.empty() && v->args[0].ref) {
    const Node& src = g.node(*v->args[0].ref);
    if (!src.type || !src.type->contiguous || src.type->dtype != v->type->dtype ||
        product(src.type->shape, 0, src.type->shape.size()) != product(v->type->shape, 0, v->type->shape.size()))
      break;
    v = &src;
  }
  return *v;
}

namespace {

std::vector<int> walk_back(const OpGraph& g, std::vector<int> stack, bool (*stop_at)(const Node&)) {
  std::set<int> seen;
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    if (stop_at && stop_at(g.node(id))) continue;
    for (const auto& a : g.node(id).args)
      if (a.ref) stack.push_back(*a.ref);
  }
  return {seen.begin(), seen.end()};
}

}  // namespace

std::vector<int> reachable(const OpGraph& g) {
  std::vector<int> outputs;
  for (const auto& o : g.outputs)
    if (o.ref) outputs.push_back(*o.ref);
  return walk_back(g, std::move(outputs), nullptr);
}

std::vector<int> depends_on(const OpGraph& g, int root, bool (*stop_at)(const Node&)) {
  return walk_back(g, {root}, stop_at);
}

std::string plain_input(const OpGraph& g, const Operand& o, const std::string& what, bool params,
                        std::string_view dtype) {
  if (!o.ref) return fmt::format("{} is a number, not a tensor", what);
  const Node& x = g.node(*o.ref);
  if (!(x.op == Op::input || (params && x.op == Op::param)) || x.scalar)
    return fmt::format("{} is computed ({}), not a forward input (a fused prologue is future work)", what, x.op);
  if (!x.type) return fmt::format("{} has no tensor type in the trace", what);
  if (x.type->dtype != dtype) return fmt::format("{} is {} (this seed is {})", what, x.type->dtype, dtype);
  if (!x.type->contiguous) return fmt::format("{} is not contiguous", what);
  return "";
}

namespace {

int64_t normalised_dim(int64_t v, std::size_t rank) {
  if (v < 0) v += static_cast<int64_t>(rank);
  return v >= 0 && v < static_cast<int64_t>(std::max<std::size_t>(rank, 1)) ? v : -1;
}

const DimList* dim_list(const Node& n, const char* key) {
  auto it = n.params.find(key);
  return it == n.params.end() ? nullptr : std::get_if<DimList>(&it->second);
}

}  // namespace

std::optional<int64_t> dim_of(const Node& n, std::size_t rank, const char* key) {
  if (const DimList* list = dim_list(n, key)) {
    // Not None: a route reading one dimension must not take a list for "everything".
    return list->size() == 1 ? normalised_dim(list->front(), rank) : -1;
  }
  const double* d = number(n, key);
  if (!d) return std::nullopt;
  return normalised_dim(static_cast<int64_t>(*d), rank);
}

std::optional<std::vector<int64_t>> dims_of(const Node& n, std::size_t rank) {
  std::vector<int64_t> dims;
  if (const DimList* list = dim_list(n, "dim")) {
    for (int64_t d : *list) dims.push_back(normalised_dim(d, rank));
  } else if (auto one = dim_of(n, rank)) {
    dims.push_back(*one);
  } else {
    return std::nullopt;
  }
  std::sort(dims.begin(), dims.end());
  return dims;
}

std::size_t dim_count(const Node& n) {
  if (const DimList* list = dim_list(n, "dim")) return list->size();
  return is_none(n, "dim") ? 0 : 1;
}

std::string param_text(const ParamValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return "None";
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "True" : "False";
  if (const double* d = std::get_if<double>(&v)) return fmt::format("{}", *d);
  if (const DimList* dims = std::get_if<DimList>(&v)) return fmt::format("({})", fmt::join(*dims, ", "));
  return fmt::format("'{}'", std::get<std::string>(v));
}

std::string shape_text(const std::vector<int64_t>& s) {
  return s.empty() ? "a 0-d tensor" : fmt::format("{}", fmt::join(s, "x"));
}

std::string contract_name(const OpGraph& g, const Node& n) {
  const int p = n.index - g.num_inputs;
  if (n.op == Op::param && p >= 0 && p < static_cast<int>(g.params.size()))
    return g.params[static_cast<std::size_t>(p)];
  return n.name;
}

std::string text_of(const OpGraph& g, const Operand& o) {
  if (!o.ref) return fmt::format("{}", o.value);
  const Node& n = g.node(*o.ref);
  if (n.op == Op::input || n.op == Op::param) return n.name;
  if (n.op == Op::constant) {
    const double* v = number(n, "value");
    return v ? fmt::format("{}", *v) : n.name;
  }
  std::vector<std::string> parts;
  for (const auto& a : n.args) parts.push_back(text_of(g, a));
  for (const auto& [k, v] : n.params) {
    if (std::holds_alternative<std::monostate>(v)) continue;
    if (k == "alpha" && (n.op == Op::add || n.op == Op::sub)) continue;
    if (k.rfind("has_", 0) == 0) continue;  // the operands list them
    if (k == "keepdim") {  // false, the default, is noise
      const bool* b = std::get_if<bool>(&v);
      const double* d = std::get_if<double>(&v);
      if ((b && !*b) || (d && *d == 0)) continue;
    }
    parts.push_back(fmt::format("{}={}", k, param_text(v)));
  }
  return fmt::format("{}({})", n.op, fmt::join(parts, ", "));
}

Result<std::string> emit_chain(const OpGraph& g, int root, const std::map<int, std::string>& leaves,
                               const std::string& prefix, std::vector<PointwiseStep>& steps) {
  std::set<int> needed;
  std::vector<int> stack{root};
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (leaves.count(id) || !needed.insert(id).second) continue;
    for (const auto& a : g.node(id).args)
      if (a.ref) stack.push_back(*a.ref);
  }
  std::map<int, std::string> values = leaves;
  std::map<int, double> constants;
  for (int id : needed) {
    const Node& n = g.node(id);
    if (n.op == Op::constant) {
      const double* v = number(n, "value");
      if (!v) return Error{fmt::format("forward argument {} has a default that is not a number", n.name)};
      values[id] = float_literal(*v);
      constants[id] = *v;
      continue;
    }
    if (n.op == Op::input || n.op == Op::param) {
      // The op that reads it, not the chain's whole expression: a refusal is one short line, and the
      // expression of a fused chain (shared values repeated) runs to hundreds of characters.
      auto reads = [&](int reader) {
        const auto& args = g.node(reader).args;
        return std::any_of(args.begin(), args.end(), [&](const Operand& a) { return a.ref == id; });
      };
      auto reader = std::find_if(needed.begin(), needed.end(), reads);
      if (reader == needed.end())  // the chain is that tensor itself
        return Error{fmt::format("the fused pointwise chain is {} itself, not a value the seed computes", n.name)};
      return Error{fmt::format("{} also reads {}: the fused pointwise chain takes no other tensor",
                               g.node(*reader).op, n.name)};
    }
    if (!n.known || pointwise_arity(n.op.spelling()) == 0)
      return Error{fmt::format("{} is not a pointwise op the seed knows", n.op)};
    std::vector<ExprArg> args;
    for (const auto& a : n.args) {
      if (a.ref) {
        auto c = constants.find(*a.ref);
        args.push_back({values.at(*a.ref), c == constants.end() ? std::nullopt : std::optional<double>(c->second)});
      } else {
        args.push_back({float_literal(a.value), a.value});
      }
    }
    auto expr = pointwise_expression(n.op.spelling(), args, n.params);
    if (!expr) return expr.error();
    std::string value = fmt::format("{}{}", prefix, id);
    steps.push_back({value, *expr, text_of(g, Operand{.ref = id})});
    values[id] = value;
  }
  return values.at(root);
}

bool affine_in(const OpGraph& g, int source, int root) {
  std::map<int, bool> depends;  // memo: does the node's value depend on `source`?
  auto dep = [&](auto&& self, int id) -> bool {
    if (id == source) return true;
    if (auto it = depends.find(id); it != depends.end()) return it->second;
    bool d = false;
    for (const auto& a : g.node(id).args) d = d || (a.ref && self(self, *a.ref));
    depends[id] = d;
    return d;
  };
  auto arg_dep = [&](const Operand& a) { return a.ref && dep(dep, *a.ref); };
  std::set<int> seen;
  std::vector<int> stack{root};
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (id == source || !seen.insert(id).second || !dep(dep, id)) continue;
    const Node& n = g.node(id);
    const std::string_view op = n.op.spelling();
    auto rounding = n.params.find("rounding_mode");
    const bool true_division = rounding == n.params.end() || std::holds_alternative<std::monostate>(rounding->second);
    const bool ok = n.op == Op::add || n.op == Op::sub || n.op == Op::identity || op == "neg" ||
                    (n.op == Op::mul && n.args.size() == 2 && !(arg_dep(n.args[0]) && arg_dep(n.args[1]))) ||
                    (n.op == Op::div && n.args.size() == 2 && !arg_dep(n.args[1]) && true_division);
    if (!ok) return false;
    for (const auto& a : n.args)
      if (a.ref) stack.push_back(*a.ref);
  }
  return true;
}

}  // namespace cutegen::seed
