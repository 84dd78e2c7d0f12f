#pragma once
// The reduction route's plan (reduce_route.h): y[o, i] = op over r of x[o, r, i], the input viewed as
// (outer, extent, inner) around the reduced dimension (a reduction over everything is outer = inner = 1; over
// several adjacent dimensions, extent is their product).
// inner == 1 is a row per CTA, inner > 1 a thread per output walking the column (coalesced across threads).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "seed/store_epilogue.h"

namespace cutegen::seed {

enum class ReduceOp { sum, mean, prod, max, min, argmax, argmin, logsumexp };
// "sum", ...: as the template's comments and the library kernel's ReduceOp enumerators spell it.
std::string_view reduce_op_name(ReduceOp op);

// The kernel that computes it: the library's reduce_dim (library/reduce_dim.cu) or the route's
// template (reduce_kernel.cu.in).
enum class ReduceKernel { reduce_template, library_reduce_dim };

struct ReducePlan {
  ReduceOp op = ReduceOp::sum;
  int64_t outer = 1, extent = 1, inner = 1;
  std::string out_dtype;  // float32, or int64 for argmax/argmin
  int num_contract_inputs = 0;
  int input = 0;
  std::string pattern;  // sum(x, dim=1, keepdim=True)
  int dim = -1;         // the reduced dimension of the input as traced (the first of `merged`); -1: everything
  int merged = 1;       // how many adjacent dimensions from `dim` on the extent merges (`dim=(2, 3)`: 2)
  // Decided once by the matcher: the library kernel unless library_reduce_refusal (library_reduce.h) has a
  // reason against the plan, kept in kernel_reason.
  ReduceKernel kernel = ReduceKernel::reduce_template;
  std::string kernel_reason;
  // A pointwise step after this seed in a chain, folded into its store (store_epilogue.h); none outside chains
  // (the template only, of a float32 result).
  std::optional<StoreEpilogue> epilogue;
};

}  // namespace cutegen::seed
