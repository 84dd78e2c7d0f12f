#pragma once
// The loss route (docs/seed.md, "Losses"): the sum or mean of everything of a pointwise chain (MSE written
// out), or a loss function (mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div) with reduction mean, sum
// or batchmean.
#include "seed/route.h"
#include "seed/routes/loss/loss_plan.h"

namespace cutegen::seed {

Result<LossPlan> match_loss(const OpGraph& g);
// "loss y = ..."
std::string loss_description(const LossPlan& plan);
std::string loss_pattern(const LossPlan& plan);
Result<std::string> emit_loss(const LossPlan& plan, const CommentText& problem);

inline constexpr RouteDef<LossPlan> kLossRoute{"loss", match_loss, loss_description, loss_pattern, emit_loss};

}  // namespace cutegen::seed
