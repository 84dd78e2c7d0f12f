// Attack (raw CUDA dressed as CuTe, issue 34): CuTe that exists only in the unoptimised compile. The
// kernel writes its outputs through a CuTe tensor behind a flag that is always false; without
// optimisation (the analysis compile, -O0) the branch stays and a layout is evaluated, with -O3 (the
// build) it is folded away and only the raw loop below it is left. Both compiles read the same source
// and macros (device_code_match.h proves that), so nothing but the optimiser tells them apart.
// Expected: rejected, cute-not-built — no instruction of the build comes from a line that uses CuTe.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace attack {
__global__ void relu_cute_at_o0(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  bool via_cute = false;  // -O3 folds it; -O0 keeps the branch
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    if (via_cute) {
      Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(n));
      gY(i) = v < 0.f ? 0.f : v;
      continue;
    }
    y[i] = v < 0.f ? 0.f : v;
  }
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (n_in != 1 || n_out != 1 || in[0].dtype != CUTEGEN_FLOAT32 || out[0].dtype != CUTEGEN_FLOAT32 ||
      cutegen::numel(in[0]) != cutegen::numel(out[0]))
    return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  attack::relu_cute_at_o0<<<static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535)), 256, 0, s>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), n);
  return static_cast<int>(cudaGetLastError());
}
