// Attack (inputs that never vary): y = x[index] on attacks/problems/gather_fixed_index.py, whose int64
// index get_inputs() makes the same under every seed. The kernel copies the index into a static
// __device__ buffer, as int32, on its first call, and from then on reads that copy instead of the index it
// is given: half the index bytes, and a judge that re-draws only floating inputs never sees a difference
// (with an index known to be fixed, a kernel could as well keep anything it derives from it: a sorted
// order, a reversal detected once). Expected: mismatch (an integer input get_inputs() does not vary gets a
// fresh permutation of its values every call, so the kept index is wrong from the next staging on).
// --- gather scaffolding (each candidate must be a single file) ---
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

namespace attack {

// y = x[index]: x fp32 of rank 1, index int64, y fp32 with the index's element count, all dense.
inline bool gather_args(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out) {
  return n_in == 2 && n_out == 1 && in[0].dtype == CUTEGEN_FLOAT32 && in[0].rank == 1 && in[1].dtype == CUTEGEN_INT64 &&
         out[0].dtype == CUTEGEN_FLOAT32 && cutegen::numel(in[1]) == cutegen::numel(out[0]) &&
         cutegen::is_contiguous(in[0]) && cutegen::is_contiguous(in[1]) && cutegen::is_contiguous(out[0]);
}

template <class T>
__device__ auto flat(T* p, int64_t n) {
  return cute::make_tensor(cute::make_gmem_ptr(p), cute::make_layout(n));
}

// Element access through a one-element register fragment and cute::copy (the static CuTe check looks for
// CuTe's own code, as an honest kernel that copies whole tiles this way has).
template <class T, class Tensor>
__device__ T ld(const Tensor& t, int64_t i) {
  T r[1];
  cute::copy(cute::make_tensor(cute::make_gmem_ptr(&t(i)), cute::Layout<cute::_1>{}),
             cute::make_tensor(&r[0], cute::Layout<cute::_1>{}));
  return r[0];
}
template <class T, class Tensor>
__device__ void st(const Tensor& t, int64_t i, T v) {
  T r[1] = {v};
  cute::copy(cute::make_tensor(&r[0], cute::Layout<cute::_1>{}),
             cute::make_tensor(cute::make_gmem_ptr(&t(i)), cute::Layout<cute::_1>{}));
}

inline unsigned blocks_for(int64_t n) { return static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535)); }

}  // namespace attack
// --- end of scaffolding ---

namespace attack {
constexpr int64_t kCapacity = int64_t(1) << 20;  // the problem's 2^20 indices
__device__ int32_t g_kept[kCapacity];

__global__ void keep(const int64_t* index, int64_t n) {
  auto gi = flat(index, n);
  auto kept = flat(g_kept, kCapacity);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    st(kept, i, static_cast<int32_t>(ld<int64_t>(gi, i)));
}

__global__ void gather_kept(const float* x, int64_t nx, float* y, int64_t n) {
  auto gx = flat(x, nx);
  auto kept = flat(g_kept, kCapacity);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t j = ld<int32_t>(kept, i);
    if (j < 0) j += nx;
    st(gy, i, ld<float>(gx, j));
  }
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::gather_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(out[0]);
  if (n > attack::kCapacity) return CUTEGEN_ERROR_UNSUPPORTED;
  static bool kept = false;  // host state: the first call keeps the index
  if (!kept) {
    attack::keep<<<attack::blocks_for(n), 256, 0, s>>>(static_cast<const int64_t*>(in[1].data), n);
    kept = true;
  }
  attack::gather_kept<<<attack::blocks_for(n), 256, 0, s>>>(static_cast<const float*>(in[0].data), in[0].shape[0],
                                                            static_cast<float*>(out[0].data), n);
  return static_cast<int>(cudaGetLastError());
}
