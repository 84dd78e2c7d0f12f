#pragma once
// The row-softmax route's plan (row_softmax_route.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "seed/store_epilogue.h"

namespace cutegen::seed {

// The kernel that computes it: the route's row kernel (row_softmax_kernel.cu.in, one CTA per row), one of
// the library's softmax kernels for long rows or large tensors (library_softmax.h), or, over a dimension that
// is not the last, the strided kernel (strided_softmax_kernel.cu.in, a thread per column).
enum class SoftmaxKernel { row_template, library_ticket, library_cluster, strided_template };

// softmax or log_softmax over one dimension of one contiguous fp32 forward input: the last (rows), or another
// (strided: the input viewed as (outer, extent, inner) around it, inner > 1).
struct RowSoftmaxPlan {
  bool log = false;
  std::vector<int64_t> shape;
  int num_contract_inputs = 0;
  int input = 0;              // contract position of the tensor
  std::string pattern;        // softmax(x, dim=1)
  int64_t dim = -1;           // the softmax's dimension, in [0, rank)
  int64_t outer = 1, extent = 1, inner = 1;
  // Decided once by the matcher: over the last dimension a library kernel unless library_softmax_refusal has a
  // reason against the plan (kept in kernel_reason), the ticket or cluster kernel as library_softmax_kernel
  // chooses; over another, the strided kernel.
  SoftmaxKernel kernel = SoftmaxKernel::row_template;
  std::string kernel_reason;
  // A pointwise step after this seed in a chain, folded into its store (store_epilogue.h); none outside chains
  // (the row and strided templates only).
  std::optional<StoreEpilogue> epilogue;
};

}  // namespace cutegen::seed
