#include "run/roofline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/fs.h"

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
  auto f = roofline_floor(h200(), bytes, bytes / 2, 4096ull * 393216, "float32", "strict");
  EXPECT_EQ(f.bound, "memory");
  EXPECT_NEAR(f.floor_ms, bytes / 4300e9 * 1e3, 1e-9);
}

// The bandwidth follows the traffic mix between the two calibrated points: an activation (as many bytes
// written as read) gets the copy's, a loss (a scalar written) the read-only sum's.
TEST(Roofline, TheFloorsBandwidthFollowsTheShareOfBytesWritten) {
  Calibration c = h200();
  c.copy_gbps = 4200;
  c.read_gbps = 4400;
  c.hbm_gbps = 4400;
  const uint64_t half = 4096ull * 393216 * 4;  // one 6.4 GB tensor
  auto relu = roofline_floor(c, 2 * half, half, 0, "float32", "strict");
  EXPECT_DOUBLE_EQ(relu.hbm_gbps, 4200);
  EXPECT_NEAR(relu.floor_ms, 2.0 * half / 4200e9 * 1e3, 1e-9);
  auto loss = roofline_floor(c, 2 * half + 4, 4, 0, "float32", "strict");
  EXPECT_NEAR(loss.hbm_gbps, 4400, 1e-3);
  // Three inputs, one output of the same size: a quarter of the bytes written, half way between.
  EXPECT_DOUBLE_EQ(floor_bandwidth_gbps(c, 4 * half, half), 4300);
  EXPECT_DOUBLE_EQ(floor_bandwidth_gbps(c, half, half), 4200);  // more written than read: the copy's
  // A calibration without the two points (older caches are measured again, but a hand-written one may
  // lack them) keeps its single figure.
  EXPECT_DOUBLE_EQ(floor_bandwidth_gbps(h200(), 2 * half, half), 4300);
}

TEST(Roofline, WrittenBytesAreTheOutputTensors) {
  ProblemFacts p;
  ValueFacts out;
  out.dtype = "float32";
  out.shape = {4096, 393216};
  ValueFacts half;
  half.dtype = "bfloat16";
  half.shape = {3, 5};
  ValueFacts scalar;
  scalar.kind = ValueFacts::Kind::scalar;
  scalar.dtype = "float64";
  p.outputs = {out, half, scalar};
  EXPECT_EQ(written_bytes(p), 4096ull * 393216 * 4 + 3 * 5 * 2);
  ValueFacts loss;  // a rank-0 tensor: one value
  loss.dtype = "float32";
  p.outputs = {loss};
  EXPECT_EQ(written_bytes(p), 4u);
}

TEST(Roofline, StrictFp32GemmMayUse3xTf32) {
  uint64_t flops = 2ull * 4096 * 4096 * 4096;
  auto strict = roofline_floor(h200(), 3ull * 4096 * 4096 * 4, 4096ull * 4096 * 4, flops, "float32", "strict");
  EXPECT_EQ(strict.bound, "compute");
  EXPECT_EQ(strict.rate, "3xtf32");  // 450/3 = 150 > 50
  EXPECT_NEAR(strict.compute_ms, flops / 150e12 * 1e3, 1e-9);
  auto tf32 = roofline_floor(h200(), 0, 0, flops, "float32", "tf32");
  EXPECT_EQ(tf32.rate, "tf32");
  auto half = roofline_floor(h200(), 0, 0, flops, "float16", "strict");
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

TEST(Roofline, ACachedCalibrationOfAnOlderVersionIsMeasuredAgain) {
  const auto dir = std::filesystem::temp_directory_path() / ("cutegen-roofline-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "gpu.json";
  // Version 1 measured only a copy; a read-mostly kernel beat its bandwidth (SOL over 100%).
  auto old = to_json(h200());
  old.erase("version");
  ASSERT_TRUE(write_file_atomic(path, old.dump()).ok());
  int measured = 0;
  auto fresh = h200();
  fresh.copy_gbps = 4180, fresh.read_gbps = 4330, fresh.hbm_gbps = 4330;
  auto measure = [&]() -> Result<nlohmann::json> { ++measured; return to_json(fresh); };
  auto c = cached_calibration(path, measure);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(measured, 1);
  EXPECT_DOUBLE_EQ(c->hbm_gbps, 4330);
  EXPECT_DOUBLE_EQ(c->read_gbps, 4330);
  // Saved as the current version: the next look reads it without measuring.
  auto again = cached_calibration(path, measure);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(measured, 1);
  EXPECT_DOUBLE_EQ(again->copy_gbps, 4180);
  // A failed measurement is the error, not a silent stale value.
  std::filesystem::remove(path);
  auto failed = cached_calibration(path, []() -> Result<nlohmann::json> { return Error{"no GPU"}; });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "no GPU");
  std::filesystem::remove_all(dir);
}
