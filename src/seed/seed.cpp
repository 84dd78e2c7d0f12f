#include "seed/seed.h"

#include <chrono>
#include <utility>

#include "seed/broadcast_kernel.h"
#include "seed/cross_entropy_kernel.h"
#include "seed/depthwise_conv_kernel.h"
#include "seed/gemm_kernel.h"
#include "seed/gemv_kernel.h"
#include "seed/library_gemm.h"
#include "seed/library_reduce.h"
#include "seed/library_rmsnorm.h"
#include "seed/library_softmax.h"
#include "seed/loss_kernel.h"
#include "seed/norm_kernel.h"
#include "seed/pointwise_kernel.h"
#include "seed/pool_kernel.h"
#include "seed/reduce_kernel.h"
#include "seed/scan_kernel.h"
#include "seed/row_softmax_kernel.h"

namespace cutegen::seed {
namespace fs = std::filesystem;

Result<OpGraph> trace_problem(ReferenceWorker& worker, const fs::path& problem) {
  // Tracing runs on meta tensors: seconds, whatever the problem's size (a CPU fallback can be slower).
  auto answer = worker.call("trace", {{"problem", fs::absolute(problem).string()}}, std::chrono::seconds(300));
  if (!answer) return answer.error();
  return OpGraph::from_json(*answer);
}

namespace {

// A class with a library route: the library kernel when the route does not refuse the plan (its own
// generator can still fail: the library file changed under it), else the class's template.
template <class Plan>
Status library_or_template(std::string& source, const Plan& plan, std::string (*refusal)(const Plan&),
                           Result<std::string> (*library)(const Plan&, const std::string&),
                           std::string (*generate)(const Plan&, const std::string&), const std::string& problem_name) {
  if (!refusal(plan).empty()) {
    source = generate(plan, problem_name);
    return ok_status();
  }
  auto text = library(plan, problem_name);
  if (!text) return text.error();
  source = std::move(*text);
  return ok_status();
}

}  // namespace

Result<SeedOutcome> seed_from_graph(const OpGraph& graph, const std::string& problem_name) {
  SeedOutcome out{.match = match_seed(graph)};
  if (out.match.pointwise) out.source = generate_pointwise_kernel(*out.match.pointwise, problem_name);
  Status routed = ok_status();
  if (out.match.row_softmax)
    routed = library_or_template(out.source, *out.match.row_softmax, library_softmax_refusal,
                                 generate_library_softmax_kernel, generate_row_softmax_kernel, problem_name);
  if (out.match.reduce)
    routed = library_or_template(out.source, *out.match.reduce, library_reduce_refusal,
                                 generate_library_reduce_kernel, generate_reduce_kernel, problem_name);
  if (out.match.norm)
    routed = library_or_template(out.source, *out.match.norm, library_rmsnorm_refusal,
                                 generate_library_rmsnorm_kernel, generate_norm_kernel, problem_name);
  if (!routed) return routed.error();
  if (out.match.gemm) {
    switch (out.match.gemm->route) {
      case GemmRoute::tiled:
      case GemmRoute::split_k: out.source = generate_gemm_kernel(*out.match.gemm, problem_name); break;
      case GemmRoute::gemv: out.source = generate_gemv_kernel(*out.match.gemm, problem_name); break;
      case GemmRoute::library: {
        auto source = generate_library_gemm_kernel(*out.match.gemm, problem_name);
        if (!source) return source.error();
        out.source = std::move(*source);
        break;
      }
    }
  }
  if (out.match.loss) out.source = generate_loss_kernel(*out.match.loss, problem_name);
  if (out.match.scan) out.source = generate_scan_kernel(*out.match.scan, problem_name);
  if (out.match.pool) out.source = generate_pool_kernel(*out.match.pool, problem_name);
  if (out.match.depthwise_conv) out.source = generate_depthwise_conv_kernel(*out.match.depthwise_conv, problem_name);
  if (out.match.broadcast) out.source = generate_broadcast_kernel(*out.match.broadcast, problem_name);
  if (out.match.cross_entropy) out.source = generate_cross_entropy_kernel(*out.match.cross_entropy, problem_name);
  return out;
}

Result<SeedOutcome> seed_for_problem(ReferenceWorker& worker, const fs::path& problem) {
  auto graph = trace_problem(worker, problem);
  if (!graph) return graph.error();
  return seed_from_graph(*graph, problem.filename().string());
}

}  // namespace cutegen::seed
