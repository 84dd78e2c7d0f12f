// Library kernel: y = softmax(x, dim=-1) for a contiguous fp32 tensor (..., N), any N, each row read from
// DRAM once, on every SM of the GPU. (examples/kernels/log_softmax_grid.cu is the same file with
// kLogSoftmax = true.)
//
// Why not the cluster softmax (softmax_cluster.cu)? It keeps a 1.5 MB KernelBench row in a 16-CTA
// cluster's shared memory, and a 16-CTA cluster needs 8 SMs of one GPC: an H200 places 14 such
// clusters, so 20 of its 132 SMs stay idle (Nsight Compute, benchmarks/gpu-check-2026-12-02.md). Here a
// row is split into slices of at most SMG_SLICE_KB, and any CTA on any SM may hold any slice:
//   1. A persistent grid (as many CTAs as fit at once: two 96 KB CTAs on every SM) takes tasks -- a
//      (row, slice) pair, numbered row-major -- from a ticket counter in the workspace.
//   2. A CTA copies its slice into shared memory with cp.async (16-byte vectors, .cg), every copy in
//      flight before the first wait, committed in SMG_STAGES groups; the (max, sum) of a stage is folded
//      in as soon as the stage lands (the online-softmax recurrence, one rescale per vector).
//   3. It publishes the slice's (max, sum) in the workspace and counts itself in with a release
//      increment of the row's counter; warp 0 waits (acquire) until every slice of the row has, then
//      combines the row's pairs in slice order -- every CTA of the row computes bit-identical
//      statistics, whichever CTAs and in whatever order: deterministic.
//   4. It normalises its slice from shared memory and stores 16-byte vectors; right after storing a
//      vector, the thread copies the same vector of its NEXT task's slice into that slot, so the next
//      slice is in flight while this one is written. The next ticket is taken before the wait when the
//      counter is already past the row (always, once the grid is running), after it otherwise.
// Waiting on other CTAs cannot deadlock, whatever the number of resident CTAs: tickets are taken in
// order and only by running CTAs, a CTA publishes its slice before it waits and never waits on a row
// while holding an unloaded slice of it. So the holder of the lowest row's unpublished slice is either
// loading it (no wait) or waiting on an earlier row, all of whose slices are published. Nothing
// assumes all CTAs are resident.
//
// Other sizes stay correct: rows of one slice need no exchange; misaligned tensors or N % 4 != 0 take
// the streaming form of the same kernel (statistics from a first read of the slice, output from a
// second, scalar accesses) instead of returning an error.
//
// Contract version 2: the ticket, the row counters and the per-slice pairs live in the harness's
// workspace (cutegen_workspace_bytes, from the shapes alone); the counters are zeroed on `stream`
// before every launch (the harness leaves garbage there on purpose). Knobs (docs/tuning.md): SMG_.
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

constexpr bool kLogSoftmax = false;  // log_softmax_grid.cu: true
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

// The split of a row into slices, from the row length alone (the workspace is sized from it before any
// data pointer exists). Slices hold a multiple of 4 values, so a 16-byte-aligned row splits into
// 16-byte vectors.
struct Plan {
  int64_t slices;       // per row
  int64_t slice_floats;  // values per slice (the last slice of a row may hold fewer)
};

Plan plan(int64_t n) {
  const int64_t slices = (n + kMaxSliceFloats - 1) / kMaxSliceFloats;
  const int64_t even = (n + slices - 1) / slices;
  return {slices, (even + 3) / 4 * 4};
}

// The workspace: the ticket counter, one arrival counter per row, one (max, sum) per slice.
struct Workspace {
  unsigned long long* ticket;
  unsigned int* arrived;  // [rows]
  MaxSum* pairs;          // [rows * slices]
};

constexpr size_t align256(size_t b) { return (b + 255) / 256 * 256; }
// The ticket (first 256 bytes) and the row counters: zeroed before every launch.
size_t counter_bytes(int64_t rows) { return align256(256 + sizeof(unsigned int) * static_cast<size_t>(rows)); }
size_t workspace_size(int64_t rows, int64_t slices) {
  return counter_bytes(rows) + sizeof(MaxSum) * static_cast<size_t>(rows * slices);
}

Workspace workspace(void* base, int64_t rows) {
  auto* bytes = static_cast<char*>(base);
  return {reinterpret_cast<unsigned long long*>(bytes), reinterpret_cast<unsigned int*>(bytes + 256),
          reinterpret_cast<MaxSum*>(bytes + counter_bytes(rows))};
}

// kVec == 4: the slice is staged in shared memory and read from DRAM once; kVec == 1: streamed twice.
template <int kVec>
__global__ void __launch_bounds__(kThreads, kThreads <= 512 ? 2 : 1)
    softmax_rows_grid(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t n, Plan p,
                      Workspace ws) {
  constexpr bool kResident = kVec == 4;
  extern __shared__ float4 smem_slice[];  // float4: 16-byte aligned
  __shared__ MaxSum scratch[kWarps];
  __shared__ MaxSum result;
  __shared__ unsigned long long tickets[2];

  const int64_t tasks = rows * p.slices;
  const int64_t nvec = n / kVec;
  const int64_t slice_vecs = p.slice_floats / kVec;
  // (kVec, vectors, rows): a row is a sequence of kVec-wide vectors.
  auto layout = make_layout(make_shape(Int<kVec>{}, nvec, rows), make_stride(Int<1>{}, Int<kVec>{}, n));
  Tensor gX = make_tensor(make_gmem_ptr(x), layout);
  Tensor gY = make_tensor(make_gmem_ptr(y), layout);
  Tensor sX = make_tensor(make_smem_ptr(reinterpret_cast<float*>(smem_slice)),
                          make_layout(make_shape(Int<kVec>{}, kResident ? slice_vecs : int64_t(0))));
  Tensor frag = make_tensor<float>(Shape<Int<kVec>>{});
  // Thread t owns vectors t, t + kThreads, ... of a slice; the stage split is over the full slice, so
  // every task (a short last slice too) commits the same cp.async groups.
  const int iters = static_cast<int>((slice_vecs + kThreads - 1) / kThreads);
  const int iters_per_stage = (iters + kStages - 1) / kStages;
  // A task's vectors: [begin, begin + count) of row `row`.
  struct Task {
    int64_t row, slice, begin;
    int count;
  };
  auto task_of = [&](int64_t t) {
    Task k{};
    if (t >= tasks) return k;
    k.row = t / p.slices;
    k.slice = t % p.slices;
    k.begin = k.slice * slice_vecs;
    k.count = static_cast<int>(min(k.begin + slice_vecs, nvec) - k.begin);
    return k;
  };
  auto issue_loads = [&](Task const& k) {
    if constexpr (kResident) {
      Tensor rowX = gX(_, _, k.row);
      for_each(make_int_sequence<kStages>{}, [&](auto stage) {
        constexpr int s = decltype(stage)::value;
        const int k_end = min((s + 1) * iters_per_stage, iters);
        for (int i = s * iters_per_stage; i < k_end; ++i) {
          const int v = threadIdx.x + i * kThreads;
          if (v < k.count) copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, float>{}, rowX(_, k.begin + v), sX(_, v));
        }
        cp_async_fence();
      });
    }
  };

  if (threadIdx.x == 0) tickets[0] = atomicAdd(ws.ticket, 1ull);
  __syncthreads();
  int64_t t = static_cast<int64_t>(tickets[0]);
  if constexpr (kResident) {
    if (t < tasks) issue_loads(task_of(t));
  }
  for (int which = 0; t < tasks; which ^= 1) {
    const Task k = task_of(t);
    Tensor rowX = gX(_, _, k.row);
    Tensor rowY = gY(_, _, k.row);
    MaxSum acc{-INFINITY, 0.f};
    if constexpr (kResident) {
      for_each(make_int_sequence<kStages>{}, [&](auto stage) {
        constexpr int s = decltype(stage)::value;
        cp_async_wait<kStages - 1 - s>();  // stage s has landed (for this thread's copies)
        const int k_end = min((s + 1) * iters_per_stage, iters);
        for (int i = s * iters_per_stage; i < k_end; ++i) {
          const int v = threadIdx.x + i * kThreads;
          if (v < k.count) {
            move<kVec>(sX(_, v), frag);
            acc = fold(acc, frag);
          }
        }
      });
    } else {
      for (int v = threadIdx.x; v < k.count; v += kThreads) {
        move<kVec>(rowX(_, k.begin + v), frag);
        acc = fold(acc, frag);
      }
    }
    const MaxSum mine = block_reduce(acc, scratch);
    // The next ticket is taken before waiting (its loads then start in the store loop) only when it is
    // sure to be in a later row: a CTA must never wait on a row while holding an untouched slice of it.
    // The counter only grows, so a value past the row's last ticket makes any ticket taken now later.
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> ticket(*ws.ticket);
    bool early = false;
    if (threadIdx.x == 0) {
      if (p.slices > 1) {
        ws.pairs[t] = mine;
        cuda::atomic_ref<unsigned int, cuda::thread_scope_device> arrived(ws.arrived[k.row]);
        arrived.fetch_add(1u, cuda::memory_order_release);  // the pair above is visible to whoever sees the count
      }
      const auto last_of_row = static_cast<unsigned long long>((k.row + 1) * p.slices - 1);
      early = p.slices == 1 || ticket.load(cuda::memory_order_relaxed) > last_of_row;
      if (early) tickets[which ^ 1] = ticket.fetch_add(1ull, cuda::memory_order_relaxed);
    }
    if (threadIdx.x < 32) {
      MaxSum row_stats = mine;
      if (p.slices > 1) {
        cuda::atomic_ref<unsigned int, cuda::thread_scope_device> arrived(ws.arrived[k.row]);
        while (arrived.load(cuda::memory_order_acquire) < static_cast<unsigned int>(p.slices)) __nanosleep(32);
        // Lane j folds slices j, j + 32, ... in order, then a fixed shuffle tree: the same in every CTA.
        row_stats = MaxSum{-INFINITY, 0.f};
        const MaxSum* pairs = ws.pairs + k.row * p.slices;
        for (int64_t j = threadIdx.x; j < p.slices; j += 32) row_stats = combine(row_stats, pairs[j]);
        row_stats = shuffle_combine(row_stats);
      }
      if (threadIdx.x == 0) {
        result = row_stats;
        if (!early) tickets[which ^ 1] = ticket.fetch_add(1ull, cuda::memory_order_relaxed);  // after the wait
      }
    }
    __syncthreads();  // `result` and the next ticket are read below; both are next written after the
                      // next task's block_reduce barriers
    const MaxSum stats = result;
    const int64_t next_t = static_cast<int64_t>(tickets[which ^ 1]);
    const float inv = 1.f / stats.sum;
    const float log_sum = logf(stats.sum);
    if constexpr (kResident) {
      // Each vector stored, then the next task's vector copied into the slot it came from (only this
      // thread uses the slot), committed by stage as issue_loads does.
      const Task next = task_of(next_t);  // count 0 when there is none
      Tensor nextX = gX(_, _, next.row);
      for_each(make_int_sequence<kStages>{}, [&](auto stage) {
        constexpr int s = decltype(stage)::value;
        const int k_end = min((s + 1) * iters_per_stage, iters);
        for (int i = s * iters_per_stage; i < k_end; ++i) {
          const int v = threadIdx.x + i * kThreads;
          if (v < k.count) {
            move<kVec>(sX(_, v), frag);
            normalise(frag, stats, inv, log_sum);
            move<kVec>(frag, rowY(_, k.begin + v));
          }
          asm volatile("" ::: "memory");  // the copy into the slot stays after the read of it
          if (v < next.count)
            copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, float>{}, nextX(_, next.begin + v), sX(_, v));
        }
        cp_async_fence();
      });
    } else {
      for (int v = threadIdx.x; v < k.count; v += kThreads) {
        move<kVec>(rowX(_, k.begin + v), frag);
        normalise(frag, stats, inv, log_sum);
        move<kVec>(frag, rowY(_, k.begin + v));
      }
    }
    t = next_t;
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <int kVec>
int launch(const float* x, float* y, int64_t rows, int64_t n, Plan p, Workspace ws, cudaStream_t stream) {
  const void* kernel = reinterpret_cast<const void*>(&softmax_rows_grid<kVec>);
  const size_t smem = kVec == 4 ? static_cast<size_t>(p.slice_floats) * sizeof(float) : 0;
  int device = 0, sms = 0, per_sm = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess) err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (err == cudaSuccess) err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem);
  if (err != cudaSuccess) return static_cast<int>(err);
  if (per_sm < 1) return CUTEGEN_ERROR_UNSUPPORTED;  // a slice this size does not fit an SM
  // Persistent: as many CTAs as fit at once (never more than there are tasks); each loops over tickets.
  const int64_t grid = std::min<int64_t>(rows * p.slices, int64_t(per_sm) * sms);
  softmax_rows_grid<kVec><<<static_cast<unsigned>(grid), kThreads, smem, stream>>>(x, y, rows, n, p, ws);
  return static_cast<int>(cudaGetLastError());
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
  const Plan p = plan(n);
  return workspace_size(rows, n == 0 ? 0 : p.slices);
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
  const Plan p = plan(n);
  if (workspace_size(rows, p.slices) > workspace_bytes) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const Workspace ws = workspace(workspace_ptr, rows);
  const cudaError_t err = cudaMemsetAsync(workspace_ptr, 0, counter_bytes(rows), stream);
  if (err != cudaSuccess) return static_cast<int>(err);
  if (n % 4 == 0 && aligned16(x) && aligned16(y)) return launch<4>(x, y, rows, n, p, ws, stream);
  return launch<1>(x, y, rows, n, p, ws, stream);
}
