#include "run/roofline.h"

#include <gtest/gtest.h>

using namespace cutegen;

namespace {
Calibration h200() {
  Calibration c;
  c.gpu = "NVIDIA H200";
  c.hbm_gbps = 4300;
  c.fp32_tflops = 50;
  c.tf32_tflops = 450;
  c.fp16_tflops = 750;
  c.bf16_tflops = 780;
  return c;
}
}  // namespace

TEST(Roofline, ElementwiseIsMemoryBound) {
  // 4096 x 393216 fp32 ReLU: read + write 12.9 GB.
  uint64_t bytes = 2ull * 4096 * 393216 * 4;
  auto f = roofline_floor(h200(), bytes, 4096ull * 393216, "float32", "strict");
  EXPECT_EQ(f.bound, "memory");
  EXPECT_NEAR(f.floor_ms, bytes / 4300e9 * 1e3, 1e-9);
}

TEST(Roofline, StrictFp32GemmMayUse3xTf32) {
  uint64_t flops = 2ull * 4096 * 4096 * 4096;
  auto strict = roofline_floor(h200(), 3ull * 4096 * 4096 * 4, flops, "float32", "strict");
  EXPECT_EQ(strict.bound, "compute");
  EXPECT_EQ(strict.rate, "3xtf32");  // 450/3 = 150 > 50
  EXPECT_NEAR(strict.compute_ms, flops / 150e12 * 1e3, 1e-9);
  auto tf32 = roofline_floor(h200(), 0, flops, "float32", "tf32");
  EXPECT_EQ(tf32.rate, "tf32");
  auto half = roofline_floor(h200(), 0, flops, "float16", "strict");
  EXPECT_EQ(half.rate, "fp16");
}

TEST(Roofline, CalibrationRoundTripsAndRejectsGarbage) {
  auto c = calibration_from_json(to_json(h200()));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->gpu, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(c->bf16_tflops, 780);
  EXPECT_FALSE(calibration_from_json(nlohmann::json::parse(R"({"gpu":"x"})")).ok());
  EXPECT_EQ(calibration_path("/c", "NVIDIA H200").string(), "/c/calibration/NVIDIA_H200.json");
}
