#pragma once
// Integer division rounded toward minus or plus infinity for either sign (C++'s `/` rounds toward zero): the
// convolution folds' tap arithmetic, where offsets such as pad - t * dilation go negative.
#include <cstdint>

namespace cutegen::seed {

inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t ceil_div_signed(int64_t a, int64_t b) { return -floor_div(-a, b); }

}  // namespace cutegen::seed
