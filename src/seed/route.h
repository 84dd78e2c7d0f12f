#pragma once
// A route: one kind of seed (docs/seed.md, "Routes"). Each lives in its own folder, src/seed/routes/<name>/:
// a typed plan (every shape and choice the kernel needs, the kernel itself among them: a library kernel or
// the route's template), a matcher from the traced graph to that plan or the one-line reason there is none,
// the two texts people read, and the emitter. `RouteDef` names those parts; the table (route_table.h) lists
// the routes in the order they are tried, each with its claim (when it is the graph's route).
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/result.h"
#include "seed/comment_text.h"
#include "seed/op_graph.h"
#include "seed/ops.h"

namespace cutegen::seed {

// What a claim reads: the graph, the ops its output depends on, and the node that produces the output.
struct MatchContext {
  const OpGraph& graph;
  std::vector<Op> ops;           // the ops the output depends on, leaves left out, each once
  const Node* output = nullptr;  // the one output's node; nullptr when forward() returns more or a number

  bool has(Op op) const;
  template <class Pred>
  bool has_any(Pred pred) const {
    for (Op op : ops)
      if (pred(op)) return true;
    return false;
  }
  bool output_is(Op op) const { return output && output->op == op; }
};

// How a route takes part in the walk over the table for one graph (route_table.cpp):
enum class Claim {
  skip,         // not this route's graph
  decide,       // this route's graph: its plan, or its refusal is the answer and the walk stops
  attempt,      // tried: its plan wins; its refusal is the answer unless a later route claims the graph
  last_resort,  // tried: its plan wins; its refusal leaves the answer as it was and the walk stops
};

// A matched plan, whatever its route: what the seed stage and its callers need of it.
class MatchedPlan {
 public:
  virtual ~MatchedPlan() = default;
  virtual std::string_view route() const = 0;
  // "pointwise chain y = mul(x, sigmoid(x))": `cutegen seed`'s line
  virtual std::string description() const = 0;
  // The right-hand side with the kernel's name first where it is a library's ("library reduce_dim: ..."):
  // bench's seed column and the run's seed_pattern.
  virtual std::string pattern() const = 0;
  // The candidate .cu file. Error: a library kernel the seed instantiates no longer has the lines it sets.
  virtual Result<std::string> emit(const CommentText& problem) const = 0;
};

// A matched plan of type Plan (tests and callers read the plan through SeedMatch::plan_as<Plan>()).
template <class Plan>
class TypedPlan : public MatchedPlan {
 public:
  explicit TypedPlan(Plan plan) : plan_(std::move(plan)) {}
  const Plan& plan() const { return plan_; }

 private:
  Plan plan_;
};

// A route's parts. Routes that share a plan share its texts and emitter (the matrix-product routes).
template <class P>
struct RouteDef {
  using Plan = P;
  std::string_view name;
  Result<Plan> (*match)(const OpGraph&);
  std::string (*description)(const Plan&);
  std::string (*pattern)(const Plan&);
  Result<std::string> (*emit)(const Plan&, const CommentText& problem);
};

// One row of the table: a route with its claim, its plan type erased.
struct Route {
  std::string_view name;
  Claim (*claim)(const MatchContext&);
  Result<std::shared_ptr<const MatchedPlan>> (*match)(const OpGraph&);
};

namespace detail {

template <const auto& Def>
class PlanOf final : public TypedPlan<typename std::remove_cvref_t<decltype(Def)>::Plan> {
 public:
  using TypedPlan<typename std::remove_cvref_t<decltype(Def)>::Plan>::TypedPlan;
  std::string_view route() const override { return Def.name; }
  std::string description() const override { return Def.description(this->plan()); }
  std::string pattern() const override { return Def.pattern(this->plan()); }
  Result<std::string> emit(const CommentText& problem) const override { return Def.emit(this->plan(), problem); }
};

template <const auto& Def>
Result<std::shared_ptr<const MatchedPlan>> match_with(const OpGraph& g) {
  auto plan = Def.match(g);
  if (!plan) return plan.error();
  return std::shared_ptr<const MatchedPlan>(std::make_shared<const PlanOf<Def>>(std::move(*plan)));
}

}  // namespace detail

// A matched plan of route `Def` made from a plan by hand: a chain that changes a choice on one of its parts' plans
// (then_chain.h, the convolution's path) makes the part again from the changed plan.
template <const auto& Def>
std::shared_ptr<const MatchedPlan> matched_plan(typename std::remove_cvref_t<decltype(Def)>::Plan plan) {
  return std::make_shared<const detail::PlanOf<Def>>(std::move(plan));
}

// The row for route `Def` (an inline constexpr RouteDef of the route's header) with its claim.
template <const auto& Def>
constexpr Route route(Claim (*claim)(const MatchContext&)) {
  static_assert(!Def.name.empty(), "a route has a name");
  static_assert(Def.match && Def.description && Def.pattern && Def.emit,
                "a route has a matcher, its two texts and an emitter");
  return Route{Def.name, claim, &detail::match_with<Def>};
}

}  // namespace cutegen::seed
