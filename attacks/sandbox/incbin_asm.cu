// Attack (reading files through the assembler): a file-scope asm(".incbin") makes the host assembler
// embed /etc/passwd in the built library — no #include, so an include rule never sees it — and the
// kernel writes its first bytes into the output, where a mismatch report quotes them back.
// Expected: rejected before nvcc runs (.incbin in any asm string is refused).
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

asm(".pushsection .rodata\n"
    ".globl cutegen_attack_embedded\n"
    "cutegen_attack_embedded:\n"
    ".incbin \"/etc/passwd\"\n"
    ".byte 0\n"
    ".popsection\n");
extern "C" const char cutegen_attack_embedded[];

namespace attack {
__global__ void relu_with_leak(const float* x, float* y, int64_t n, float b0, float b1, float b2, float b3) {
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, i < 4 ? (i == 0 ? b0 : i == 1 ? b1 : i == 2 ? b2 : b3) : (ld(gx, i) < 0.f ? 0.f : ld(gx, i)));
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  const char* e = cutegen_attack_embedded;
  attack::relu_with_leak<<<attack::blocks_for(n), 256, 0, s>>>(static_cast<const float*>(in[0].data),
                                                               static_cast<float*>(out[0].data), n, float(e[0]),
                                                               float(e[0] ? e[1] : 0), float(e[0] && e[1] ? e[2] : 0),
                                                               float(e[0] && e[1] && e[2] ? e[3] : 0));
  return static_cast<int>(cudaGetLastError());
}
