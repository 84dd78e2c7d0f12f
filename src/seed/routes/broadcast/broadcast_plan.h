#pragma once
// The broadcast route's plan (broadcast_route.h).
#include <cstdint>
#include <string>
#include <vector>

#include "seed/plan_parts.h"

namespace cutegen::seed {

// A pointwise chain whose operands broadcast (torch's rules, right-aligned): each operand x_k is read at
// sum over d of coord[d] * strides[k][d], 0 where it repeats. An operand may be an unsqueeze of an input.
struct BroadcastPlan {
  std::vector<int64_t> shape;                  // the output's
  std::vector<int> inputs;                     // contract position of each operand x0, x1, ...
  std::vector<int64_t> sizes;                  // each operand's element count
  std::vector<std::vector<int64_t>> strides;   // per operand, over the output's dimensions
  std::vector<std::string> names;
  std::vector<PointwiseStep> steps;
  std::string result;
  int num_contract_inputs = 0;
  std::string pattern;
};

}  // namespace cutegen::seed
