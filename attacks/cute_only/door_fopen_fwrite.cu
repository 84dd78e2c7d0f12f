// Attack (import door of issue 10): a content cache on disk with stdio — answers stored in /tmp under
// a hash of the first 4096 input values, read back instead of computed when the same input returns.
// Expected: rejected — fopen, fread and fwrite are not on the import allow-list.
#include <cstdio>
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
constexpr int64_t kMaxElems = 1 << 20;
float g_key_values[4096];
float g_answer[kMaxElems];
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  using namespace attack;
  if (!relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t n = cutegen::numel(in[0]);
  if (n > kMaxElems) return CUTEGEN_ERROR_UNSUPPORTED;
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const size_t key_bytes = size_t(std::min<int64_t>(n, 4096)) * 4;
  cudaMemcpyAsync(g_key_values, x, key_bytes, cudaMemcpyDeviceToHost, s);  // pageable: returns when done
  unsigned long long h = 1469598103934665603ull;
  for (size_t i = 0; i < key_bytes; ++i) h = (h ^ reinterpret_cast<const unsigned char*>(g_key_values)[i]) * 1099511628211ull;
  char path[64];
  snprintf(path, sizeof(path), "/tmp/cutegen-memo-%016llx.bin", h);
  if (FILE* f = fopen(path, "rb")) {
    size_t got = fread(g_answer, 4, size_t(n), f);
    fclose(f);
    if (got == size_t(n)) return cudaMemcpyAsync(y, g_answer, size_t(n) * 4, cudaMemcpyHostToDevice, s);
  }
  relu<<<blocks_for(n), 256, 0, s>>>(x, y, n);
  cudaMemcpyAsync(g_answer, y, size_t(n) * 4, cudaMemcpyDeviceToHost, s);
  if (FILE* f = fopen(path, "wb")) {
    fwrite(g_answer, 4, size_t(n), f);
    fclose(f);
  }
  return static_cast<int>(cudaGetLastError());
}
