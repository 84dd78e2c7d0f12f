#pragma once
// The triplet_loss route's plan (triplet_loss_route.h).
#include <cstdint>
#include <string>

namespace cutegen::seed {

// nn.TripletMarginLoss / F.triplet_margin_loss with p=2, swap=False: per row b of (rows, features) fp32 tensors,
//   l(b) = max(margin + ||a_b - p_b + eps||_2 - ||a_b - n_b + eps||_2, 0),
// reduced to one number: the mean over the rows, or their sum.
struct TripletLossPlan {
  int64_t rows = 1, features = 0;
  double margin = 1.0, eps = 1e-6;
  bool mean = true;
  int anchor_input = 0, positive_input = 1, negative_input = 2;
  std::string anchor_name, positive_name, negative_name;
  int num_contract_inputs = 0;
  std::string pattern;
};

}  // namespace cutegen::seed
