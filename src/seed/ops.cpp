#include "seed/ops.h"

#include <utility>

namespace cutegen::seed {
namespace {

// Each Op with the trace's spelling of it; ops_test checks that every Op is here once.
constexpr std::pair<Op, std::string_view> kOpSpellings[] = {
    {Op::input, "input"},
    {Op::param, "param"},
    {Op::constant, "constant"},
    {Op::add, "add"},
    {Op::sub, "sub"},
    {Op::mul, "mul"},
    {Op::div, "div"},
    {Op::identity, "identity"},
    {Op::matmul, "matmul"},
    {Op::linear, "linear"},
    {Op::transpose, "transpose"},
    {Op::triu, "triu"},
    {Op::tril, "tril"},
    {Op::scaled_dot_product_attention, "scaled_dot_product_attention"},
    {Op::softmax, "softmax"},
    {Op::log_softmax, "log_softmax"},
    {Op::logsumexp, "logsumexp"},
    {Op::sum, "sum"},
    {Op::mean, "mean"},
    {Op::prod, "prod"},
    {Op::max, "max"},
    {Op::min, "min"},
    {Op::amax, "amax"},
    {Op::amin, "amin"},
    {Op::argmax, "argmax"},
    {Op::argmin, "argmin"},
    {Op::getitem, "getitem"},
    {Op::layer_norm, "layer_norm"},
    {Op::group_norm, "group_norm"},
    {Op::instance_norm, "instance_norm"},
    {Op::batch_norm, "batch_norm"},
    {Op::norm, "norm"},
    {Op::mse_loss, "mse_loss"},
    {Op::l1_loss, "l1_loss"},
    {Op::smooth_l1_loss, "smooth_l1_loss"},
    {Op::huber_loss, "huber_loss"},
    {Op::kl_div, "kl_div"},
    {Op::cross_entropy, "cross_entropy"},
    {Op::triplet_margin_loss, "triplet_margin_loss"},
    {Op::cumsum, "cumsum"},
    {Op::cumprod, "cumprod"},
    {Op::flip, "flip"},
    {Op::cat, "cat"},
    {Op::narrow, "narrow"},
    {Op::zeros_like, "zeros_like"},
    {Op::max_pool, "max_pool"},
    {Op::avg_pool, "avg_pool"},
    {Op::conv, "conv"},
    {Op::conv_transpose, "conv_transpose"},
    {Op::unsqueeze, "unsqueeze"},
};

}  // namespace

std::string_view op_spelling(Op op) {
  for (const auto& [o, s] : kOpSpellings)
    if (o == op) return s;
  return "";
}

Op op_named(std::string_view spelling) {
  if (spelling.empty()) return Op::other;
  for (const auto& [o, s] : kOpSpellings)
    if (s == spelling) return o;
  return Op::other;
}

bool is_reduction(Op op) {
  switch (op) {
    case Op::sum: case Op::mean: case Op::prod: case Op::max: case Op::min: case Op::amax: case Op::amin:
    case Op::argmax: case Op::argmin: return true;
    default: return false;
  }
}

bool is_norm_module(Op op) {
  return op == Op::layer_norm || op == Op::group_norm || op == Op::instance_norm || op == Op::batch_norm;
}

bool is_loss_function(Op op) {
  return op == Op::mse_loss || op == Op::l1_loss || op == Op::smooth_l1_loss || op == Op::huber_loss ||
         op == Op::kl_div;
}

bool is_leaf(Op op) { return op == Op::input || op == Op::param || op == Op::constant; }

}  // namespace cutegen::seed
