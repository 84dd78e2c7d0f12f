#pragma once
// A pointwise step folded into the store of the seed before it (docs/seed.md, "A convolution, then more seeds"):
// in a chain, a pointwise or broadcast step right after a norm, a pooling, a reduction or a softmax would read
// that seed's whole result back and write it again; folded, the seed writes f(v) where it wrote v -- the step's
// own fp32 statements, in its order, its other tensors read at the element's coordinates as the broadcast seed
// reads them -- and the chain loses a kernel and an intermediate. The plans of the routes whose store takes one
// (norm, pool, reduce, row_softmax on their templates) carry it as `epilogue`; then_chain.cpp folds the steps.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "seed/plan_parts.h"
#include "seed/routes/pointwise/pointwise_plan.h"

namespace cutegen::seed {

// A tensor the folded step reads besides the seed's value: contiguous fp32, read at sum over d of coord[d] *
// strides[d] of the element's coordinates in the epilogue's shape (0 where it repeats).
struct EpilogueOperand {
  int input = 0;                 // contract position
  std::string name;              // the forward argument's or parameter's name
  std::string value;             // the step's name for it in `steps`: x1, ...
  int64_t size = 0;              // its element count
  std::vector<int64_t> strides;  // over the epilogue's shape
};

struct StoreEpilogue {
  // The folded step's result, row-major: element e of the seed's contiguous result is element e of it (the same
  // count of values; the step may read the seed's result through a view).
  std::vector<int64_t> shape;
  std::vector<std::string> value_names;   // the step's names for the seed's value (x0)
  std::vector<EpilogueOperand> operands;  // its other tensors
  std::vector<ScalarOperand> scalars;     // host scalar forward arguments, read on every call
  std::vector<PointwiseStep> steps;       // its statements, as its own seed runs them
  std::string result;
  std::string description;  // the step's seed line: "pointwise chain y = clamp(y, max=1, min=0)"
  std::string pattern;      // its pattern: "clamp(y, max=1, min=0)"
};

// What a plan with a folded step adds to its route's texts: ", then <the step's line> (folded into its store)", and
// the same with the step's pattern; "" without one.
std::string epilogue_description(const std::optional<StoreEpilogue>& epilogue);
std::string epilogue_pattern(const std::optional<StoreEpilogue>& epilogue);

// The element offset of an operand with `strides` over `shape` at flat index `index` (a C++ expression), e.g.
// "e / 72 % 16" for a per-channel vector of an (8, 16, 8, 9) result: each dimension the operand does not repeat,
// its coordinate (index / the product of the later dimensions % its size) times its stride; the whole index where
// the operand is read in the shape's own order.
std::string epilogue_offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                            const std::string& index);

// The placeholders of a template whose store takes a folded step, each replaced by nothing without one (so the seed
// is byte for byte what it was):
//   {{EPILOGUE_DEFS}}   at the start of a line in namespace seed: StoreEpilogue (the operands' pointers and scalars),
//                       store_epilogue(ep, v, e) and the host's load_store_epilogue(inputs, out, ep);
//   {{EPILOGUE_PARAM}}  after a kernel's last parameter: `, const StoreEpilogue ep`;
//   {{EPILOGUE_ARG}}    after a launch's last argument: `, ep`;
//   {{EPILOGUE_LOAD}}   at the start of a line of the entry point, once `inputs` and `outputs[0]` are checked: ep
//                       loaded, the call refused when its operands are not the traced ones;
//   {{STORE(v; e)}}     the value stored for flat element e of the result: `store_epilogue(ep, v, e)`, or `v`.
// The template's clamp_lo/clamp_hi (the pointwise table's helpers) are defined with the epilogue when it has none.
void fill_store_epilogue(std::string& text, const std::optional<StoreEpilogue>& epilogue);

}  // namespace cutegen::seed
