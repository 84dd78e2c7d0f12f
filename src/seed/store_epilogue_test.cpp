// The store epilogue's texts: where an operand of a folded pointwise step is read, the templates' placeholders with
// and without a folded step (without one, the seed is byte for byte what it was).

#include "seed/store_epilogue.h"

#include <gtest/gtest.h>

#include "common/testdata/test_helpers.h"

using namespace cutegen::seed;
using ::cutegen::testing::contains;

TEST(StoreEpilogue, AnOperandIsReadAtTheElementsCoordinatesItDoesNotRepeat) {
  // A per-channel vector of an (8, 16, 8, 9) result: the channel is e / (8 * 9) % 16.
  EXPECT_EQ(epilogue_offset({8, 16, 8, 9}, {0, 1, 0, 0}, "e"), "e / 72 % 16");
  // A tensor of the result's own shape: the element itself.
  EXPECT_EQ(epilogue_offset({8, 16, 8, 9}, {1152, 72, 9, 1}, "e"), "e");
  // Size-1 dimensions take any stride: a (4, 1, 6) result read in order.
  EXPECT_EQ(epilogue_offset({4, 1, 6}, {6, 0, 1}, "e"), "e");
  // A (1, C, 1, W) operand of an (N, C, H, W) result, and the first dimension's coordinate (below its size).
  EXPECT_EQ(epilogue_offset({2, 3, 4, 5}, {0, 5, 0, 1}, "e"), "e / 20 % 3 * 5 + e % 5");
  EXPECT_EQ(epilogue_offset({2, 3, 4, 5}, {1, 0, 0, 0}, "t"), "t / 60");
  // One value (a (1,) parameter) repeats everywhere.
  EXPECT_EQ(epilogue_offset({2, 3}, {0, 0}, "e"), "0");
}

TEST(StoreEpilogue, WithoutAFoldedStepThePlaceholdersLeaveTheTemplateAsItWas) {
  std::string text =
      "{{EPILOGUE_DEFS}}__global__ void k(float* y{{EPILOGUE_PARAM}}) {\n"
      "  gY(t) = {{STORE(expf(v - m) * inv; (o * kExtent + r) * kInner + i)}};\n"
      "}\n"
      "{{EPILOGUE_LOAD}}  k<<<1, 1>>>(y{{EPILOGUE_ARG}});\n";
  fill_store_epilogue(text, std::nullopt);
  EXPECT_EQ(text,
            "__global__ void k(float* y) {\n"
            "  gY(t) = expf(v - m) * inv;\n"
            "}\n"
            "  k<<<1, 1>>>(y);\n");
}

TEST(StoreEpilogue, AFoldedStepWrapsEveryStoreAndLoadsItsOperandsOnTheHost) {
  StoreEpilogue ep{.shape = {8, 16, 8, 9},
                   .value_names = {"x0"},
                   .operands = {{.input = 3, .name = "bias", .value = "x1", .size = 16, .strides = {0, 1, 0, 0}}},
                   .scalars = {{.index = 4, .dtype = "float64", .member = "s4", .name = "alpha"}},
                   .steps = {{"v5", "(x0 + x1)", "add(y, bias)"}, {"v6", "clamp_lo((v5 * s4), 0.f)", "..."}},
                   .result = "v6",
                   .description = "broadcast pointwise chain y = clamp(add(y, bias) * alpha, min=0)",
                   .pattern = "clamp(add(y, bias) * alpha, min=0)"};
  std::string text =
      "{{EPILOGUE_DEFS}}__global__ void k(float* y{{EPILOGUE_PARAM}}) {\n"
      "  gY(t) = {{STORE(best; t)}};\n"
      "}\n"
      "{{EPILOGUE_LOAD}}  k<<<1, 1>>>(y{{EPILOGUE_ARG}});\n";
  fill_store_epilogue(text, ep);
  EXPECT_TRUE(contains(text, "__global__ void k(float* y, const StoreEpilogue ep) {\n"
                             "  gY(t) = store_epilogue(ep, best, t);\n"))
      << text;
  EXPECT_TRUE(contains(text, "  k<<<1, 1>>>(y, ep);\n")) << text;
  EXPECT_TRUE(contains(text, "  if (const int rc = load_store_epilogue(inputs, outputs[0], ep); rc != CUTEGEN_OK) "
                             "return rc;\n"))
      << text;
  // The value rounded as stored, the operand at its channel, the scalar from its descriptor, the statements in order.
  EXPECT_TRUE(contains(text, "  const float x0 = __fadd_rn(v, -0.f);  // the seed's value\n"
                             "  const float x1 = make_tensor(make_gmem_ptr(ep.x1), make_layout(make_shape(int64_t{16})))"
                             "(e / 72 % 16);  // bias\n"
                             "  const float s4 = ep.s4;\n"
                             "  const float v5 = (x0 + x1);  // add(y, bias)\n"
                             "  const float v6 = clamp_lo((v5 * s4), 0.f);  // ...\n"
                             "  return v6;\n"))
      << text;
  EXPECT_TRUE(contains(text, "  if (cutegen::numel(out) != 9216) return CUTEGEN_ERROR_UNSUPPORTED;\n")) << text;
  EXPECT_TRUE(contains(text, "  if (cutegen::numel(inputs[3]) != 16 || !cutegen::is_contiguous(inputs[3])) return "
                             "CUTEGEN_ERROR_UNSUPPORTED;\n"))
      << text;
  EXPECT_TRUE(contains(text, "  ep.s4 = static_cast<float>(inputs[4].scalar_f);\n")) << text;
  // The template has no clamp helpers: the epilogue brings them; a template that has them keeps its own.
  EXPECT_TRUE(contains(text, "__device__ __forceinline__ float clamp_lo(float v, float lo)")) << text;
  std::string with_helpers =
      "__device__ __forceinline__ float clamp_lo(float v, float lo) { return v; }\n{{EPILOGUE_DEFS}}";
  fill_store_epilogue(with_helpers, ep);
  EXPECT_EQ(with_helpers.find("float clamp_lo("), with_helpers.rfind("float clamp_lo(")) << with_helpers;
  EXPECT_FALSE(contains(text, "{{")) << text;
}
