// Library kernel: y = LayerNorm(x) * weight + bias over the trailing dimensions of a contiguous fp32
// tensor, for rows far larger than an SM: problems/layernorm_large.py (KernelBench 40: 16 rows of
// 64 x 256 x 256 = 4M values, 16 MB each). Inputs in the contract's order: x, weight, bias (each
// parameter has the normalised shape). eps = 1e-5 and the biased variance, as nn.LayerNorm.
//
// Why it is fast. A row (16 MB) fits in no CTA or cluster, so the usual one-CTA-per-row kernel reads
// it twice from DRAM. Here the whole grid works on one row at a time and each CTA keeps its slice of
// that row in shared memory (16 MB / 264 CTAs = 64 KB): the row is read from DRAM once.
//   1. load: the CTA copies its slice of row r into shared memory with cp.async (16-byte vectors,
//      every copy in flight before the first wait, in LN_STAGES groups so the sum of one group
//      overlaps the loads of the next);
//   2. partial statistics: the slice's sum and its sum of squared deviations from the slice's own
//      mean (two passes over shared memory; fp32 per thread, fp64 across the CTA), published in
//      fp64 to the harness's workspace (contract v2), then one atomic arrival on the row's counter;
//   3. while the other CTAs arrive, the CTA prefetches its slice of the next row into L2
//      (LN_PREFETCH), so DRAM keeps streaming through the barrier;
//   4. row statistics: every CTA combines all partials in the same fixed order, in fp64 (Chan's
//      parallel variance: M2 = sum of M2_p + n_p (mean_p - mean)^2), so all CTAs get bit-identical
//      mean and rstd and the result is deterministic and as precise as PyTorch's over 4M values;
//   5. normalise the slice straight from shared memory; weight and bias slices are read with an L2
//      evict_last hint and y is stored with evict_first (LN_L2_HINTS), so that weight and bias, not
//      the streaming rows, stay in the 50 MB L2 across the 16 rows.
// DRAM traffic: x once, y once, weight and bias about once: the floor.
//
// The spin-wait needs every CTA of the grid resident at once: the grid is sized from the occupancy
// query (LN_CTAS_PER_SM per SM at most) and launched with cudaLaunchCooperativeKernel, which refuses
// a grid that cannot be co-resident instead of hanging. The counters live in the workspace, which the
// harness poisons before every call, so they are zeroed with cudaMemsetAsync first.
// Other sizes stay correct: a slice too large for shared memory, misaligned tensors or a row length
// not divisible by 4 take the streaming path of the same kernel (the slice is re-read from global
// memory instead of shared memory). Knobs (docs/tuning.md) are prefixed LN_.
#include <cutegen/kernel.h>

#include <cuda/atomic>

// cute/tensor.hpp first: the copy atoms below build on what it declares (cutegen/kernel.h includes only
// cute/tensor_impl.hpp).
#include <cute/tensor.hpp>
#include <cute/arch/copy_sm80.hpp>
#include <cute/atom/copy_atom.hpp>

// cutegen:knob LN_THREADS in {256, 512, 1024}
#ifndef LN_THREADS
#define LN_THREADS 512
#endif
// cutegen:knob LN_CTAS_PER_SM in {1, 2, 4}
#ifndef LN_CTAS_PER_SM
#define LN_CTAS_PER_SM 2
#endif
// At most 1024 threads per SM: 64 registers per thread, which the kernel needs without spilling.
// cutegen:require LN_THREADS * LN_CTAS_PER_SM <= 1024
// cutegen:knob LN_STAGES in {1, 2, 4}
#ifndef LN_STAGES
#define LN_STAGES 2
#endif
// cutegen:knob LN_PREFETCH in {0, 1}
#ifndef LN_PREFETCH
#define LN_PREFETCH 1
#endif
// cutegen:knob LN_L2_HINTS in {0, 1}
#ifndef LN_L2_HINTS
#define LN_L2_HINTS 1
#endif

using namespace cute;

namespace layernorm_grid {

constexpr int kThreads = LN_THREADS;
constexpr int kWarps = kThreads / 32;
constexpr int kStages = LN_STAGES;
constexpr float kEps = 1e-5f;
// The workspace holds partials for at most this many CTAs per row (132 SMs x 4 CTAs fit).
constexpr int kMaxParts = 1024;
constexpr int kPartsPerThread = (kMaxParts + kThreads - 1) / kThreads;

// The CTA's total of v, in every thread; fixed order (deterministic).
template <class T>
__device__ T block_sum(T v, T* scratch) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  T total = 0;
  for (int w = 0; w < kWarps; ++w) total += scratch[w];
  __syncthreads();  // `scratch` is reused by the next call
  return total;
}

// A 16-byte load that asks L2 to keep the line longer than the streaming rows (evict_last).
__device__ __forceinline__ float4 load_keep_in_l2(const float* p) {
  float4 v;
  if constexpr (LN_L2_HINTS) {
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("ld.global.nc.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p), "l"(policy));
  } else {
    v = __ldg(reinterpret_cast<const float4*>(p));
  }
  return v;
}

// A 16-byte store that asks L2 to let the line go first: y is never read again, and the lines it
// would otherwise push out are weight and bias, which every row reads.
__device__ __forceinline__ void store_evict_first(float* p, float4 v) {
  if constexpr (LN_L2_HINTS) {
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;"
                 :
                 : "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "l"(policy)
                 : "memory");
  } else {
    *reinterpret_cast<float4*>(p) = v;
  }
}

template <int kVec, class Src, class Dst>
__device__ __forceinline__ void move(Src const& src, Dst&& dst) {
  if constexpr (kVec == 4)
    copy_aligned(src, dst);  // one 16-byte access
  else
    copy(src, dst);
}

// Values (not vectors) in CTA p's slice of a row: slices are slice_vecs vectors long, the last ones
// shorter or empty.
__device__ __forceinline__ int64_t slice_values(int64_t p, int64_t slice_vecs, int64_t nvec, int kVec) {
  const int64_t begin = std::min<int64_t>(p * slice_vecs, nvec);
  return (std::min<int64_t>(begin + slice_vecs, nvec) - begin) * kVec;
}

// Grid of `parts` CTAs (all resident); CTA p owns vectors [p * slice_vecs, (p + 1) * slice_vecs) of
// every row. Workspace: counters (rows) uint32, then partials (2, kMaxParts, rows) doubles:
// (0, p, r) the slice's sum, (1, p, r) its sum of squared deviations from its own mean.
template <int kVec, bool kResident>
__global__ void __launch_bounds__(kThreads, LN_CTAS_PER_SM)
    layernorm_rows_grid(const float* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias,
                        float* __restrict__ y, unsigned* counters_ptr, double* partials_ptr, int64_t rows, int64_t n,
                        int64_t slice_vecs) {
  static_assert(!kResident || kVec == 4, "the resident path copies 16-byte vectors");
  extern __shared__ float4 smem_slice[];  // float4: 16-byte aligned
  __shared__ double scratch_d[kWarps];

  const int64_t parts = gridDim.x, p = blockIdx.x;
  const int64_t nvec = n / kVec;
  const int64_t begin = std::min<int64_t>(p * slice_vecs, nvec);
  const int64_t count = std::min<int64_t>(begin + slice_vecs, nvec) - begin;
  auto layout = make_layout(make_shape(Int<kVec>{}, nvec, rows), make_stride(Int<1>{}, Int<kVec>{}, n));
  Tensor gX = make_tensor(make_gmem_ptr(x), layout);  // (kVec, nvec, rows)
  Tensor gY = make_tensor(make_gmem_ptr(y), layout);
  auto param_layout = make_layout(make_shape(Int<kVec>{}, nvec));
  Tensor gW = make_tensor(make_gmem_ptr(weight), param_layout);  // (kVec, nvec)
  Tensor gB = make_tensor(make_gmem_ptr(bias), param_layout);
  Tensor sX = make_tensor(make_smem_ptr(reinterpret_cast<float*>(smem_slice)),
                          make_layout(make_shape(Int<kVec>{}, kResident ? slice_vecs : int64_t(0))));
  Tensor counters = make_tensor(make_gmem_ptr(counters_ptr), make_layout(rows));
  Tensor partials = make_tensor(make_gmem_ptr(partials_ptr), make_layout(make_shape(Int<2>{}, Int<kMaxParts>{}, rows)));
  Tensor v = make_tensor<float>(Shape<Int<kVec>>{});
  Tensor w = make_tensor<float>(Shape<Int<kVec>>{});
  Tensor b = make_tensor<float>(Shape<Int<kVec>>{});
  // Thread t owns vectors t, t + kThreads, ... of the slice; iteration k is vector t + k * kThreads.
  // A resident slice fits in shared memory, so 32-bit indices do (fewer registers in the unrolled stages).
  const int slice_count = kResident ? static_cast<int>(count) : 0;
  const int iters = (slice_count + kThreads - 1) / kThreads;
  const int iters_per_stage = (iters + kStages - 1) / kStages;
  const double slice_n = static_cast<double>(count * kVec);

  for (int64_t r = 0; r < rows; ++r) {
    Tensor rowX = gX(_, _, r);
    Tensor rowY = gY(_, _, r);
    // 1. load the slice (resident) and sum it
    float sum = 0.f;
    if constexpr (kResident) {
      for_each(make_int_sequence<kStages>{}, [&](auto stage) {
        constexpr int s = decltype(stage)::value;
        const int k_end = min((s + 1) * iters_per_stage, iters);
        for (int k = s * iters_per_stage; k < k_end; ++k) {
          const int i = threadIdx.x + k * kThreads;
          if (i < slice_count) copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, float>{}, rowX(_, begin + i), sX(_, i));
        }
        cp_async_fence();
      });
      for_each(make_int_sequence<kStages>{}, [&](auto stage) {
        constexpr int s = decltype(stage)::value;
        cp_async_wait<kStages - 1 - s>();  // this thread's copies of stage s have landed
        const int k_end = min((s + 1) * iters_per_stage, iters);
        for (int k = s * iters_per_stage; k < k_end; ++k) {
          const int i = threadIdx.x + k * kThreads;
          if (i < slice_count) {
            move<kVec>(sX(_, i), v);
            CUTE_UNROLL
            for (int j = 0; j < kVec; ++j) sum += v(j);
          }
        }
      });
    } else {
      for (int64_t i = threadIdx.x; i < count; i += kThreads) {
        move<kVec>(rowX(_, begin + i), v);
        CUTE_UNROLL
        for (int j = 0; j < kVec; ++j) sum += v(j);
      }
    }
    // 2. the slice's sum and squared deviations around its own mean; every thread reads back only
    //    the vectors it copied itself, so shared memory needs no barrier here
    // Per-thread sums cover a few dozen values; the CTA's sum of them is taken in fp64.
    const double slice_sum = block_sum(static_cast<double>(sum), scratch_d);
    const float slice_mean = count > 0 ? static_cast<float>(slice_sum / slice_n) : 0.f;
    float squares = 0.f;
    for (int64_t i = threadIdx.x; i < count; i += kThreads) {
      if constexpr (kResident)
        move<kVec>(sX(_, i), v);
      else
        move<kVec>(rowX(_, begin + i), v);
      CUTE_UNROLL
      for (int j = 0; j < kVec; ++j) squares += (v(j) - slice_mean) * (v(j) - slice_mean);
    }
    const double slice_m2 = block_sum(static_cast<double>(squares), scratch_d);
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> arrived(counters(r));
    if (threadIdx.x == 0) {
      partials(0, p, r) = slice_sum;
      partials(1, p, r) = slice_m2;
      arrived.fetch_add(1u, cuda::memory_order_release);
    }
    // 3. while the others arrive, pull this CTA's slice of the next row into L2 (one 128-byte line each)
    if constexpr (LN_PREFETCH) {
      if (r + 1 < rows) {
        const int64_t lines = (count * kVec * 4 + 127) / 128;
        for (int64_t l = threadIdx.x; l < lines; l += kThreads)
          asm volatile("prefetch.global.L2 [%0];" ::"l"(&gX(0, begin, r + 1) + l * 32));
      }
    }
    if (threadIdx.x == 0)
      while (arrived.load(cuda::memory_order_acquire) < parts) __nanosleep(32);
    __syncthreads();
    // 4. the row's mean and rstd from all partials, in fp64, in the same order in every CTA. Each
    //    thread loads its (at most kPartsPerThread) partials once: one L2 round trip on the critical path.
    double q_sum[kPartsPerThread], q_m2[kPartsPerThread];
    double part_sum = 0.0;
    CUTE_UNROLL
    for (int j = 0; j < kPartsPerThread; ++j) {
      const int64_t q = threadIdx.x + int64_t(j) * kThreads;
      q_sum[j] = q < parts ? __ldcg(&partials(0, q, r)) : 0.0;
      q_m2[j] = q < parts ? __ldcg(&partials(1, q, r)) : 0.0;
      part_sum += q_sum[j];
    }
    const double mean = block_sum(part_sum, scratch_d) / static_cast<double>(n);
    double part_m2 = 0.0;
    CUTE_UNROLL
    for (int j = 0; j < kPartsPerThread; ++j) {
      const int64_t q = threadIdx.x + int64_t(j) * kThreads;
      const double nq = q < parts ? static_cast<double>(slice_values(q, slice_vecs, nvec, kVec)) : 0.0;
      if (nq > 0) {
        const double d = q_sum[j] / nq - mean;
        part_m2 += q_m2[j] + nq * d * d;
      }
    }
    const double var = block_sum(part_m2, scratch_d) / static_cast<double>(n);
    const float mean_f = static_cast<float>(mean);
    const float rstd = static_cast<float>(1.0 / sqrt(var + static_cast<double>(kEps)));
    // 5. normalise
    for (int64_t i = threadIdx.x; i < count; i += kThreads) {
      if constexpr (kResident)
        move<kVec>(sX(_, i), v);
      else
        move<kVec>(rowX(_, begin + i), v);
      if constexpr (kVec == 4) {
        const float4 w4 = load_keep_in_l2(&gW(0, begin + i));
        const float4 b4 = load_keep_in_l2(&gB(0, begin + i));
        w(0) = w4.x, w(1) = w4.y, w(2) = w4.z, w(3) = w4.w;
        b(0) = b4.x, b(1) = b4.y, b(2) = b4.z, b(3) = b4.w;
      } else {
        copy(gW(_, begin + i), w);
        copy(gB(_, begin + i), b);
      }
      CUTE_UNROLL
      for (int j = 0; j < kVec; ++j) v(j) = (v(j) - mean_f) * rstd * w(j) + b(j);
      if constexpr (kVec == 4)
        store_evict_first(&rowY(0, begin + i), make_float4(v(0), v(1), v(2), v(3)));
      else
        move<kVec>(v, rowY(_, begin + i));
    }
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// (rows, n) of a valid argument list, else false. Shapes only: the workspace size is asked with
// descriptors whose data pointers are NULL.
bool geometry(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs, int32_t num_outputs,
              int64_t& rows, int64_t& n) {
  if (num_inputs != 3 || num_outputs != 1) return false;
  const cutegen_tensor &in = inputs[0], &w = inputs[1], &b = inputs[2], &out = outputs[0];
  for (const cutegen_tensor* t : {&in, &w, &b, &out})
    if (t->dtype != CUTEGEN_FLOAT32 || !cutegen::is_contiguous(*t)) return false;
  // weight and bias have the normalised shape: the trailing dimensions of x
  if (w.rank != b.rank || w.rank > in.rank) return false;
  for (int d = 0; d < w.rank; ++d)
    if (w.shape[d] != b.shape[d] || w.shape[d] != in.shape[in.rank - w.rank + d]) return false;
  n = cutegen::numel(w);
  if (n <= 0 || cutegen::numel(b) != n || cutegen::numel(in) != cutegen::numel(out) || cutegen::numel(in) % n != 0)
    return false;
  rows = cutegen::numel(in) / n;
  return rows > 0;
}

size_t workspace_size(int64_t rows) {
  return static_cast<size_t>(rows) * (sizeof(double) * 2 * kMaxParts + sizeof(unsigned));
}

template <int kVec, bool kResident>
int launch(const float* x, const float* w, const float* b, float* y, void* ws, int64_t rows, int64_t n, int parts,
           int64_t slice_vecs, size_t smem, cudaStream_t stream) {
  double* partials = static_cast<double*>(ws);  // 8-byte aligned: the workspace is 256-byte aligned
  unsigned* counters = reinterpret_cast<unsigned*>(partials + 2 * kMaxParts * rows);
  cudaError_t err = cudaMemsetAsync(counters, 0, sizeof(unsigned) * rows, stream);
  if (err != cudaSuccess) return static_cast<int>(err);
  void* args[] = {&x, &w, &b, &y, &counters, &partials, &rows, &n, &slice_vecs};
  err = cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&layernorm_rows_grid<kVec, kResident>),
                                    dim3(static_cast<unsigned>(parts)), dim3(kThreads), args, smem, stream);
  return static_cast<int>(err != cudaSuccess ? err : cudaGetLastError());
}

// How many CTAs of this kernel fit on one SM with `smem` bytes of dynamic shared memory each.
template <int kVec, bool kResident>
cudaError_t ctas_per_sm(size_t smem, int& ctas) {
  const void* kernel = reinterpret_cast<const void*>(&layernorm_rows_grid<kVec, kResident>);
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas, kernel, kThreads, smem);
}

}  // namespace layernorm_grid

extern "C" size_t cutegen_workspace_bytes(const cutegen_tensor* inputs, int32_t num_inputs,
                                          const cutegen_tensor* outputs, int32_t num_outputs) {
  int64_t rows = 0, n = 0;
  if (!layernorm_grid::geometry(inputs, num_inputs, outputs, num_outputs, rows, n)) return 0;  // the load fails
  return layernorm_grid::workspace_size(rows);
}

extern "C" int cutegen_forward_ws(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                                  int32_t num_outputs, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  using namespace layernorm_grid;
  int64_t rows = 0, n = 0;
  if (!geometry(inputs, num_inputs, outputs, num_outputs, rows, n)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (workspace_bytes < workspace_size(rows)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const float* x = static_cast<const float*>(inputs[0].data);
  const float* w = static_cast<const float*>(inputs[1].data);
  const float* b = static_cast<const float*>(inputs[2].data);
  float* y = static_cast<float*>(outputs[0].data);

  int device = 0, sms = 0, optin = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (err != cudaSuccess) return static_cast<int>(err);
  const bool vec = n % 4 == 0 && aligned16(x) && aligned16(w) && aligned16(b) && aligned16(y);
  const int64_t nvec = vec ? n / 4 : n;
  // Every CTA of the grid must be resident at once (they wait for each other): try LN_CTAS_PER_SM CTAs
  // per SM and fewer when registers or shared memory do not allow it. Short rows use fewer CTAs:
  // more than one per kThreads vectors would leave threads idle.
  const int64_t most_useful = std::max<int64_t>(1, (nvec + kThreads - 1) / kThreads);
  auto parts_for = [&](int per_sm) {
    return static_cast<int>(std::min<int64_t>({int64_t(sms) * per_sm, int64_t(kMaxParts), most_useful}));
  };
  int fit = 0;
  if (vec) {
    for (int per_sm = LN_CTAS_PER_SM; per_sm >= 1; per_sm /= 2) {
      const int parts = parts_for(per_sm);
      const int64_t slice_vecs = (nvec + parts - 1) / parts;
      const size_t smem = static_cast<size_t>(slice_vecs) * 16;
      if (smem + 2048 > static_cast<size_t>(optin)) break;  // fewer CTAs only make slices larger
      if ((err = ctas_per_sm<4, true>(smem, fit)) != cudaSuccess) return static_cast<int>(err);
      if (int64_t(fit) * sms >= parts)
        return launch<4, true>(x, w, b, y, workspace, rows, n, parts, slice_vecs, smem, stream);
    }
    // The row does not fit in the grid's shared memory: the streaming path re-reads each slice from
    // global memory (mostly L2) instead. Slower, still exact.
    if ((err = ctas_per_sm<4, false>(0, fit)) != cudaSuccess) return static_cast<int>(err);
    const int parts = parts_for(std::max(1, std::min(fit, LN_CTAS_PER_SM)));
    return launch<4, false>(x, w, b, y, workspace, rows, n, parts, (nvec + parts - 1) / parts, 0, stream);
  }
  if ((err = ctas_per_sm<1, false>(0, fit)) != cudaSuccess) return static_cast<int>(err);
  const int parts = parts_for(std::max(1, std::min(fit, LN_CTAS_PER_SM)));
  return launch<1, false>(x, w, b, y, workspace, rows, n, parts, (nvec + parts - 1) / parts, 0, stream);
}
