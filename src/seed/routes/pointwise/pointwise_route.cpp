#include "seed/routes/pointwise/pointwise_route.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/pointwise_ops.h"
#include "seed/routes/pointwise/pointwise_kernel.h"

namespace cutegen::seed {
namespace {

bool float_dtype(const std::string& d) { return d == "float32" || d == "float16" || d == "bfloat16"; }

// `op(a, b, key=value)`, arguments spelled by `spell`.
template <class Spell>
std::string call_text(const Node& n, Spell spell) {
  std::vector<std::string> parts;
  for (const auto& a : n.args) parts.push_back(a.ref ? spell(*a.ref) : fmt::format("{}", a.value));
  for (const auto& [k, v] : n.params) {
    if (k == "alpha" && (n.op == Op::add || n.op == Op::sub) && param_text(v) == "1") continue;  // the default
    if (std::holds_alternative<std::monostate>(v)) continue;  // None: clamp's missing bound, div's rounding
    parts.push_back(fmt::format("{}={}", k, param_text(v)));
  }
  return fmt::format("{}({})", n.op, fmt::join(parts, ", "));
}


class PointwiseMatcher {
 public:
  explicit PointwiseMatcher(const OpGraph& g) : g_(g) {}
  // After match(): the refusal was a value whose shape is not the output's (the broadcast route's graphs).
  bool shapes_differ() const { return shapes_differ_; }

  // The plan, or the reason there is none.
  Result<PointwisePlan> match() {
    // An op outside the table is the decisive reason; outputs, shapes and dtypes matter once every op is known.
    for (int id : reachable(g_)) {
      if (auto why = unknown_op(g_.node(id)); !why.empty()) {
        return Error{why};
      }
    }
    if (g_.outputs.size() != 1) {
      return Error{fmt::format("forward() returns {} outputs; the pointwise seed writes one", g_.outputs.size())};
    }
    const Operand& out = g_.outputs[0];
    if (!out.ref) {
      return Error{"forward() returns a number, not a tensor"};
    }
    const Node& result = g_.node(*out.ref);
    if (!result.type) {
      return Error{"forward() does not return a tensor"};
    }
    plan_.dtype = result.type->dtype;
    plan_.shape = result.type->shape;
    if (!float_dtype(plan_.dtype)) {
      return Error{fmt::format("the output is {}; the pointwise seed handles float32, float16 and bfloat16", plan_.dtype)};
    }
    plan_.num_contract_inputs = g_.num_inputs + static_cast<int>(g_.params.size());
    const std::vector<int> needed = reachable(g_);
    for (int id : needed) {
      if (auto why = visit(g_.node(id)); !why.empty()) {
        return Error{why};
      }
    }
    if (plan_.tensor_inputs.empty()) {
      return Error{"the output depends on no input tensor"};
    }
    plan_.result = value_of(out);
    plan_.pattern = nested(*out.ref);
    return plan_;
  }

 private:
  std::string check_tensor(const Node& n, const std::string& what) {
    if (!n.type) return fmt::format("{} has no tensor type in the trace", what);
    if (n.type->dtype != plan_.dtype)
      return fmt::format("{} is {} while the output is {} (mixed dtypes have no seed yet)", what, n.type->dtype,
                         plan_.dtype);
    if (n.type->shape != plan_.shape) {
      shapes_differ_ = true;
      return fmt::format("{} is {} while the output is {} (broadcasting has no seed yet)", what,
                         shape_text(n.type->shape), shape_text(plan_.shape));
    }
    if (!n.type->contiguous) return fmt::format("{} is not contiguous", what);
    return "";
  }

  static std::string unknown_op(const Node& n) {
    if (is_leaf(n.op.op()) && n.known) return "";
    if (n.known && pointwise_arity(n.op.spelling()) > 0) return "";
    if (!n.note.empty()) return fmt::format("{}: {}", n.op, n.note);
    return fmt::format("{} is not a pointwise op the seed knows", n.op);
  }

  std::string visit(const Node& n) {
    if (n.op == Op::input || n.op == Op::param) {
      std::string name = n.op == Op::param && n.index - g_.num_inputs < static_cast<int>(g_.params.size())
                             ? g_.params[static_cast<std::size_t>(n.index - g_.num_inputs)]
                             : n.name;
      if (n.scalar) {
        if (n.scalar_dtype != "float64" && n.scalar_dtype != "int64" && n.scalar_dtype != "bool")
          return fmt::format("forward argument {} is a {} scalar", name, n.scalar_dtype);
        ScalarOperand s{.index = n.index, .dtype = n.scalar_dtype, .member = fmt::format("s{}", n.index), .name = name};
        values_[n.id] = s.member;
        plan_.scalars.push_back(s);
        return "";
      }
      if (auto why = check_tensor(n, (n.op == Op::param ? "parameter " : "input ") + name); !why.empty()) return why;
      values_[n.id] = fmt::format("x{}", plan_.tensor_inputs.size());
      plan_.tensor_inputs.push_back(n.index);
      plan_.tensor_names.push_back(name);
      return "";
    }
    if (n.op == Op::constant) {
      auto it = n.params.find("value");
      const double* v = it == n.params.end() ? nullptr : std::get_if<double>(&it->second);
      if (!v) return fmt::format("forward argument {} has a default that is not a number", n.name);
      values_[n.id] = float_literal(*v);
      constants_[n.id] = *v;
      return "";
    }
    if (auto why = check_tensor(n, fmt::format("{} ({})", n.op, n.name)); !why.empty()) return why;
    std::vector<ExprArg> args;
    for (const auto& a : n.args) {
      if (a.ref) {
        auto c = constants_.find(*a.ref);
        args.push_back({values_.at(*a.ref), c == constants_.end() ? std::nullopt : std::optional<double>(c->second)});
      } else {
        args.push_back({float_literal(a.value), a.value});
      }
    }
    auto expr = pointwise_expression(n.op.spelling(), args, n.params);
    if (!expr) return expr.error().message;
    std::string value = fmt::format("v{}", n.id);
    plan_.steps.push_back({value, *expr, call_text(n, [this](int id) { return values_.at(id); })});
    values_[n.id] = value;
    return "";
  }

  std::string value_of(const Operand& o) const { return o.ref ? values_.at(*o.ref) : float_literal(o.value); }

  // The chain as one expression over the forward arguments' names, for people.
  std::string nested(int id) const {
    const Node& n = g_.node(id);
    if (n.op == Op::input || n.op == Op::param) {
      auto it = std::find(plan_.tensor_inputs.begin(), plan_.tensor_inputs.end(), n.index);
      if (it != plan_.tensor_inputs.end())
        return plan_.tensor_names[static_cast<std::size_t>(it - plan_.tensor_inputs.begin())];
      for (const auto& s : plan_.scalars)
        if (s.index == n.index) return s.name;
      return n.name;
    }
    if (n.op == Op::constant) return fmt::format("{}", constants_.at(id));
    return call_text(n, [this](int ref) { return nested(ref); });
  }

  const OpGraph& g_;
  PointwisePlan plan_;
  bool shapes_differ_ = false;
  std::map<int, std::string> values_;
  std::map<int, double> constants_;
};

}  // namespace

Result<PointwisePlan> match_pointwise(const OpGraph& g) { return PointwiseMatcher(g).match(); }

bool pointwise_refuses_broadcasting(const OpGraph& g) {
  PointwiseMatcher matcher(g);
  return !matcher.match() && matcher.shapes_differ();
}

std::string pointwise_description(const PointwisePlan& plan) { return "pointwise chain y = " + plan.pattern; }

std::string pointwise_pattern(const PointwisePlan& plan) { return plan.pattern; }

Result<std::string> emit_pointwise(const PointwisePlan& plan, const CommentText& problem) {
  return generate_pointwise_kernel(plan, problem);
}

}  // namespace cutegen::seed
