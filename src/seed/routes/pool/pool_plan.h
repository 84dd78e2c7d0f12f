#pragma once
// The pool route's plan (pool_route.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "seed/plan_parts.h"
#include "seed/store_epilogue.h"

namespace cutegen::seed {

// Max or average pooling over the last `dims` dimensions (1 to 3) of each (N, C) plane, PyTorch's window
// geometry; spatial sizes padded to (D, H, W) with size-1 dimensions.
struct PoolPlan {
  bool max = true;
  int dims = 2;
  int64_t planes = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  bool count_include_pad = true;
  int64_t divisor_override = 0;
  int num_contract_inputs = 0;
  int input = 0;
  std::string pattern;
  // A pointwise step after this seed in a chain, folded into its store (store_epilogue.h); none outside chains.
  std::optional<StoreEpilogue> epilogue;
};

}  // namespace cutegen::seed
