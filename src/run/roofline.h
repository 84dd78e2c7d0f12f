#pragma once
// The physical floor of a problem on a GPU: the bytes it must move over the measured memory bandwidth,
// or the FLOPs it must do over the measured matmul rate for its dtype and precision policy — whichever
// is larger. Ceilings come from `cutegen calibrate` (measured once per GPU, cached).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/evaluation.h"  // Floor
#include "common/result.h"

namespace cutegen {

// What a calibration measures changed at each version; a cached one of an older version is measured
// again (version 2: a read-only sum beside the copy, since a read-mostly kernel beat the copy's figure on
// an H200; version 3: the copy is the better of a byte copy and an fp32 elementwise op, which PyTorch's
// own ReLU had outrun).
inline constexpr int kCalibrationVersion = 3;

struct Calibration {
  std::string gpu;
  double hbm_gbps = 0;  // GB/s: the better of copy_gbps and read_gbps (the floor's bandwidth without a traffic mix)
  double copy_gbps = 0, read_gbps = 0;  // bytes read + written by a copy; bytes read by a sum
  double fp32_tflops = 0, tf32_tflops = 0, fp16_tflops = 0, bf16_tflops = 0;
};

Result<Calibration> calibration_from_json(const nlohmann::json& j);
// Whether a cached calibration is of the current version (older ones are measured again).
bool is_current_calibration(const nlohmann::json& j);
nlohmann::json to_json(const Calibration& c);

std::filesystem::path calibration_path(const std::filesystem::path& cache_root, const std::string& gpu_name);

// The calibration cached at `path` when it is current, else what `measure` returns, saved there.
Result<Calibration> cached_calibration(const std::filesystem::path& path,
                                       const std::function<Result<nlohmann::json>()>& measure);

// The bandwidth a kernel moving `bytes` in all, `written` of them writes, can reach: DRAM reads alone
// run faster than reads and writes mixed (the bus turns around), so the two calibrated points are
// interpolated by the written share — read_gbps for a kernel that only reads (a loss), copy_gbps from
// as many bytes written as read (an activation: on an H200 the read-only figure is 2-5% above the copy's,
// and a ReLU measured against it read 94% of a "floor" that eager PyTorch cannot reach either).
// hbm_gbps when the calibration lacks either point.
double floor_bandwidth_gbps(const Calibration& c, uint64_t bytes, uint64_t written);

// Bytes the problem's outputs take: what a call must write (unknown dtypes count nothing).
uint64_t written_bytes(const ProblemFacts& facts);

// `dtype` is the problem's main dtype ("float32", ...); `precision` the policy (strict, tf32, bf16).
Floor roofline_floor(const Calibration& c, uint64_t min_bytes, uint64_t written, uint64_t flops,
                     const std::string& dtype, const std::string& precision);

}  // namespace cutegen
