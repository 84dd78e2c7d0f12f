#pragma once
// The pointwise_conv route (docs/seed.md, "Depthwise convolutions"): nn.Conv1d..3d with groups=1, a window of
// 1, stride 1 and no padding or bias -- a 1x1 convolution -- is the batched product y[n] = W (C_out x C_in) @
// x[n] (C_in x spatial), the weight shared by the batch: the gemm route's plan, texts and emitter.
#include "seed/route.h"
#include "seed/routes/gemm/gemm_route.h"

namespace cutegen::seed {

Result<GemmPlan> match_pointwise_conv(const OpGraph& g);

inline constexpr RouteDef<GemmPlan> kPointwiseConvRoute{"pointwise_conv", match_pointwise_conv, gemm_description,
                                                        gemm_pattern, emit_gemm};

}  // namespace cutegen::seed
