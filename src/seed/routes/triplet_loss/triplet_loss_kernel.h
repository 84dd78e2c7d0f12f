#pragma once
// A triplet-loss plan (triplet_loss_plan.h) as a candidate .cu file (triplet_loss_kernel.cu.in).
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/triplet_loss/triplet_loss_plan.h"

namespace cutegen::seed {

std::string generate_triplet_loss_kernel(const TripletLossPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
