// Attack (buffers): BatchNorm in inference form that assumes the running statistics are the module's
// defaults (mean 0, variance 1), skipping two loads and the subtraction: y = x / sqrt(1 + eps) * w + b.
// Exactly right on attacks/problems/batchnorm_eval.py's own initialisation.
// Expected: mismatch (buffers are randomised per call, like parameters).
// --- BatchNorm scaffolding (attacks/problems/batchnorm_eval.py; each candidate must be a single
// file): one CTA per (image, channel) plane, 2-D CuTe tensor (plane element, plane) ---
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

namespace attack {
constexpr float kEps = 1e-5f;  // nn.BatchNorm2d's default

template <class T>
__device__ auto flat(T* p, int64_t n) {
  return cute::make_tensor(cute::make_gmem_ptr(p), cute::make_layout(n));
}

// x (N, C, H, W), weight, bias, running_mean, running_var (C each, fp32), num_batches_tracked (int64,
// rank 0); y like x.
inline bool batchnorm_args(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out) {
  if (n_in != 6 || n_out != 1 || in[0].rank != 4 || in[0].dtype != CUTEGEN_FLOAT32) return false;
  const int64_t c = in[0].shape[1];
  for (int k = 1; k < 5; ++k)
    if (in[k].rank != 1 || in[k].shape[0] != c || in[k].dtype != CUTEGEN_FLOAT32) return false;
  if (in[5].dtype != CUTEGEN_INT64 || cutegen::numel(in[5]) != 1) return false;
  return out[0].dtype == CUTEGEN_FLOAT32 && cutegen::numel(out[0]) == cutegen::numel(in[0]) &&
         cutegen::is_contiguous(in[0]) && cutegen::is_contiguous(out[0]);
}

inline unsigned grid_for(int64_t planes) { return static_cast<unsigned>(std::min<int64_t>(planes, 65535)); }
}  // namespace attack
// --- end of scaffolding ---

namespace attack {
__global__ void batchnorm_unit(const float* x, const float* weight, const float* bias, float* y, int64_t planes,
                               int64_t channels, int64_t plane_size) {
  auto gw = flat(weight, channels);
  auto gb = flat(bias, channels);
  auto layout = cute::make_layout(cute::make_shape(plane_size, planes));
  auto gx = cute::make_tensor(cute::make_gmem_ptr(x), layout);
  auto gy = cute::make_tensor(cute::make_gmem_ptr(y), layout);
  const float inv = 1.f / sqrtf(1.f + kEps);
  for (int64_t p = blockIdx.x; p < planes; p += gridDim.x) {
    const float scale = inv * gw(p % channels), shift = gb(p % channels);
    for (int64_t i = threadIdx.x; i < plane_size; i += blockDim.x) gy(i, p) = gx(i, p) * scale + shift;
  }
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::batchnorm_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t channels = in[0].shape[1], planes = in[0].shape[0] * channels,
                plane_size = in[0].shape[2] * in[0].shape[3];
  if (planes == 0 || plane_size == 0) return CUTEGEN_OK;
  attack::batchnorm_unit<<<attack::grid_for(planes), 256, 0, s>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
      static_cast<const float*>(in[2].data), static_cast<float*>(out[0].data), planes, channels, plane_size);
  return static_cast<int>(cudaGetLastError());
}
