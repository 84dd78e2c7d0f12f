#include "seed/seed.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/attention_lowering.h"
#include "seed/graph_util.h"
#include "seed/route_table.h"
#include "seed/routes/gemm/gemm_route.h"
#include "seed/routes/gemm/library_gemm.h"

namespace cutegen::seed {

std::string SeedMatch::no_seed_line() const {
  if (ops.empty()) return fmt::format("no seed for this operator graph: {}", reason);
  return fmt::format("no seed for this operator graph: {} ({})", ops, reason);
}

namespace {

// The graph's ops the output depends on, in order, each once: "torch.matmul, relu".
std::string ops_line(const OpGraph& graph) {
  std::vector<std::string> ops;
  for (int id : reachable(graph)) {
    const OpName& op = graph.node(id).op;
    if (!is_leaf(op.op()) && std::find(ops.begin(), ops.end(), op.spelling()) == ops.end()) ops.push_back(op.spelling());
  }
  return ops.empty() ? "identity" : fmt::format("{}", fmt::join(ops, ", "));
}

SeedMatch match_lowered(const OpGraph& graph);

}  // namespace

SeedMatch match_seed(const OpGraph& traced) {
  if (!traced.traced) return SeedMatch{.reason = traced.reason};
  // Ops the table does not know by name but computes from ones it does (attention) are rewritten first, so the
  // routes decide their kernel as they decide any graph's; the line names the ops forward() called.
  auto lowered = lower_attention(traced);
  if (!lowered) return SeedMatch{.ops = ops_line(traced), .reason = lowered.error().message};
  if (!lowered->lowered) return match_lowered(traced);
  SeedMatch m = match_lowered(lowered->graph);
  m.ops = ops_line(traced);
  if (m.matched())
    m.lowering = kAttentionLoweredText;
  else
    m.reason = fmt::format("attention lowered to a batched product with key transposed, a scale, a row softmax and "
                           "a product with value: {}",
                           m.reason);
  return m;
}

namespace {

SeedMatch match_lowered(const OpGraph& graph) {
  SeedMatch m;
  m.ops = ops_line(graph);
  // An op the seed knows by name whose arguments the worker could not bind (`known: false`, its parameters
  // absent) is refused before any route reads it: a route would take an absent `dim` for None -- a mean over
  // two dimensions read as the mean of everything.
  for (int id : reachable(graph)) {
    const Node& n = graph.node(id);
    if (n.known || n.op == Op::other) continue;
    m.reason = n.note.empty() ? fmt::format("{}: the worker could not read its arguments", n.op)
                              : fmt::format("{}: {}", n.op, n.note);
    return m;
  }
  // A dropout draws a fresh random mask on every call in training mode (an nn.Module's default, and how
  // KernelBench builds its models): no kernel computes that reference, so say so rather than what a route
  // happened to stop at after it.
  for (int id : reachable(graph)) {
    const std::string& spelling = graph.node(id).op.spelling();
    if (spelling == "nn.Dropout" || spelling == "dropout") {
      m.reason = fmt::format("{}: a random mask on every call in training mode (a module's default); the seeds "
                             "are deterministic kernels", spelling);
      return m;
    }
  }
  // The walk over the table: a route that claims the graph is tried and the first plan wins; a refusal is the
  // answer as its claim says (route.h: Claim).
  const MatchContext context = match_context(graph);
  for (const Route& route : route_table()) {
    const Claim claim = route.claim(context);
    if (claim == Claim::skip) continue;
    auto plan = route.match(graph);
    if (plan) {
      m.plan = std::move(*plan);
      m.reason.clear();
      return m;
    }
    if (claim != Claim::last_resort) m.reason = plan.error().message;
    if (claim == Claim::decide || claim == Claim::last_resort) break;
  }
  return m;
}

}  // namespace

namespace {

// A plain product on the library GEMM takes the looser policy's GEMM where that file takes the product
// (library_gemm_precision_refusal): the match is made again from the plan with that choice.
void retarget_for_precision(SeedMatch& m, Precision precision) {
  if (precision == Precision::strict || m.route() != kGemmRoute.name) return;
  const GemmPlan* plan = m.plan_as<GemmPlan>();
  if (!plan || !library_gemm_precision_refusal(*plan, precision).empty()) return;
  GemmPlan looser = *plan;
  looser.library_precision = precision;
  m.plan = matched_plan<kGemmRoute>(std::move(looser));
}

}  // namespace

Result<SeedOutcome> seed_from_graph(const OpGraph& graph, const std::string& problem_name, Precision precision) {
  SeedOutcome out{.match = match_seed(graph)};
  if (!out.match.matched()) return out;
  retarget_for_precision(out.match, precision);
  // The one place the problem's name is made safe for the kernel's comments.
  auto source = out.match.plan->emit(CommentText(problem_name));
  if (!source) return source.error();
  out.source = std::move(*source);
  set_precision_lines(out.source, precision);
  return out;
}

int set_precision_lines(std::string& source, Precision precision) {
  if (precision == Precision::strict) return 0;
  // The library file's default line (library/conv_implicit_gemm.cu), whole: a seed embeds the file once per
  // convolution of its chain.
  constexpr std::string_view kConvDefault = "\n#define CIG_PRECISION 0\n";
  const std::string line = fmt::format(
      "\n#define CIG_PRECISION {}  // set by the seed: the run's --precision {} (the TMA path's products)\n",
      precision == Precision::tf32 ? 1 : 2, to_string(precision));
  int set = 0;
  for (std::size_t at = source.find(kConvDefault); at != std::string::npos;
       at = source.find(kConvDefault, at + line.size())) {
    source.replace(at, kConvDefault.size(), line);
    ++set;
  }
  return set;
}

}  // namespace cutegen::seed
