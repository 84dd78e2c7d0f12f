#include "seed/library_softmax.h"

#include <fmt/format.h>

#include "seed/library_text.h"

namespace cutegen::seed {
namespace {

// examples/kernels/softmax_cluster.cu, read at build time (src/CMakeLists.txt): one source of truth, so a fix
// to the library kernel is the seed's fix too. log_softmax_cluster.cu is the same file with kLogSoftmax true.
constexpr const char* kClusterSoftmaxLibrary =
#include "seed/softmax_cluster.inc"
    ;

constexpr const char* kClusterSoftmaxLogLine = "constexpr bool kLogSoftmax = false;  // log_softmax_cluster.cu: true";

int64_t row_length(const RowSoftmaxPlan& p) { return p.shape.empty() ? 0 : p.shape.back(); }

}  // namespace

std::string library_softmax_refusal(const RowSoftmaxPlan& p) {
  if (p.num_contract_inputs != 1 || p.input != 0)
    return "the softmax's operand is not the contract's only input (the library kernel reads inputs[0] alone)";
  if (row_length(p) < kLibrarySoftmaxMinRow)
    return fmt::format("rows of {} values, fewer than {}: the row kernel's second read still comes from the L2",
                       row_length(p), kLibrarySoftmaxMinRow);
  return "";
}

Result<std::string> generate_library_softmax_kernel(const RowSoftmaxPlan& plan, const std::string& problem_name) {
  return generate_library_softmax_kernel(plan, problem_name, kClusterSoftmaxLibrary);
}

Result<std::string> generate_library_softmax_kernel(const RowSoftmaxPlan& p, const std::string& problem_name,
                                                    std::string library) {
  if (auto s = replace_library_line(library, kClusterSoftmaxLogLine,
                                    fmt::format("constexpr bool kLogSoftmax = {};  // set by the seed: {}",
                                                p.log ? "true" : "false", p.log ? "log_softmax" : "softmax"),
                                    "examples/kernels/softmax_cluster.cu", "src/seed/library_softmax.cpp");
      !s)
    return s.error();
  std::string shape;
  for (auto d : p.shape) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
  const std::string header = fmt::format(
      "// Seed kernel for {0}, written by cutegen without an LLM (docs/seed.md): {1} over the last\n"
      "// dimension of one contiguous fp32 tensor ({2} when traced):\n"
      "//   y = {3}\n"
      "//\n"
      "// The kernel is the library's cluster softmax, examples/kernels/softmax_cluster.cu, as it is below but for\n"
      "// kLogSoftmax, which the seed sets from the graph. Chosen over the seed's row kernel\n"
      "// (src/seed/row_softmax_kernel.cu.in, which reads every row twice) because rows of {4} values (at least\n"
      "// {5}) are too long for that second read to come from the L2: this kernel holds a row in a thread-block\n"
      "// cluster's shared memory and reads it from DRAM once. On an H200, KernelBench's 4096 x 393216 softmax ran\n"
      "// 3.64 ms so against the row kernel's 4.94 (benchmarks/gpu-check-2026-12-01f.md).\n"
      "//\n",
      problem_name, p.log ? "log_softmax" : "softmax", shape, p.pattern, row_length(p), kLibrarySoftmaxMinRow);
  return header + library;
}

}  // namespace cutegen::seed
