// The expression of every op in the table, as text: a formula that changes shows up here first.
#include "seed/pointwise_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace cutegen::seed;

namespace {

std::string expr(const std::string& op, std::map<std::string, ParamValue> params = {}) {
  auto e = pointwise_expression(op, {{"x", std::nullopt}}, params);
  EXPECT_TRUE(e.ok()) << op << ": " << (e.ok() ? "" : e.error().message);
  return e.ok() ? *e : "";
}

std::string expr2(const std::string& op, ExprArg a, ExprArg b, std::map<std::string, ParamValue> params = {}) {
  auto e = pointwise_expression(op, {a, b}, params);
  EXPECT_TRUE(e.ok()) << op << ": " << (e.ok() ? "" : e.error().message);
  return e.ok() ? *e : "";
}

const ExprArg X{"x", std::nullopt};
const ExprArg Y{"y", std::nullopt};
ExprArg c(double v) { return {float_literal(v), v}; }

}  // namespace

TEST(FloatLiteral, IsTheShortestTextOfTheFloatWithAnFSuffix) {
  EXPECT_EQ(float_literal(0.5), "0.5f");
  EXPECT_EQ(float_literal(2), "2.f");
  EXPECT_EQ(float_literal(0.044715), "0.044715f");
  EXPECT_EQ(float_literal(1e-5), "1e-05f");
  EXPECT_EQ(float_literal(-3), "(-3.f)");
  EXPECT_EQ(float_literal(INFINITY), "INFINITY");
  EXPECT_EQ(float_literal(-INFINITY), "(-INFINITY)");
  EXPECT_EQ(float_literal(1e300), "INFINITY");  // what fp32 makes of it
  EXPECT_EQ(float_literal(NAN), "NAN");
}

TEST(PointwiseOps, Activations) {
  EXPECT_EQ(expr("relu"), "(x < 0.f ? 0.f : x)");
  EXPECT_EQ(expr("relu6"), "clamp_hi(clamp_lo(x, 0.f), 6.f)");
  EXPECT_EQ(expr("sigmoid"), "(1.f / (1.f + expf(-x)))");
  EXPECT_EQ(expr("tanh"), "tanhf(x)");
  EXPECT_EQ(expr("silu"), "(x / (1.f + expf(-x)))");
  EXPECT_EQ(expr("mish"),
            "([](float v) { const float e = expf(v), n = e * (e + 2.f); return v >= 20.f ? v : v * (n / (n + 2.f)); }(x))");
  EXPECT_EQ(expr("softsign"), "(x / (1.f + fabsf(x)))");
  EXPECT_EQ(expr("logsigmoid"), "(fminf(x, 0.f) - log1pf(expf(-fabsf(x))))");
  EXPECT_EQ(expr("tanhshrink"), "(x - tanhf(x))");
  EXPECT_EQ(expr("hardsigmoid"), "(clamp_hi(clamp_lo(x + 3.f, 0.f), 6.f) * (1.f / 6.f))");
  EXPECT_EQ(expr("hardswish"), "(x * clamp_hi(clamp_lo(x + 3.f, 0.f), 6.f) * (1.f / 6.f))");
  EXPECT_EQ(expr("selu"), "(x > 0.f ? x * 1.050701f : expm1f(x) * 1.7580993f)");
  EXPECT_EQ(expr("elu", {{"alpha", 1.0}}), "(x > 0.f ? x : expm1f(x) * 1.f)");
  EXPECT_EQ(expr("celu", {{"alpha", 2.0}}), "(x > 0.f ? x : expm1f(x * 0.5f) * 2.f)");
  EXPECT_EQ(expr("leaky_relu", {{"negative_slope", 0.01}}), "(x > 0.f ? x : x * 0.01f)");
  EXPECT_EQ(expr("softshrink", {{"lambd", 0.5}}),
            "(x > 0.5f ? x - 0.5f : (x < (-0.5f) ? x + 0.5f : (x == x ? 0.f : x)))");
  EXPECT_EQ(expr("hardshrink", {{"lambd", 0.5}}), "((x >= (-0.5f) && x <= 0.5f) ? 0.f : x)");
  EXPECT_EQ(expr("threshold", {{"threshold", 0.1}, {"value", 20.0}}), "(x <= 0.1f ? 20.f : x)");
}

TEST(PointwiseOps, GeluHasTheErfAndTheTanhForm) {
  EXPECT_EQ(expr("gelu", {{"approximate", std::string("none")}}), "(x * 0.5f * (1.f + erff(x * 0.70710677f)))");
  EXPECT_EQ(expr("gelu", {{"approximate", std::string("tanh")}}),
            "(0.5f * x * (1.f + tanhf(0.7978846f * (x + 0.044715f * x * x * x))))");
  auto other = pointwise_expression("gelu", {X}, {{"approximate", std::string("fast")}});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().message, "gelu with approximate='fast' (torch knows none and tanh)");
}

TEST(PointwiseOps, SoftplusUsesBetaAndThreshold) {
  EXPECT_EQ(expr("softplus", {{"beta", 1.0}, {"threshold", 20.0}}), "(x > 20.f ? x : log1pf(expf(x)))");
  EXPECT_EQ(expr("softplus", {{"beta", 2.0}, {"threshold", 10.0}}),
            "(x * 2.f > 10.f ? x : log1pf(expf(x * 2.f)) / 2.f)");
}

TEST(PointwiseOps, BoundsKeepNanAndMayBeOneSided) {
  EXPECT_EQ(expr("hardtanh", {{"min_val", -1.0}, {"max_val", 1.0}}), "clamp_hi(clamp_lo(x, (-1.f)), 1.f)");
  EXPECT_EQ(expr("clamp", {{"min", 0.1}, {"max", std::monostate{}}}), "clamp_lo(x, 0.1f)");
  EXPECT_EQ(expr("clamp", {{"min", std::monostate{}}, {"max", 2.0}}), "clamp_hi(x, 2.f)");
  EXPECT_EQ(expr("clamp_min", {{"min", 0.0}}), "clamp_lo(x, 0.f)");
  EXPECT_EQ(expr("clamp_max", {{"max", 0.0}}), "clamp_hi(x, 0.f)");
  auto none = pointwise_expression("clamp", {X}, {{"min", std::monostate{}}, {"max", std::monostate{}}});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "clamp needs at least one of min and max");
}

TEST(PointwiseOps, MathFunctions) {
  const std::map<std::string, std::string> want = {
      {"exp", "expf(x)"},     {"exp2", "exp2f(x)"},   {"expm1", "expm1f(x)"},   {"log", "logf(x)"},
      {"log2", "log2f(x)"},   {"log10", "log10f(x)"}, {"log1p", "log1pf(x)"},   {"abs", "fabsf(x)"},
      {"sqrt", "sqrtf(x)"},   {"rsqrt", "rsqrtf(x)"}, {"sin", "sinf(x)"},       {"cos", "cosf(x)"},
      {"erf", "erff(x)"},     {"floor", "floorf(x)"}, {"ceil", "ceilf(x)"},     {"round", "rintf(x)"},
      {"trunc", "truncf(x)"}, {"neg", "(-x)"},        {"square", "(x * x)"},    {"reciprocal", "(1.f / x)"},
      {"identity", "x"},      {"sign", "(x == x ? float((0.f < x) - (x < 0.f)) : x)"}};
  for (const auto& [op, text] : want) EXPECT_EQ(expr(op), text) << op;
}

TEST(PointwiseOps, Arithmetic) {
  EXPECT_EQ(expr2("add", X, Y, {{"alpha", 1.0}}), "(x + y)");
  EXPECT_EQ(expr2("add", X, Y, {{"alpha", 2.0}}), "(x + 2.f * y)");
  EXPECT_EQ(expr2("sub", c(1.0), X, {{"alpha", 1.0}}), "(1.f - x)");
  EXPECT_EQ(expr2("sub", X, Y), "(x - y)");
  EXPECT_EQ(expr2("mul", c(0.5), X), "(0.5f * x)");
  EXPECT_EQ(expr2("div", X, c(-2), {{"rounding_mode", std::monostate{}}}), "(x / (-2.f))");
  EXPECT_EQ(expr2("maximum", X, Y), "((x > y || x != x) ? x : y)");
  EXPECT_EQ(expr2("minimum", X, Y), "((x < y || x != x) ? x : y)");
  auto floor_div = pointwise_expression("div", {X, Y}, {{"rounding_mode", std::string("floor")}});
  ASSERT_FALSE(floor_div.ok());
  EXPECT_EQ(floor_div.error().message, "div with a rounding_mode (only true division has a seed)");
}

TEST(PointwiseOps, PowWithAScalarExponentUsesAtensSpecialCases) {
  EXPECT_EQ(expr2("pow", X, c(2)), "(x * x)");
  EXPECT_EQ(expr2("pow", X, c(3)), "(x * x * x)");
  EXPECT_EQ(expr2("pow", X, c(0.5)), "sqrtf(x)");
  EXPECT_EQ(expr2("pow", X, c(-0.5)), "rsqrtf(x)");
  EXPECT_EQ(expr2("pow", X, c(-1)), "(1.f / x)");
  EXPECT_EQ(expr2("pow", X, c(-2)), "(1.f / (x * x))");
  EXPECT_EQ(expr2("pow", X, c(1.5)), "powf(x, 1.5f)");
  EXPECT_EQ(expr2("pow", c(2), X), "powf(2.f, x)");
  EXPECT_EQ(expr2("pow", X, Y), "powf(x, y)");
}

TEST(PointwiseOps, UnknownOpsAndWrongArityAreOneLineErrors) {
  auto unknown = pointwise_expression("softmax", {X}, {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "softmax is not a pointwise op the seed knows");
  auto arity = pointwise_expression("mul", {X}, {});
  ASSERT_FALSE(arity.ok());
  EXPECT_EQ(arity.error().message, "mul takes 2 operand(s), got 1");
  auto missing = pointwise_expression("leaky_relu", {X}, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "leaky_relu has no value for negative_slope");
  EXPECT_EQ(pointwise_arity("relu"), 1);
  EXPECT_EQ(pointwise_arity("pow"), 2);
  EXPECT_EQ(pointwise_arity("conv2d"), 0);
}

TEST(PointwiseOps, EveryOpInTheTableIsCoveredByThisFile) {
  // A new op must get its expression test above; this count says when one was added without.
  EXPECT_EQ(pointwise_op_names().size(), 53u);
}

// mish's formula is not the definition's (one exp and a division, not exp, log1p and tanh), so its text is
// compiled for the host and checked against x * tanh(log1p(exp(x))) in long double over fp32's range:
// within 8 ulp wherever exp(x) is a normal float (below, any formula in fp32 loses digits with it), x itself
// from 20 on, NaN and the infinities as the definition gives them.
TEST(PointwiseOps, MishFormulaMatchesTheDefinitionInFloat) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("cutegen-mish-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream src(dir / "mish.cpp");
    src << "#include <cmath>\n#include <cstdio>\n#include <math.h>\n"
           "float mish(float x) { return " << expr("mish") << "; }\n"
           "int main() {\n"
           "  double worst = 0; float at = 0;\n"
           "  for (float x = -87.f; x < 110.f; x = nextafterf(x, 200.f) + (fabsf(x) > 1e-3f ? fabsf(x) * 3e-6f : 1e-9f)) {\n"
           "    long double r = (long double)x * tanhl(log1pl(expl((long double)x)));\n"
           
           "    double rel = (double)fabsl(((long double)mish(x) - r) / r);\n"
           "    if (!(rel <= worst)) { worst = rel; at = x; }\n"
           "  }\n"
           "  printf(\"%.3e %.9g %d %d %d %.9g\\n\", worst, at, (int)std::isnan(mish(NAN)), (int)(mish(INFINITY) == INFINITY),\n"
           "         (int)std::isnan(mish(-INFINITY)), mish(30.f));\n"
           "}\n";
  }
  const std::string cmd = "c++ -O2 -std=c++20 -o " + (dir / "mish").string() + " " + (dir / "mish.cpp").string() +
                          " && " + (dir / "mish").string() + " > " + (dir / "out.txt").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(dir / "out.txt");
  double worst = 1, at = 0, at30 = 0;
  int nan_in = 0, inf_in = 0, nan_neg_inf = 0;
  in >> worst >> at >> nan_in >> inf_in >> nan_neg_inf >> at30;
  fs::remove_all(dir);
  EXPECT_LT(worst, 8 * 5.96e-8) << "worst relative error at x = " << at;
  EXPECT_EQ(nan_in, 1);
  EXPECT_EQ(inf_in, 1);
  EXPECT_EQ(nan_neg_inf, 1);  // -inf * tanh(log1p(0)) = -inf * 0
  EXPECT_EQ(at30, 30.0);
}
