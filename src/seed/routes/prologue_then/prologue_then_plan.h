#pragma once
// The prologue_then route's plan (prologue_then_route.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "seed/routes/then/then_chain.h"

namespace cutegen::seed {

// A chain whose convolution or matrix product is not its first operator (KernelBench level 2's 38: an average
// pooling, then the transposed convolution): the steps before it -- the prologue -- are the table's seeds, the
// first reading the problem's inputs; the convolution or product is the next step, reading the prologue's
// result from the workspace as its forward input 0 (the library convolution takes its input from kInputs like
// any tensor); the rest follow as conv_then and gemm_then chain them (routes/then/then_chain.h).
struct PrologueThenPlan {
  // parts[0] reads the problem's inputs and writes y; each next part reads the previous result as forward input
  // 0; the last writes the output. At most 1 + kMaxThenSteps, as conv_then's head and steps.
  std::vector<ThenStep> parts;
  std::size_t product_part = 0;  // the part that starts with the convolution or product
  std::string product_noun;      // "convolution", "transposed convolution", "linear", "matrix product"
  std::string product_input;     // the op whose result it reads: "avg_pool"
  int num_contract_inputs = 0;
  int num_forward_inputs = 0;    // the problem's forward() arguments: where a part's extra reads go
  // The traced shapes of forward input 0 and of the output: every part's shapes follow from them, so a call with
  // others is refused (the intermediates are sized for these).
  std::vector<int64_t> input_shape, output_shape;
};

}  // namespace cutegen::seed
