#include "run/roofline.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "common/evaluation.h"
#include "common/fs.h"
#include "run/tensor_ref.h"

namespace cutegen {

Result<Calibration> calibration_from_json(const nlohmann::json& j) {
  try {
    Calibration c;
    c.gpu = j.at("gpu").get<std::string>();
    c.hbm_gbps = j.at("hbm_gbps").get<double>();
    c.copy_gbps = j.value("copy_gbps", 0.0);
    c.read_gbps = j.value("read_gbps", 0.0);
    const auto& t = j.at("tflops");
    c.fp32_tflops = t.at("fp32").get<double>();
    c.tf32_tflops = t.at("tf32").get<double>();
    c.fp16_tflops = t.at("fp16").get<double>();
    c.bf16_tflops = t.at("bf16").get<double>();
    if (c.hbm_gbps <= 0 || c.fp32_tflops <= 0) return Error{"calibration has non-positive ceilings; run `cutegen calibrate --force`"};
    return c;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("malformed calibration ({}); run `cutegen calibrate --force`", e.what())};
  }
}

bool is_current_calibration(const nlohmann::json& j) {
  return j.is_object() && j.value("version", 1) >= kCalibrationVersion;
}

nlohmann::json to_json(const Calibration& c) {
  return {{"version", kCalibrationVersion},
          {"gpu", c.gpu},
          {"hbm_gbps", c.hbm_gbps},
          {"copy_gbps", c.copy_gbps},
          {"read_gbps", c.read_gbps},
          {"tflops", {{"fp32", c.fp32_tflops}, {"tf32", c.tf32_tflops}, {"fp16", c.fp16_tflops}, {"bf16", c.bf16_tflops}}}};
}

std::filesystem::path calibration_path(const std::filesystem::path& cache_root, const std::string& gpu_name) {
  std::string slug;
  for (char ch : gpu_name) slug += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return cache_root / "calibration" / (slug + ".json");
}

Result<Calibration> cached_calibration(const std::filesystem::path& path,
                                       const std::function<Result<nlohmann::json>()>& measure) {
  if (auto text = read_file(path); text) {
    auto cached = nlohmann::json::parse(*text, nullptr, false);
    if (is_current_calibration(cached)) return calibration_from_json(cached);
  }
  auto measured = measure();
  if (!measured) return measured.error();
  auto c = calibration_from_json(*measured);
  if (!c) return c.error();
  if (auto w = write_file_atomic(path, to_json(*c).dump(2)); !w) return w.error();
  return c;
}

double floor_bandwidth_gbps(const Calibration& c, uint64_t bytes, uint64_t written) {
  if (c.copy_gbps <= 0 || c.read_gbps <= 0 || bytes == 0) return c.hbm_gbps;
  // 0: only reads; 1: a byte written for every byte read (a copy) or more.
  const double share = std::min(1.0, 2.0 * static_cast<double>(written) / static_cast<double>(bytes));
  return c.read_gbps + (c.copy_gbps - c.read_gbps) * share;
}

uint64_t written_bytes(const ProblemFacts& facts) {
  uint64_t total = 0;
  for (const auto& o : facts.outputs) {
    if (o.kind != ValueFacts::Kind::tensor) continue;
    auto dtype = parse_dtype(o.dtype);
    if (!dtype) continue;
    uint64_t n = 1;
    for (auto d : o.shape) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
    total += n * dtype_size(*dtype);
  }
  return total;
}

Floor roofline_floor(const Calibration& c, uint64_t min_bytes, uint64_t written, uint64_t flops,
                     const std::string& dtype, const std::string& precision) {
  Floor f;
  f.hbm_gbps = floor_bandwidth_gbps(c, min_bytes, written);
  f.memory_ms = static_cast<double>(min_bytes) / (f.hbm_gbps * 1e9) * 1e3;
  // Strict fp32 may legitimately use 3xTF32 split emulation on tensor cores, so its ceiling is the
  // better of plain FFMA and a third of the TF32 rate.
  double tflops = std::max(c.fp32_tflops, c.tf32_tflops / 3);
  f.rate = c.tf32_tflops / 3 > c.fp32_tflops ? "3xtf32" : "fp32";
  if (dtype == "float16") { tflops = c.fp16_tflops; f.rate = "fp16"; }
  else if (dtype == "bfloat16") { tflops = c.bf16_tflops; f.rate = "bf16"; }
  else if (dtype == "float32" && precision == to_string(Precision::tf32)) { tflops = c.tf32_tflops; f.rate = "tf32"; }
  else if (dtype == "float32" && precision == to_string(Precision::bf16)) { tflops = c.bf16_tflops; f.rate = "bf16"; }
  f.compute_ms = tflops > 0 ? static_cast<double>(flops) / (tflops * 1e12) * 1e3 : 0;
  f.floor_ms = std::max(f.memory_ms, f.compute_ms);
  f.bound = f.compute_ms > f.memory_ms ? "compute" : "memory";
  return f;
}

}  // namespace cutegen
