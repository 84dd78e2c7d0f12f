#include "seed/pointwise_ops.h"

#include <cmath>
#include <functional>

#include <fmt/format.h>

namespace cutegen::seed {
namespace {

using Params = std::map<std::string, ParamValue>;
using Args = std::vector<ExprArg>;

struct Spec {
  int arity;
  std::function<Result<std::string>(const Args&, const Params&)> expr;
};

Result<double> number(const std::string& op, const Params& p, const std::string& key) {
  auto it = p.find(key);
  if (it == p.end()) return Error{fmt::format("{} has no value for {}", op, key)};
  if (const double* d = std::get_if<double>(&it->second)) return *d;
  if (const bool* b = std::get_if<bool>(&it->second)) return *b ? 1.0 : 0.0;
  return Error{fmt::format("{}'s {} is not a number", op, key)};
}

// Optional bound (clamp's min/max): nullopt when None.
Result<std::optional<double>> bound(const std::string& op, const Params& p, const std::string& key) {
  auto it = p.find(key);
  if (it == p.end() || std::holds_alternative<std::monostate>(it->second)) return std::optional<double>{};
  auto v = number(op, p, key);
  if (!v) return v.error();
  return std::optional<double>{*v};
}

Spec unary(std::function<std::string(const std::string&)> f) {
  return {1, [f](const Args& a, const Params&) -> Result<std::string> { return f(a[0].text); }};
}

// One scalar parameter, as a literal.
Spec unary1(const std::string& op, const std::string& key,
            std::function<std::string(const std::string&, double)> f) {
  return {1, [=](const Args& a, const Params& p) -> Result<std::string> {
            auto v = number(op, p, key);
            if (!v) return v.error();
            return f(a[0].text, *v);
          }};
}

std::string lit(double v) { return float_literal(v); }

Result<std::string> clamp_expr(const std::string& x, std::optional<double> lo, std::optional<double> hi) {
  if (!lo && !hi) return Error{"clamp needs at least one of min and max"};
  std::string e = x;
  if (lo) e = fmt::format("clamp_lo({}, {})", e, lit(*lo));
  if (hi) e = fmt::format("clamp_hi({}, {})", e, lit(*hi));
  return e;
}

// ATen's pow with a scalar exponent: these exponents have their own formulas there, and here.
std::string pow_expr(const ExprArg& base, const ExprArg& exponent) {
  const std::string& x = base.text;
  if (exponent.constant && !base.constant) {
    double e = *exponent.constant;
    if (e == 0) return "1.f";
    if (e == 1) return x;
    if (e == 2) return fmt::format("({0} * {0})", x);
    if (e == 3) return fmt::format("({0} * {0} * {0})", x);
    if (e == 0.5) return fmt::format("sqrtf({})", x);
    if (e == -0.5) return fmt::format("rsqrtf({})", x);
    if (e == -1) return fmt::format("(1.f / {})", x);
    if (e == -2) return fmt::format("(1.f / ({0} * {0}))", x);
  }
  return fmt::format("powf({}, {})", x, exponent.text);
}

const std::map<std::string, Spec>& table() {
  static const std::map<std::string, Spec> t = [] {
    std::map<std::string, Spec> m;
    m["identity"] = unary([](auto& x) { return x; });
    m["relu"] = unary([](auto& x) { return fmt::format("({0} < 0.f ? 0.f : {0})", x); });
    m["relu6"] = unary([](auto& x) { return fmt::format("clamp_hi(clamp_lo({}, 0.f), 6.f)", x); });
    m["sigmoid"] = unary([](auto& x) { return fmt::format("(1.f / (1.f + expf(-{})))", x); });
    m["tanh"] = unary([](auto& x) { return fmt::format("tanhf({})", x); });
    m["silu"] = unary([](auto& x) { return fmt::format("({0} / (1.f + expf(-{0})))", x); });
    // tanh(log1p(e)) = n / (n + 2) with n = e (e + 2), e = exp(x): one exp and one division where
    // log1pf, tanhf and expf cost ~60 instructions, which an epilogue repeats for every element of a thread's
    // accumulators (the conv epilogue's SASS grew ~3x on mish(mish(y)), KernelBench level 2's task 4).
    // No cancellation: for x -> -inf both n and the result go to 0 relatively exactly; from x = 20 on,
    // tanh(softplus(x)) rounds to 1 in fp32 (and e * e would overflow from x = 44).
    m["mish"] = unary([](auto& x) {
      return fmt::format(
          "([](float v) {{ const float e = expf(v), n = e * (e + 2.f); return v >= 20.f ? v : v * (n / (n + 2.f)); }}({}))",
          x);
    });
    m["softsign"] = unary([](auto& x) { return fmt::format("({0} / (1.f + fabsf({0})))", x); });
    m["logsigmoid"] = unary([](auto& x) { return fmt::format("(fminf({0}, 0.f) - log1pf(expf(-fabsf({0}))))", x); });
    m["tanhshrink"] = unary([](auto& x) { return fmt::format("({0} - tanhf({0}))", x); });
    m["hardsigmoid"] = unary([](auto& x) {
      return fmt::format("(clamp_hi(clamp_lo({} + 3.f, 0.f), 6.f) * (1.f / 6.f))", x);
    });
    m["hardswish"] = unary([](auto& x) {
      return fmt::format("({0} * clamp_hi(clamp_lo({0} + 3.f, 0.f), 6.f) * (1.f / 6.f))", x);
    });
    // ATen's selu is elu with alpha and scale fixed: negative side expm1(x) * alpha * scale.
    m["selu"] = unary([](auto& x) {
      constexpr double kAlpha = 1.6732632423543772848170429916717, kScale = 1.0507009873554804934193349852946;
      return fmt::format("({0} > 0.f ? {0} * {1} : expm1f({0}) * {2})", x, lit(kScale), lit(kAlpha * kScale));
    });
    m["elu"] = unary1("elu", "alpha", [](auto& x, double a) {
      return fmt::format("({0} > 0.f ? {0} : expm1f({0}) * {1})", x, lit(a));
    });
    m["celu"] = {1, [](const Args& a, const Params& p) -> Result<std::string> {
                   auto alpha = number("celu", p, "alpha");
                   if (!alpha) return alpha.error();
                   if (*alpha == 0) return Error{"celu's alpha is 0"};
                   return fmt::format("({0} > 0.f ? {0} : expm1f({0} * {1}) * {2})", a[0].text, lit(1.0 / *alpha),
                                      lit(*alpha));
                 }};
    m["leaky_relu"] = unary1("leaky_relu", "negative_slope", [](auto& x, double s) {
      return fmt::format("({0} > 0.f ? {0} : {0} * {1})", x, lit(s));
    });
    m["softshrink"] = unary1("softshrink", "lambd", [](auto& x, double l) {
      return fmt::format("({0} > {1} ? {0} - {1} : ({0} < {2} ? {0} + {1} : ({0} == {0} ? 0.f : {0})))", x, lit(l),
                         lit(-l));
    });
    m["hardshrink"] = unary1("hardshrink", "lambd", [](auto& x, double l) {
      return fmt::format("(({0} >= {1} && {0} <= {2}) ? 0.f : {0})", x, lit(-l), lit(l));
    });
    m["gelu"] = {1, [](const Args& a, const Params& p) -> Result<std::string> {
                   auto it = p.find("approximate");
                   std::string mode = "none";
                   if (it != p.end()) {
                     const auto* s = std::get_if<std::string>(&it->second);
                     if (!s) return Error{"gelu's approximate is not a string"};
                     mode = *s;
                   }
                   const std::string& x = a[0].text;
                   if (mode == "none") return fmt::format("({0} * 0.5f * (1.f + erff({0} * {1})))", x, lit(M_SQRT1_2));
                   if (mode == "tanh")
                     return fmt::format("(0.5f * {0} * (1.f + tanhf({1} * ({0} + 0.044715f * {0} * {0} * {0}))))", x,
                                        lit(M_SQRT2 * M_2_SQRTPI * 0.5));
                   return Error{fmt::format("gelu with approximate='{}' (torch knows none and tanh)", mode)};
                 }};
    m["softplus"] = {1, [](const Args& a, const Params& p) -> Result<std::string> {
                       auto beta = number("softplus", p, "beta");
                       auto threshold = number("softplus", p, "threshold");
                       if (!beta) return beta.error();
                       if (!threshold) return threshold.error();
                       const std::string& x = a[0].text;
                       if (*beta == 1)
                         return fmt::format("({0} > {1} ? {0} : log1pf(expf({0})))", x, lit(*threshold));
                       return fmt::format("({0} * {1} > {2} ? {0} : log1pf(expf({0} * {1})) / {1})", x, lit(*beta),
                                          lit(*threshold));
                     }};
    m["hardtanh"] = {1, [](const Args& a, const Params& p) -> Result<std::string> {
                       auto lo = number("hardtanh", p, "min_val");
                       auto hi = number("hardtanh", p, "max_val");
                       if (!lo) return lo.error();
                       if (!hi) return hi.error();
                       return clamp_expr(a[0].text, *lo, *hi);
                     }};
    m["clamp"] = {1, [](const Args& a, const Params& p) -> Result<std::string> {
                    auto lo = bound("clamp", p, "min");
                    auto hi = bound("clamp", p, "max");
                    if (!lo) return lo.error();
                    if (!hi) return hi.error();
                    return clamp_expr(a[0].text, *lo, *hi);
                  }};
    m["clamp_min"] = unary1("clamp_min", "min", [](auto& x, double v) { return fmt::format("clamp_lo({}, {})", x, lit(v)); });
    m["clamp_max"] = unary1("clamp_max", "max", [](auto& x, double v) { return fmt::format("clamp_hi({}, {})", x, lit(v)); });
    m["threshold"] = {1, [](const Args& a, const Params& p) -> Result<std::string> {
                        auto th = number("threshold", p, "threshold");
                        auto value = number("threshold", p, "value");
                        if (!th) return th.error();
                        if (!value) return value.error();
                        return fmt::format("({0} <= {1} ? {2} : {0})", a[0].text, lit(*th), lit(*value));
                      }};
    for (const auto& [name, fn] : std::map<std::string, std::string>{
             {"exp", "expf"}, {"exp2", "exp2f"}, {"expm1", "expm1f"}, {"log", "logf"}, {"log2", "log2f"},
             {"log10", "log10f"}, {"log1p", "log1pf"}, {"abs", "fabsf"}, {"sqrt", "sqrtf"}, {"rsqrt", "rsqrtf"},
             {"sin", "sinf"}, {"cos", "cosf"}, {"erf", "erff"}, {"floor", "floorf"}, {"ceil", "ceilf"},
             {"round", "rintf"}, {"trunc", "truncf"}}) {
      std::string f = fn;
      m[name] = unary([f](auto& x) { return fmt::format("{}({})", f, x); });
    }
    m["neg"] = unary([](auto& x) { return fmt::format("(-{})", x); });
    m["square"] = unary([](auto& x) { return fmt::format("({0} * {0})", x); });
    m["reciprocal"] = unary([](auto& x) { return fmt::format("(1.f / {})", x); });
    m["sign"] = unary([](auto& x) { return fmt::format("({0} == {0} ? float((0.f < {0}) - ({0} < 0.f)) : {0})", x); });

    auto scaled = [](const std::string& sym) {
      return Spec{2, [sym](const Args& a, const Params& p) -> Result<std::string> {
                    auto alpha = p.count("alpha") ? number(sym == "+" ? "add" : "sub", p, "alpha") : Result<double>(1.0);
                    if (!alpha) return alpha.error();
                    if (*alpha == 1) return fmt::format("({} {} {})", a[0].text, sym, a[1].text);
                    return fmt::format("({} {} {} * {})", a[0].text, sym, lit(*alpha), a[1].text);
                  }};
    };
    m["add"] = scaled("+");
    m["sub"] = scaled("-");
    m["mul"] = {2, [](const Args& a, const Params&) -> Result<std::string> {
                  return fmt::format("({} * {})", a[0].text, a[1].text);
                }};
    m["div"] = {2, [](const Args& a, const Params& p) -> Result<std::string> {
                  auto it = p.find("rounding_mode");
                  if (it != p.end() && !std::holds_alternative<std::monostate>(it->second))
                    return Error{"div with a rounding_mode (only true division has a seed)"};
                  return fmt::format("({} / {})", a[0].text, a[1].text);
                }};
    m["pow"] = {2, [](const Args& a, const Params&) -> Result<std::string> { return pow_expr(a[0], a[1]); }};
    // torch.maximum/minimum propagate NaN from either side; fmaxf/fminf would drop it.
    m["maximum"] = {2, [](const Args& a, const Params&) -> Result<std::string> {
                      return fmt::format("(({0} > {1} || {0} != {0}) ? {0} : {1})", a[0].text, a[1].text);
                    }};
    m["minimum"] = {2, [](const Args& a, const Params&) -> Result<std::string> {
                      return fmt::format("(({0} < {1} || {0} != {0}) ? {0} : {1})", a[0].text, a[1].text);
                    }};
    return m;
  }();
  return t;
}

}  // namespace

int pointwise_arity(const std::string& op) {
  auto it = table().find(op);
  return it == table().end() ? 0 : it->second.arity;
}

std::vector<std::string> pointwise_op_names() {
  std::vector<std::string> names;
  for (const auto& [name, spec] : table()) names.push_back(name);
  return names;
}

Result<std::string> pointwise_expression(const std::string& op, const std::vector<ExprArg>& args,
                                         const std::map<std::string, ParamValue>& params) {
  auto it = table().find(op);
  if (it == table().end()) return Error{fmt::format("{} is not a pointwise op the seed knows", op)};
  if (static_cast<int>(args.size()) != it->second.arity)
    return Error{fmt::format("{} takes {} operand(s), got {}", op, it->second.arity, args.size())};
  return it->second.expr(args, params);
}

std::string float_literal(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  const float f = static_cast<float>(v);
  if (std::isinf(f)) return f > 0 ? "INFINITY" : "(-INFINITY)";
  // fmt writes the shortest text that reads back as the same float.
  std::string s = fmt::format("{}", f);
  if (s.find_first_of(".e") == std::string::npos) s += ".";
  s += "f";
  return f < 0 ? "(" + s + ")" : s;
}

}  // namespace cutegen::seed
