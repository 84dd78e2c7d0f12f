// Attack (raw CUDA dressed as CuTe, issue 34): CuTe in the kernel's source and in its machine code, but
// never on the path that writes the outputs. A branch no call takes (n < 0: numel is never negative,
// yet the compiler cannot know) reads the input through a CuTe tensor; the loop that does the work reads
// and writes through raw pointers. The unoptimised analysis compile sees a layout evaluated in the kernel,
// which was all the per-kernel CuTe check asked for.
// Expected: rejected, raw-stores — none of the build's global stores comes from a line that uses CuTe.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace attack {
__global__ void relu_dead_cute(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  float bias = 0.f;
  if (n < 0) {  // never taken
    Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(-n));
    bias = gX(i);
  }
  for (; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i] + bias;
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
  attack::relu_dead_cute<<<static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535)), 256, 0, s>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), n);
  return static_cast<int>(cudaGetLastError());
}
