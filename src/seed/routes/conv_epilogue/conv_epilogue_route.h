#pragma once
// The conv_epilogue route (docs/seed.md, "Convolutions with an epilogue"): one convolution the library's
// implicit-GEMM convolution takes (forward or transposed, 1-3 d) followed by pointwise ops of the table on its
// output, numbers written in the module, per-output-channel vectors (a (C, 1, 1) parameter), one-number tensors
// (`torch.tensor(0.5)`) and tensors of the output's shape; the output may be used more than once. The library
// kernel applies the chain in registers before its store (its epilogue() hook): one convolution kernel. The
// conv route's plan, texts and emitter.
#include "seed/route.h"
#include "seed/routes/conv/conv_route.h"

namespace cutegen::seed {

// The convolution's plan with its epilogue, or the reason (the first thing the seed cannot fuse).
Result<ConvPlan> match_conv_epilogue(const OpGraph& g);

inline constexpr RouteDef<ConvPlan> kConvEpilogueRoute{"conv_epilogue", match_conv_epilogue, conv_description,
                                                       conv_pattern, emit_conv};

}  // namespace cutegen::seed
