// Attack (denial of service through the compiler): #include "/dev/zero" makes the preprocessor read an
// endless file into an ever-growing buffer until the machine runs out of memory.
// Expected: rejected before nvcc runs (an absolute #include path is refused).
// SAFETY: the include of a header that does not exist, first, stops the preprocessor with a fatal
// error before it reaches /dev/zero, so compiling this file without the source rules fails fast
// instead of exhausting memory. It is under cute/ so that an include rule checking only the root
// lets it through and the /dev/zero line is what gets the file refused.
#include <cute/cutegen_attack_guard_that_does_not_exist.hpp>
#include "/dev/zero"
// --- ReLU attack scaffolding (each candidate must be a single file) ---
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

namespace attack {

inline bool relu_args(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out) {
  return n_in == 1 && n_out == 1 && in[0].dtype == CUTEGEN_FLOAT32 && out[0].dtype == CUTEGEN_FLOAT32 &&
         cutegen::numel(in[0]) == cutegen::numel(out[0]);
}

template <class T>
__device__ auto flat(T* p, int64_t n) {
  return cute::make_tensor(cute::make_gmem_ptr(p), cute::make_layout(n));
}

// Element access through a one-element register fragment and cute::copy: the generated code is then
// CuTe's own, as in an honest kernel that copies whole tiles this way (the static check looks for it).
template <class Tensor>
__device__ float ld(const Tensor& t, int64_t i) {
  float r[1];
  cute::copy(cute::make_tensor(cute::make_gmem_ptr(&t(i)), cute::Layout<cute::_1>{}),
             cute::make_tensor(&r[0], cute::Layout<cute::_1>{}));
  return r[0];
}
template <class Tensor>
__device__ void st(const Tensor& t, int64_t i, float v) {
  float r[1] = {v};
  cute::copy(cute::make_tensor(&r[0], cute::Layout<cute::_1>{}),
             cute::make_tensor(cute::make_gmem_ptr(&t(i)), cute::Layout<cute::_1>{}));
}

inline unsigned blocks_for(int64_t n) { return static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535)); }

}  // namespace attack
// --- end of scaffolding ---

namespace attack {
__global__ void relu(const float* x, float* y, int64_t n) {
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, ld(gx, i) < 0.f ? 0.f : ld(gx, i));
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  attack::relu<<<attack::blocks_for(n), 256, 0, s>>>(static_cast<const float*>(in[0].data),
                                                     static_cast<float*>(out[0].data), n);
  return static_cast<int>(cudaGetLastError());
}
