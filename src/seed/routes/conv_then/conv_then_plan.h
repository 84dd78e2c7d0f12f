#pragma once
// The conv_then route's plan (conv_then_route.h).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "seed/route.h"
#include "seed/routes/conv/conv_plan.h"
#include "seed/routes/conv_then/pooled_head.h"
#include "seed/routes/then/then_chain.h"

namespace cutegen::seed {

// A convolution (with the pointwise ops right after it fused into its store, as conv_epilogue does) whose
// result y is then the input of one to kMaxThenSteps more seeds, any routes' (a GroupNorm, a pooling, a
// reduction over channels, ... and a pointwise tail after it): the library convolution writes y into the
// workspace, the next seed reads it there as its forward input 0 and writes its own result next to it, and so on
// (the chain: routes/then/then_chain.h).
struct ConvThenPlan {
  ConvPlan head;                    // the convolution and its epilogue, contract positions as the problem's
  std::vector<int64_t> head_shape;  // y: (N, C, spatial...)
  int64_t head_bytes = 0;           // y's bytes rounded up to 256
  std::vector<ThenStep> steps;      // one to kMaxThenSteps
  int num_contract_inputs = 0;
  int num_forward_inputs = 0;       // the problem's forward() arguments: where a step's extra reads go
  // The traced shapes of forward input 0 and of the output: every step's shapes follow from them, so a call
  // with others is refused (the intermediates are sized for these).
  std::vector<int64_t> input_shape, output_shape;
  std::string head_pattern;         // relu(y) + bias, y = conv2d(x, ...)
  // 0: one pass over the traced call. Else the chain runs in batch / batch_chunk passes of batch_chunk images
  // (then/batch_passes.h), its head and steps planned for one pass (head_shape and the steps' shapes hold
  // batch_chunk images) while input_shape and output_shape stay the traced ones.
  int64_t batch = 0, batch_chunk = 0;
  // An average pooling right after the head folded into its weights (pooled_head.h): `head` is then the folded
  // convolution (its output the pooled tensor, y), `traced` the convolution as traced, whose weight the head folds.
  std::optional<PooledHead> pooled;
  ConvPlan traced;
};

}  // namespace cutegen::seed
