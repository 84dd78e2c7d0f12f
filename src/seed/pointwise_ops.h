#pragma once
// The table from a canonical torch op (as the worker's trace names it) to a CUDA device expression
// in fp32, following ATen's own formula for each so that the seed's error stays within the judge's
// bound of PyTorch's (e.g. gelu: `x * 0.5f * (1.f + erff(x * 0.707106769f))`, elu via expm1f).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "seed/op_graph.h"

namespace cutegen::seed {

// One argument as the expression sees it: C++ text (a value name or a literal) and, for a literal,
// its number (pow's exponent picks a formula, as ATen does).
struct ExprArg {
  std::string text;
  std::optional<double> constant;
};

// 1 or 2 for a known op, 0 when the table does not have it.
int pointwise_arity(const std::string& op);
// Every op in the table, sorted (docs/seed.md lists them).
std::vector<std::string> pointwise_op_names();

// The expression for `op` on `args`. Error (one line): a parameter the formula needs is missing or
// not supported (gelu's approximate other than none/tanh, div with a rounding mode).
Result<std::string> pointwise_expression(const std::string& op, const std::vector<ExprArg>& args,
                                         const std::map<std::string, ParamValue>& params);

// A C++ float literal for v as fp32 sees it: 0.5f, 2.f, 1e-05f, (-3.f), INFINITY, NAN.
std::string float_literal(double v);

}  // namespace cutegen::seed
