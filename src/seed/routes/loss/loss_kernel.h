#pragma once
// A loss plan (loss_plan.h) as a candidate .cu file: the two-step reduction of loss_kernel.cu.in with the
// element's chain written in.
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/loss/loss_plan.h"

namespace cutegen::seed {

std::string generate_loss_kernel(const LossPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
