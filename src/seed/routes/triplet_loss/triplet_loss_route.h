#pragma once
// The triplet_loss route (docs/seed.md, "Losses"): nn.TripletMarginLoss or F.triplet_margin_loss of three
// same-shape contiguous fp32 forward inputs, 1-d or (rows, features), with p=2, swap=False, reduction mean or sum.
#include "seed/route.h"
#include "seed/routes/triplet_loss/triplet_loss_plan.h"

namespace cutegen::seed {

Result<TripletLossPlan> match_triplet_loss(const OpGraph& g);
// "loss y = ..."
std::string triplet_loss_description(const TripletLossPlan& plan);
std::string triplet_loss_pattern(const TripletLossPlan& plan);
Result<std::string> emit_triplet_loss(const TripletLossPlan& plan, const CommentText& problem);

inline constexpr RouteDef<TripletLossPlan> kTripletLossRoute{"triplet_loss", match_triplet_loss,
                                                             triplet_loss_description, triplet_loss_pattern,
                                                             emit_triplet_loss};

}  // namespace cutegen::seed
