#include "seed/routes/reduce/reduce_kernel.h"

#include <fmt/format.h>

#include "seed/store_epilogue.h"
#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kReduceTemplate =
#include "seed/reduce_kernel.inc"
    ;

struct OpText {
  const char* identity;
  const char* combine;
  const char* finish;
};

// Argmax/argmin compare values, then indices: the tree combines out of order, and torch returns the
// first index of the extreme value (a NaN is the extreme: the first NaN wins).
constexpr const char* kArgCombine =
    "  const bool a_nan = isnan(a.v), b_nan = isnan(b.v);\n"
    "  if (a_nan || b_nan) return a_nan && b_nan ? (a.i <= b.i ? a : b) : (a_nan ? a : b);\n"
    "  if (a.v != b.v) return a.v {} b.v ? a : b;\n"
    "  return a.i <= b.i ? a : b;";

OpText op_text(ReduceOp op) {
  if (op == ReduceOp::sum) return {"{0.0, 0}", "  return {a.v + b.v, 0};", "static_cast<float>(a.v)"};
  if (op == ReduceOp::mean) return {"{0.0, 0}", "  return {a.v + b.v, 0};", "static_cast<float>(a.v / double(kExtent))"};
  if (op == ReduceOp::prod) return {"{1.0, 0}", "  return {a.v * b.v, 0};", "static_cast<float>(a.v)"};
  if (op == ReduceOp::max)
    return {"{-INFINITY, 0}", "  if (isnan(a.v) || isnan(b.v)) return {NAN, 0};\n  return {fmax(a.v, b.v), 0};",
            "static_cast<float>(a.v)"};
  if (op == ReduceOp::min)
    return {"{INFINITY, 0}", "  if (isnan(a.v) || isnan(b.v)) return {NAN, 0};\n  return {fmin(a.v, b.v), 0};",
            "static_cast<float>(a.v)"};
  // logsumexp: (max, sum of exp(x - max)) in (v, s), an element x being (x, 1) (s's default), merged with
  // rescaling so no exp overflows; a NaN is NaN and +inf is +inf, as torch.logsumexp gives them.
  if (op == ReduceOp::logsumexp)
    return {"{-INFINITY, 0, 0.0}",
            "  if (isnan(a.v) || isnan(b.v)) return {NAN, 0, NAN};\n"
            "  const double m = fmax(a.v, b.v);\n"
            "  if (m == -INFINITY) return {m, 0, 0.0};\n"
            "  if (m == INFINITY) return {m, 0, 1.0};\n"
            "  return {m, 0, a.s * exp(a.v - m) + b.s * exp(b.v - m)};",
            "static_cast<float>(a.v + log(a.s))"};
  if (op == ReduceOp::argmax) return {"{-INFINITY, INT64_MAX}", "", "a.i"};
  return {"{INFINITY, INT64_MAX}", "", "a.i"};  // argmin
}

}  // namespace

std::string generate_reduce_kernel(const ReducePlan& plan, const CommentText& problem) {
  const OpText t = op_text(plan.op);
  std::string combine = t.combine;
  if (plan.op == ReduceOp::argmax) combine = fmt::format(kArgCombine, ">");
  if (plan.op == ReduceOp::argmin) combine = fmt::format(kArgCombine, "<");
  const bool index = plan.out_dtype == "int64";
  std::string text = kReduceTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "MERGED",
                      plan.merged > 1 ? fmt::format("// over dims {}-{}, next to each other in memory: reduced as one "
                                                    "dimension of their product's extent\n",
                                                    plan.dim, plan.dim + plan.merged - 1)
                                      : "");
  replace_placeholder(text, "OP", std::string(reduce_op_name(plan.op)));
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "INPUT", std::to_string(plan.input));
  replace_placeholder(text, "OUTER", std::to_string(plan.outer));
  replace_placeholder(text, "EXTENT", std::to_string(plan.extent));
  replace_placeholder(text, "INNER", std::to_string(plan.inner));
  replace_placeholder(text, "OUT_TYPE", index ? "int64_t" : "float");
  replace_placeholder(text, "OUT_DTYPE", index ? "CUTEGEN_INT64" : "CUTEGEN_FLOAT32");
  replace_placeholder(text, "IDENTITY", t.identity);
  replace_placeholder(text, "COMBINE", combine);
  replace_placeholder(text, "FINISH", t.finish);
  // logsumexp's running sum beside the max; an element is (x, s = 1).
  const bool lse = plan.op == ReduceOp::logsumexp;
  replace_placeholder(text, "ACC_FIELDS", lse ? "\n  double s = 1.0;  // logsumexp: the sum of exp(x - v)" : "");
  replace_placeholder(text, "SHUFFLE_FIELDS", lse ? ", __shfl_xor_sync(0xffffffffu, a.s, offset)" : "");
  fill_store_epilogue(text, plan.epilogue);
  return text;
}

}  // namespace cutegen::seed
