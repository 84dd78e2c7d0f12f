#pragma once
// The seed stage: a problem's operator graph (traced by the worker) -> the first route of the table that
// takes it (route_table.h) -> a candidate kernel generated without an LLM (docs/seed.md). It depends on
// nothing but `common`: the caller traces the problem (cli/seed_trace.h) and judges the seed like any other
// candidate, so a seed earns nothing the judge did not check.
#include <memory>
#include <string>
#include <string_view>

#include "common/evaluation.h"
#include "common/result.h"
#include "seed/op_graph.h"
#include "seed/route.h"

namespace cutegen::seed {

struct SeedMatch {
  std::shared_ptr<const MatchedPlan> plan;  // the matched route's plan; null when no route took the graph
  std::string ops;     // the graph's ops the output depends on, in order: "torch.matmul, relu"
  std::string reason;  // why there is no seed (set when nothing matched)
  // What the graph was rewritten to before the walk ("attention (... lowered to ...): "), said before the route's
  // line; "" when it was not.
  std::string lowering;

  bool matched() const { return plan != nullptr; }
  // The route's name ("pointwise", "gemm_epilogue", ...); "" when nothing matched.
  std::string_view route() const { return plan ? plan->route() : std::string_view(); }
  // The plan when the route's plan has this type, else nullptr.
  template <class Plan>
  const Plan* plan_as() const {
    const auto* typed = dynamic_cast<const TypedPlan<Plan>*>(plan.get());
    return typed ? &typed->plan() : nullptr;
  }
  // "pointwise chain y = mul(x, sigmoid(x))", "row softmax y = softmax(x, dim=1)"; "" when nothing matched.
  std::string description() const { return plan ? lowering + plan->description() : ""; }
  std::string pattern() const { return plan ? plan->pattern() : ""; }  // the right-hand side, with the kernel
  // "no seed for this operator graph: <ops> (<reason>)"
  std::string no_seed_line() const;
};

// The routes of the table tried in order on the graph (route_table.cpp says how a claim decides).
SeedMatch match_seed(const OpGraph& graph);

struct SeedOutcome {
  SeedMatch match;
  std::string source;  // the generated kernel; empty when nothing matched
  bool found() const { return match.matched(); }
};

// Matches the graph and generates the kernel for what matched; `problem_name` (the problem's file name) is
// written into the kernel's comments escaped (comment_text.h). Under a looser `precision` than strict, a plain
// product on the library GEMM takes that policy's GEMM (library_gemm.h) and the library kernels that have a
// policy line take the run's (set_precision_lines). Error: a library kernel the seed instantiates no longer has
// the lines it sets (a cutegen bug the unit tests catch).
Result<SeedOutcome> seed_from_graph(const OpGraph& graph, const std::string& problem_name,
                                    Precision precision = kDefaultPrecision);

// Every copy of a library kernel's precision-policy line in `source` set to `precision` (strict leaves the
// source as it is): today the library convolution's `CIG_PRECISION`, whose TMA path then runs one TF32 or bf16
// product per term instead of 3xTF32 (its gather kernel stays 3xTF32, more exact than either policy asks).
// Returns how many lines it set.
int set_precision_lines(std::string& source, Precision precision);

}  // namespace cutegen::seed
