#pragma once
// The row-softmax route's plan (row_softmax_route.h).
#include <cstdint>
#include <string>
#include <vector>

namespace cutegen::seed {

// The kernel that computes it: the route's row kernel (row_softmax_kernel.cu.in, one CTA per row) or one of
// the library's softmax kernels for long rows or large tensors (library_softmax.h).
enum class SoftmaxKernel { row_template, library_ticket, library_cluster };

// softmax or log_softmax over the last dimension of one contiguous fp32 forward input.
struct RowSoftmaxPlan {
  bool log = false;
  std::vector<int64_t> shape;
  int num_contract_inputs = 0;
  int input = 0;              // contract position of the tensor
  std::string pattern;        // softmax(x, dim=1)
  // Decided once by the matcher: a library kernel unless library_softmax_refusal has a reason against the
  // plan (kept in kernel_reason), the ticket or cluster kernel as library_softmax_kernel chooses.
  SoftmaxKernel kernel = SoftmaxKernel::row_template;
  std::string kernel_reason;
};

}  // namespace cutegen::seed
