#pragma once
// Host-side comparison of two samples of device outputs, for the runner's result-reuse check: the
// elements arrive as raw bytes of the output's dtype and are compared as doubles. Free of CUDA so it
// is tested on machines without a GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "run/tensor_ref.h"

namespace cutegen {

// Element `i` of `bytes` (packed, dtype-sized elements) as a double; fp16 and bf16 are decoded by hand.
double element_as_double(const std::vector<unsigned char>& bytes, DType dtype, std::size_t i);

struct SampleDifference {
  double rel_l2 = 0;     // ||a - b|| / ||b|| (0 when both are zero)
  std::size_t nan_in_a = 0;
  std::size_t count = 0;
};
SampleDifference compare_samples(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b, DType dtype);

}  // namespace cutegen
