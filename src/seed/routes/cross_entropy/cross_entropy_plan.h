#pragma once
// The cross_entropy route's plan (cross_entropy_route.h).
#include <cstdint>
#include <string>
#include <vector>

#include "seed/plan_parts.h"

namespace cutegen::seed {

// F.cross_entropy of fp32 logits (rows, classes) against int64 class indices, reduction mean or sum.
struct CrossEntropyPlan {
  int64_t rows = 0, classes = 0;
  int64_t ignore_index = -100;
  bool mean = true;
  int logits_input = 0, targets_input = 1;
  int num_contract_inputs = 0;
  std::string pattern;
};

}  // namespace cutegen::seed
