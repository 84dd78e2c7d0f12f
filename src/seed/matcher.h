#pragma once
// Recognises seed patterns in a traced operator graph: a **pointwise chain** -- every value the output
// depends on is an input, a parameter, a number, or a pointwise op of the table (pointwise_ops.h) over
// values of the output's shape and float dtype, so output element i needs element i of each tensor and
// nothing else -- a row softmax, and the structured patterns of structured_matcher.h (reductions,
// norms, matrix products).
#include <optional>
#include <string>
#include <vector>

#include "seed/op_graph.h"
#include "seed/plans.h"

namespace cutegen::seed {

// A host scalar forward argument (`A * s` with s a Python float), read from its descriptor on every
// call: the judge gives it fresh values like any input.
struct ScalarOperand {
  int index = 0;             // contract position
  std::string dtype;         // float64 | int64 | bool
  std::string member;        // the functor's field: s<index>
  std::string name;          // the forward argument's name
};


struct PointwisePlan {
  std::string dtype;                      // float32 | float16 | bfloat16
  std::vector<int64_t> shape;             // of the output and every tensor operand
  int num_contract_inputs = 0;            // forward arguments + parameters + buffers
  std::vector<int> tensor_inputs;         // contract position of each tensor operand x0, x1, ...
  std::vector<std::string> tensor_names;  // their forward-argument or parameter names
  std::vector<ScalarOperand> scalars;
  std::vector<PointwiseStep> steps;
  std::string result;                     // the value the functor returns
  std::string pattern;                    // the chain as one expression: mul(x, sigmoid(x))
};

// softmax or log_softmax over the last dimension of one contiguous fp32 forward input: one row per CTA.
struct RowSoftmaxPlan {
  bool log = false;
  std::vector<int64_t> shape;
  int num_contract_inputs = 0;
  int input = 0;              // contract position of the tensor
  std::string pattern;        // softmax(x, dim=1)
};

struct SeedMatch {
  std::optional<PointwisePlan> pointwise;
  std::optional<RowSoftmaxPlan> row_softmax;
  std::optional<ReducePlan> reduce;
  std::optional<NormPlan> norm;
  std::optional<GemmPlan> gemm;
  std::optional<LossPlan> loss;
  std::optional<ScanPlan> scan;
  std::optional<PoolPlan> pool;
  std::optional<DepthwiseConvPlan> depthwise_conv;
  std::optional<BroadcastPlan> broadcast;
  std::optional<CrossEntropyPlan> cross_entropy;
  std::string ops;      // the graph's ops the output depends on, in order: "torch.matmul, relu"
  std::string reason;   // why there is no seed (set when nothing matched)

  bool matched() const {
    return pointwise.has_value() || row_softmax.has_value() || reduce.has_value() || norm.has_value() ||
           gemm.has_value() || loss.has_value() || scan.has_value() || pool.has_value() || depthwise_conv.has_value() ||
           broadcast.has_value() || cross_entropy.has_value();
  }
  // "pointwise chain y = mul(x, sigmoid(x))", "row softmax y = softmax(x, dim=1)"; "" when nothing matched.
  std::string description() const;
  std::string pattern() const;  // the right-hand side alone
  // "no seed for this operator graph: <ops> (<reason>)"
  std::string no_seed_line() const;
};

SeedMatch match_seed(const OpGraph& graph);

}  // namespace cutegen::seed
