#include "run/sample_compare.h"

#include <cmath>
#include <cstring>

namespace cutegen {
namespace {

template <class T>
T load(const std::vector<unsigned char>& bytes, std::size_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

double half_to_double(uint16_t h) {
  int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0) v = std::ldexp(mant, -24);                       // subnormal
  else if (exp == 31) v = mant ? NAN : INFINITY;
  else v = std::ldexp(mant + 1024, exp - 25);
  return sign ? -v : v;
}

double bf16_to_double(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;  // bf16 is the top half of an fp32
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

double element_as_double(const std::vector<unsigned char>& bytes, DType dtype, std::size_t i) {
  switch (dtype) {
    case DType::float32: return load<float>(bytes, i);
    case DType::float64: return load<double>(bytes, i);
    case DType::float16: return half_to_double(load<uint16_t>(bytes, i));
    case DType::bfloat16: return bf16_to_double(load<uint16_t>(bytes, i));
    case DType::int32: return load<int32_t>(bytes, i);
    case DType::int64: return static_cast<double>(load<int64_t>(bytes, i));
    case DType::int16: return load<int16_t>(bytes, i);
    case DType::int8: return load<int8_t>(bytes, i);
    case DType::uint8:
    case DType::boolean: return load<uint8_t>(bytes, i);
  }
  return NAN;
}

SampleDifference compare_samples(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b, DType dtype) {
  SampleDifference d;
  std::size_t n = std::min(a.size(), b.size()) / dtype_size(dtype);
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double x = element_as_double(a, dtype, i), y = element_as_double(b, dtype, i);
    if (std::isnan(x) && !std::isnan(y)) {
      ++d.nan_in_a;
      continue;
    }
    if (!std::isfinite(x) || !std::isfinite(y)) continue;  // equal infinities and NaN pairs say nothing
    diff2 += (x - y) * (x - y);
    ref2 += y * y;
  }
  d.count = n;
  d.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : (diff2 > 0 ? INFINITY : 0);
  return d;
}

}  // namespace cutegen
