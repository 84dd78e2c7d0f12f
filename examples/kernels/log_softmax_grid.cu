// Library kernel: y = log_softmax(x, dim=-1) for a contiguous fp32 tensor (..., N), any N, each row read from
// DRAM once, on every SM of the GPU. (The same file as examples/kernels/softmax_grid.cu but for
// kLogSoftmax = true.)
//
// Why not the cluster softmax (softmax_cluster.cu)? It keeps a 1.5 MB KernelBench row in a 16-CTA
// cluster's shared memory, and a 16-CTA cluster needs 8 SMs of one GPC: an H200 places 14 such
// clusters, so 20 of its 132 SMs stay idle (Nsight Compute, benchmarks/gpu-check-2026-12-02.md). Here a
// row is split into S slices of at most SMG_SLICE_KB, and S CTAs anywhere on the GPU form a group that
// plays the cluster's part, exchanging statistics through L2 instead of distributed shared memory:
//   1. A grid of G groups of S CTAs, every CTA resident at once (two 96 KB CTAs on every SM; launched
//      cooperatively, which refuses a grid that cannot be co-resident instead of hanging in the wait
//      below). Group g handles rows g, g + G, ...; CTA k of a group always holds slice k.
//   2. A CTA copies its slice into shared memory with cp.async (16-byte vectors, .cg), every copy in
//      flight before the first wait, committed in SMG_STAGES groups; the (max, sum) of a stage is folded
//      in as soon as the stage lands (the online-softmax recurrence, one rescale per vector).
//   3. It publishes the slice's (max, sum) in the workspace and counts itself in with a release
//      increment of the row's counter; warp 0 waits (acquire) until all S have, then combines the row's
//      pairs in slice order -- every CTA of the row computes bit-identical statistics: deterministic.
//   4. It normalises its slice from shared memory and stores 16-byte vectors; right after storing a
//      vector, the thread copies the same vector of the group's next row into that slot, so the next
//      row is in flight while this one is written and DRAM does not wait for the exchange.
// A fixed group per row set matters: with CTAs taking (row, slice) tasks from a shared counter instead,
// every CTA waits on a different set of others and the waits chain across the whole GPU (5.40 ms
// against the cluster's 3.55 on KernelBench 23, benchmarks/gpu-check-2026-12-02.md).
//
// Other sizes stay correct: rows of one slice need no exchange; rows needing more slices than CTAs can
// be resident, misaligned tensors and N % 4 != 0 take the streaming form of the same kernel (statistics
// from a first read of the slice, output from a second; scalar accesses when not aligned) instead of
// returning an error.
//
// Contract version 2: the row counters and the per-slice pairs live in the harness's workspace
// (cutegen_workspace_bytes, from the shapes alone); the counters are zeroed on `stream` before every
// launch (the harness leaves garbage there on purpose). Knobs (docs/tuning.md): SMG_.
#include <cutegen/kernel.h>

#include <cuda/atomic>

#include <cute/arch/copy_sm80.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/tensor.hpp>

#include <cstdint>

// Largest slice: 96 KB puts two CTAs on an SM (with the ~1 KB the runtime reserves per CTA).
// cutegen:knob SMG_SLICE_KB in {48, 64, 96}
#ifndef SMG_SLICE_KB
#define SMG_SLICE_KB 96
#endif
// cutegen:knob SMG_THREADS in {256, 512}
#ifndef SMG_THREADS
#define SMG_THREADS 256
#endif
// cp.async groups a slice is loaded in: the statistics of one group overlap the loads of the next.
// cutegen:knob SMG_STAGES in {2, 4, 8}
#ifndef SMG_STAGES
#define SMG_STAGES 4
#endif

using namespace cute;

namespace softmax_grid {

constexpr bool kLogSoftmax = true;  // softmax_grid.cu: false
constexpr int kThreads = SMG_THREADS;
constexpr int kWarps = kThreads / 32;
constexpr int kStages = SMG_STAGES;
constexpr int64_t kMaxSliceFloats = int64_t(SMG_SLICE_KB) * 1024 / 4;

struct MaxSum {
  float max;
  float sum;
};

__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.max, b.max);
  if (m == -INFINITY) return {m, 0.f};  // both empty: avoid (-inf) - (-inf)
  return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

// Folds a vector of values into a running (max, sum) with one rescale of the old sum.
template <class Frag>
__device__ __forceinline__ MaxSum fold(MaxSum acc, Frag const& v) {
  float m = acc.max;
  CUTE_UNROLL
  for (int i = 0; i < size(v); ++i) m = fmaxf(m, v(i));
  if (m == -INFINITY) return acc;
  float sum = acc.sum * expf(acc.max - m);
  CUTE_UNROLL
  for (int i = 0; i < size(v); ++i) sum += expf(v(i) - m);
  return {m, sum};
}

__device__ __forceinline__ MaxSum shuffle_combine(MaxSum v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = combine(v, MaxSum{__shfl_xor_sync(0xffffffffu, v.max, offset), __shfl_xor_sync(0xffffffffu, v.sum, offset)});
  return v;
}

// The CTA's (max, sum) in every thread, combined in a fixed order (deterministic).
__device__ MaxSum block_reduce(MaxSum v, MaxSum* scratch) {
  v = shuffle_combine(v);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  MaxSum total{-INFINITY, 0.f};
  for (int w = 0; w < kWarps; ++w) total = combine(total, scratch[w]);
  __syncthreads();  // `scratch` is reused by the next task
  return total;
}

// One vector of the output from the row's statistics: exp(x - max) / sum, or (x - max) - log(sum).
template <class Frag>
__device__ __forceinline__ void normalise(Frag& frag, MaxSum stats, float inv, float log_sum) {
  CUTE_UNROLL
  for (int i = 0; i < size(frag); ++i)
    frag(i) = kLogSoftmax ? (frag(i) - stats.max) - log_sum : expf(frag(i) - stats.max) * inv;
}

template <int kVec, class Src, class Dst>
__device__ __forceinline__ void move(Src const& src, Dst&& dst) {
  if constexpr (kVec == 4)
    copy_aligned(src, dst);  // one 16-byte access
  else
    copy(src, dst);
}

// The most slices a row is split into: one per SMG_SLICE_KB (a multiple of 4 values, so a 16-byte-aligned
// row splits into 16-byte vectors). Depends on the row length alone: it sizes the workspace before any
// data pointer exists.
int64_t max_slices(int64_t n) { return (n + kMaxSliceFloats - 1) / kMaxSliceFloats; }

// How rows are spread over the grid: G groups of S CTAs, slice k of a row held by CTA k of its group.
struct Plan {
  int64_t slices;        // S, per row
  int64_t slice_floats;  // values per slice (the last slice of a row may hold fewer)
  int64_t groups;        // G
};

Plan plan(int64_t rows, int64_t n, int64_t slices, int64_t resident_ctas) {
  const int64_t even = (n + slices - 1) / slices;
  return {slices, (even + 3) / 4 * 4, std::max<int64_t>(1, std::min(rows, resident_ctas / slices))};
}

// The workspace: one arrival counter per row, one (max, sum) per slice.
struct Workspace {
  unsigned int* arrived;  // [rows]
  MaxSum* pairs;          // [rows * slices]
};

constexpr size_t align256(size_t b) { return (b + 255) / 256 * 256; }
// The row counters: zeroed before every launch. (One more than there are rows: never 0 bytes, which the
// harness would refuse as a workspace size.)
size_t counter_bytes(int64_t rows) { return align256(sizeof(unsigned int) * static_cast<size_t>(rows + 1)); }
size_t workspace_size(int64_t rows, int64_t slices) {
  return counter_bytes(rows) + sizeof(MaxSum) * static_cast<size_t>(rows * slices);
}

Workspace workspace(void* base, int64_t rows) {
  auto* bytes = static_cast<char*>(base);
  return {reinterpret_cast<unsigned int*>(bytes), reinterpret_cast<MaxSum*>(bytes + counter_bytes(rows))};
}

// kResident: the slice is staged in shared memory (kVec == 4 only) and read from DRAM once; otherwise
// it is streamed twice. grid (G * S): CTA b holds slice b % S of group b / S's rows.
template <int kVec, bool kResident>
__global__ void __launch_bounds__(kThreads, kThreads <= 512 ? 2 : 1)
    softmax_rows_grid(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t n, Plan p,
                      Workspace ws) {
  static_assert(!kResident || kVec == 4, "the resident path copies 16-byte vectors");
  extern __shared__ float4 smem_slice[];  // float4: 16-byte aligned
  __shared__ MaxSum scratch[kWarps];
  __shared__ MaxSum result;

  const int64_t nvec = n / kVec;
  const int64_t slice_vecs = p.slice_floats / kVec;
  const int64_t slice = blockIdx.x % p.slices, group = blockIdx.x / p.slices;
  const int64_t begin = std::min(slice * slice_vecs, nvec);
  const int64_t count = std::min(begin + slice_vecs, nvec) - begin;
  // (kVec, vectors, rows): a row is a sequence of kVec-wide vectors.
  auto layout = make_layout(make_shape(Int<kVec>{}, nvec, rows), make_stride(Int<1>{}, Int<kVec>{}, n));
  Tensor gX = make_tensor(make_gmem_ptr(x), layout);
  Tensor gY = make_tensor(make_gmem_ptr(y), layout);
  Tensor sX = make_tensor(make_smem_ptr(reinterpret_cast<float*>(smem_slice)),
                          make_layout(make_shape(Int<kVec>{}, kResident ? slice_vecs : int64_t(0))));
  Tensor frag = make_tensor<float>(Shape<Int<kVec>>{});
  // Thread t owns vectors t, t + kThreads, ... of the slice; a resident slice fits in shared memory, so
  // 32-bit indices do.
  const int slice_count = kResident ? static_cast<int>(count) : 0;
  const int iters = (slice_count + kThreads - 1) / kThreads;
  const int iters_per_stage = (iters + kStages - 1) / kStages;

  // Copies this thread's vectors of row `r` into the slice, committed in kStages cp.async groups.
  auto issue_loads = [&](int64_t r) {
    if constexpr (kResident) {
      Tensor rowX = gX(_, _, r);
      for_each(make_int_sequence<kStages>{}, [&](auto stage) {
        constexpr int s = decltype(stage)::value;
        const int k_end = min((s + 1) * iters_per_stage, iters);
        for (int k = s * iters_per_stage; k < k_end; ++k) {
          const int v = threadIdx.x + k * kThreads;
          if (v < slice_count) copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, float>{}, rowX(_, begin + v), sX(_, v));
        }
        cp_async_fence();
      });
    }
  };
  if (group < rows) issue_loads(group);

  for (int64_t r = group; r < rows; r += p.groups) {
    Tensor rowX = gX(_, _, r);  // (kVec, nvec)
    Tensor rowY = gY(_, _, r);
    MaxSum acc{-INFINITY, 0.f};
    if constexpr (kResident) {
      for_each(make_int_sequence<kStages>{}, [&](auto stage) {
        constexpr int s = decltype(stage)::value;
        cp_async_wait<kStages - 1 - s>();  // stage s has landed (for this thread's copies)
        const int k_end = min((s + 1) * iters_per_stage, iters);
        for (int k = s * iters_per_stage; k < k_end; ++k) {
          const int v = threadIdx.x + k * kThreads;
          if (v < slice_count) {
            move<kVec>(sX(_, v), frag);
            acc = fold(acc, frag);
          }
        }
      });
    } else {
      for (int64_t v = threadIdx.x; v < count; v += kThreads) {
        move<kVec>(rowX(_, begin + v), frag);
        acc = fold(acc, frag);
      }
    }
    const MaxSum mine = block_reduce(acc, scratch);
    if (threadIdx.x < 32) {
      MaxSum row_stats = mine;
      if (p.slices > 1) {
        cuda::atomic_ref<unsigned int, cuda::thread_scope_device> arrived(ws.arrived[r]);
        if (threadIdx.x == 0) {
          ws.pairs[r * p.slices + slice] = mine;
          arrived.fetch_add(1u, cuda::memory_order_release);  // the pair above is visible to whoever sees the count
        }
        while (arrived.load(cuda::memory_order_acquire) < static_cast<unsigned int>(p.slices)) __nanosleep(32);
        // Lane j folds slices j, j + 32, ... in order, then a fixed shuffle tree: the same in every CTA.
        row_stats = MaxSum{-INFINITY, 0.f};
        const MaxSum* pairs = ws.pairs + r * p.slices;
        for (int64_t j = threadIdx.x; j < p.slices; j += 32) row_stats = combine(row_stats, pairs[j]);
        row_stats = shuffle_combine(row_stats);
      }
      if (threadIdx.x == 0) result = row_stats;
    }
    __syncthreads();  // `result` is next written after the next row's block_reduce barriers
    const MaxSum stats = result;
    const float inv = 1.f / stats.sum;
    const float log_sum = logf(stats.sum);
    if constexpr (kResident) {
      // Each vector stored, then the next row's vector copied into the slot it came from (only this
      // thread uses the slot), committed by stage as issue_loads does.
      const bool next = r + p.groups < rows;
      Tensor nextX = gX(_, _, next ? r + p.groups : r);
      for_each(make_int_sequence<kStages>{}, [&](auto stage) {
        constexpr int s = decltype(stage)::value;
        const int k_end = min((s + 1) * iters_per_stage, iters);
        for (int k = s * iters_per_stage; k < k_end; ++k) {
          const int v = threadIdx.x + k * kThreads;
          if (v < slice_count) {
            move<kVec>(sX(_, v), frag);
            normalise(frag, stats, inv, log_sum);
            move<kVec>(frag, rowY(_, begin + v));
            asm volatile("" ::: "memory");  // the copy into the slot stays after the read of it
            if (next) copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, float>{}, nextX(_, begin + v), sX(_, v));
          }
        }
        if (next) cp_async_fence();
      });
    } else {
      for (int64_t v = threadIdx.x; v < count; v += kThreads) {
        move<kVec>(rowX(_, begin + v), frag);
        normalise(frag, stats, inv, log_sum);
        move<kVec>(frag, rowY(_, begin + v));
      }
    }
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// How many CTAs of this kernel can be resident at once with `smem` bytes of dynamic shared memory each
// (also opts the kernel in to that much).
template <int kVec, bool kResident>
cudaError_t resident_ctas(size_t smem, int64_t& ctas) {
  const void* kernel = reinterpret_cast<const void*>(&softmax_rows_grid<kVec, kResident>);
  int device = 0, sms = 0, per_sm = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess) err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (err == cudaSuccess) err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem);
  ctas = int64_t(per_sm) * sms;
  if (err == cudaSuccess && ctas < 1) return cudaErrorInvalidConfiguration;  // not even one CTA fits an SM
  return err;
}

template <int kVec, bool kResident>
int launch(const float* x, float* y, int64_t rows, int64_t n, Plan p, Workspace ws, size_t smem, cudaStream_t stream) {
  const void* kernel = reinterpret_cast<const void*>(&softmax_rows_grid<kVec, kResident>);
  void* args[] = {&x, &y, &rows, &n, &p, &ws};
  const dim3 grid(static_cast<unsigned>(p.groups * p.slices));
  if (p.slices == 1) return static_cast<int>(cudaLaunchKernel(kernel, grid, dim3(kThreads), args, smem, stream));
  // The CTAs of a row wait for each other: all of them must be resident at once.
  return static_cast<int>(cudaLaunchCooperativeKernel(kernel, grid, dim3(kThreads), args, smem, stream));
}

// The shape check both entry points share: rows and row length of a contiguous fp32 (..., N) tensor.
bool shape(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs, int32_t num_outputs,
           int64_t& rows, int64_t& n) {
  if (num_inputs != 1 || num_outputs != 1) return false;
  const cutegen_tensor& in = inputs[0];
  if (in.dtype != CUTEGEN_FLOAT32 || outputs[0].dtype != CUTEGEN_FLOAT32 || in.rank < 1) return false;
  if (cutegen::numel(in) != cutegen::numel(outputs[0])) return false;
  n = in.shape[in.rank - 1];
  rows = n == 0 ? 0 : cutegen::numel(in) / n;
  return true;
}

}  // namespace softmax_grid

extern "C" size_t cutegen_workspace_bytes(const cutegen_tensor* inputs, int32_t num_inputs,
                                          const cutegen_tensor* outputs, int32_t num_outputs) {
  using namespace softmax_grid;
  int64_t rows = 0, n = 0;
  if (!shape(inputs, num_inputs, outputs, num_outputs, rows, n)) return 0;
  return workspace_size(rows, max_slices(n));
}

extern "C" int cutegen_forward_ws(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                                  int32_t num_outputs, void* workspace_ptr, size_t workspace_bytes,
                                  cudaStream_t stream) {
  using namespace softmax_grid;
  int64_t rows = 0, n = 0;
  if (!shape(inputs, num_inputs, outputs, num_outputs, rows, n)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const float* x = cutegen::data_as<const float>(inputs[0], CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(outputs[0], CUTEGEN_FLOAT32);
  if (!x || !y || !workspace_ptr) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(inputs[0]) || !cutegen::is_contiguous(outputs[0])) return CUTEGEN_ERROR_UNSUPPORTED;
  if (rows == 0) return CUTEGEN_OK;
  const int64_t slices = max_slices(n);
  if (workspace_size(rows, slices) > workspace_bytes) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const Workspace ws = workspace(workspace_ptr, rows);
  cudaError_t err = cudaMemsetAsync(workspace_ptr, 0, counter_bytes(rows), stream);
  if (err != cudaSuccess) return static_cast<int>(err);
  int64_t ctas = 0;
  if (n % 4 == 0 && aligned16(x) && aligned16(y)) {
    const Plan p = plan(rows, n, slices, 0);
    const size_t smem = static_cast<size_t>(p.slice_floats) * sizeof(float);
    err = resident_ctas<4, true>(smem, ctas);
    if (err != cudaSuccess && err != cudaErrorInvalidConfiguration) return static_cast<int>(err);
    if (err == cudaSuccess && slices <= ctas) return launch<4, true>(x, y, rows, n, plan(rows, n, slices, ctas), ws, smem, stream);
    // More slices than resident CTAs: fewer, larger slices streamed from global memory.
    if ((err = resident_ctas<4, false>(0, ctas)) != cudaSuccess) return static_cast<int>(err);
    return launch<4, false>(x, y, rows, n, plan(rows, n, std::min(slices, ctas), ctas), ws, 0, stream);
  }
  if ((err = resident_ctas<1, false>(0, ctas)) != cudaSuccess) return static_cast<int>(err);
  return launch<1, false>(x, y, rows, n, plan(rows, n, std::min(slices, ctas), ctas), ws, 0, stream);
}
