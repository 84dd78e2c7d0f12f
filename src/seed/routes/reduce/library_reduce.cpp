#include "seed/routes/reduce/library_reduce.h"

#include <fmt/format.h>

#include "seed/library_text.h"

namespace cutegen::seed {
namespace {

// library/reduce_dim.cu, read at build time (src/CMakeLists.txt): one source of truth.
constexpr const char* kReduceDimLibrary =
#include "seed/reduce_dim.inc"
    ;

constexpr const char* kOpLine = "constexpr ReduceOp kOp = ReduceOp::sum;  // the operation: set per problem";
constexpr const char* kDimLine =
    "constexpr int kDim = 1;                  // the reduced dimension (negative counts from the end)";

}  // namespace

std::string library_reduce_refusal(const ReducePlan& p) {
  if (p.op == ReduceOp::prod || p.op == ReduceOp::logsumexp)
    return fmt::format("{}: the library's reduce_dim computes sum, mean, max, min, argmax, argmin", reduce_op_name(p.op));
  if (p.dim < 0) return "over every element, not one dimension: the library's reduce_dim reduces one dimension";
  if (p.merged > 1)
    return fmt::format("over {} dimensions at once: the library's reduce_dim reduces one dimension", p.merged);
  if (p.num_contract_inputs != 1 || p.input != 0)
    return "the reduced tensor is not the contract's only input (the library kernel reads inputs[0] alone)";
  return "";
}

Result<std::string> generate_library_reduce_kernel(const ReducePlan& plan, const CommentText& problem) {
  return generate_library_reduce_kernel(plan, problem, kReduceDimLibrary);
}

Result<std::string> generate_library_reduce_kernel(const ReducePlan& p, const CommentText& problem,
                                                   std::string library) {
  if (auto why = library_reduce_refusal(p); !why.empty()) return Error{"no library reduction seed: " + why};
  if (auto s = replace_library_lines(
          library,
          {{kOpLine, fmt::format("constexpr ReduceOp kOp = ReduceOp::{};  // set by the seed from the graph", reduce_op_name(p.op))},
           {kDimLine, fmt::format("constexpr int kDim = {};  // set by the seed from the graph", p.dim)}},
          "library/reduce_dim.cu", "src/seed/routes/reduce/library_reduce.cpp");
      !s)
    return s.error();
  const std::string header = fmt::format(
      "// Seed kernel for {0}, written by cutegen without an LLM (docs/seed.md): a reduction over dimension {1} of\n"
      "// one contiguous fp32 tensor, viewed as ({2}, {3}, {4}) around it when traced:\n"
      "//   y = {5}\n"
      "//\n"
      "// The kernel is the library's reduce_dim, library/reduce_dim.cu, as it is below but for kOp and\n"
      "// kDim, which the seed sets from the graph. Chosen over the seed's reduction template\n"
      "// (src/seed/routes/reduce/reduce_kernel.cu.in): on an H200 it ran KernelBench 47-53 at 86-96% of the\n"
      "// floor where the template reached 53-54% on argmax/argmin (benchmarks/results.md).\n"
      "//\n",
      problem.str(), p.dim, p.outer, p.extent, p.inner, p.pattern);
  return header + library;
}

}  // namespace cutegen::seed
