#pragma once
// The pointwise route's plan (pointwise_route.h).
#include <cstdint>
#include <string>
#include <vector>

#include "seed/plan_parts.h"

namespace cutegen::seed {

// A host scalar forward argument (`A * s` with s a Python float), read from its descriptor on every
// call: the judge gives it fresh values like any input.
struct ScalarOperand {
  int index = 0;             // contract position
  std::string dtype;         // float64 | int64 | bool
  std::string member;        // the functor's field: s<index>
  std::string name;          // the forward argument's name
};

struct PointwisePlan {
  std::string dtype;                      // float32 | float16 | bfloat16
  std::vector<int64_t> shape;             // of the output and every tensor operand
  int num_contract_inputs = 0;            // forward arguments + parameters + buffers
  std::vector<int> tensor_inputs;         // contract position of each tensor operand x0, x1, ...
  std::vector<std::string> tensor_names;  // their forward-argument or parameter names
  std::vector<ScalarOperand> scalars;
  std::vector<PointwiseStep> steps;
  std::string result;                     // the value the functor returns
  std::string pattern;                    // the chain as one expression: mul(x, sigmoid(x))
};

}  // namespace cutegen::seed
