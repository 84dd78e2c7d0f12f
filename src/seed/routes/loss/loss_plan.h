#pragma once
// The loss route's plan (loss_route.h).
#include <cstdint>
#include <string>
#include <vector>

#include "seed/plan_parts.h"

namespace cutegen::seed {

// A loss: one number, scale x the sum over every element of a pointwise chain of tensors. Each tensor
// has the element shape or is a suffix of it broadcast as torch broadcasts it (a (N,) target over (B, N):
// element e reads index e % its size).
// How the sum becomes the loss: as is, over the element count, or over the batch (kl_div's batchmean).
enum class LossReduction { sum, mean, batchmean };

struct LossPlan {
  int64_t numel = 0;               // elements summed
  double scale = 1;                // 1 (sum), 1/numel (mean), 1/shape[0] (kl_div's batchmean)
  LossReduction reduction = LossReduction::mean;
  std::vector<int> inputs;         // contract position of each tensor operand x0, x1, ...
  std::vector<int64_t> sizes;      // each operand's element count (numel, or its broadcast suffix's)
  std::vector<std::string> names;
  std::vector<PointwiseStep> steps;
  std::string result;
  int num_contract_inputs = 0;
  std::string pattern;
};

}  // namespace cutegen::seed
