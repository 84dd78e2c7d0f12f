#pragma once
// The gemm_then route's plan (gemm_then_route.h).
#include <cstdint>
#include <string>
#include <vector>

#include "seed/routes/gemm/gemm_plan.h"
#include "seed/routes/then/then_chain.h"

namespace cutegen::seed {

// A matrix product on the library's 3xTF32 GEMM or, where that does not take it, the seed's tiled GEMM (head.kernel),
// with what the gemm_epilogue route fuses into its store (a
// pointwise epilogue, a row reduction or a norm), whose result y is then the input of one to kMaxThenSteps more
// seeds, any routes' (a softmax over the rows, a pooling of the rows, a second product, a reduction ...): the
// GEMM writes y into the workspace, the next seed reads it there as its forward input 0 and writes its own
// result next to it, and so on (the chain: routes/then/then_chain.h).
struct GemmThenPlan {
  GemmPlan head;                         // the product and its epilogue, contract positions as the problem's
  std::vector<int64_t> head_shape;       // y as the GEMM writes it
  std::vector<int64_t> head_read_shape;  // y as step 1 reads it (a view of it: x.unsqueeze(1)); empty: as written
  int64_t head_bytes = 0;                // y's bytes rounded up to 256
  std::vector<ThenStep> steps;           // one to kMaxThenSteps
  int num_contract_inputs = 0;
  int num_forward_inputs = 0;            // the problem's forward() arguments: where a step's extra reads go
  // The traced shapes of forward input 0 and of the output: every step's shapes follow from them, so a call
  // with others is refused (the intermediates are sized for these).
  std::vector<int64_t> input_shape, output_shape;
};

}  // namespace cutegen::seed
