#pragma once
// The physical floor of a problem on a GPU: the bytes it must move over the measured memory bandwidth,
// or the FLOPs it must do over the measured matmul rate for its dtype and precision policy — whichever
// is larger. Ceilings come from `cutegen calibrate` (measured once per GPU, cached).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/evaluation.h"  // Floor
#include "common/result.h"

namespace cutegen {

struct Calibration {
  std::string gpu;
  double hbm_gbps = 0;  // GB/s, bytes read + written
  double fp32_tflops = 0, tf32_tflops = 0, fp16_tflops = 0, bf16_tflops = 0;
};

Result<Calibration> calibration_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Calibration& c);

std::filesystem::path calibration_path(const std::filesystem::path& cache_root, const std::string& gpu_name);

// `dtype` is the problem's main dtype ("float32", ...); `precision` the policy (strict, tf32, bf16).
Floor roofline_floor(const Calibration& c, uint64_t min_bytes, uint64_t flops, const std::string& dtype,
                     const std::string& precision);

}  // namespace cutegen
