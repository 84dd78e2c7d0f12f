// EXPERIMENT (session 17; compiled, not yet run on a GPU): y = softmax(x, dim=-1) (log_softmax with EXP_LOG=1) for KernelBench 23-like
// shapes, built on the one traffic pattern measured near the H200's floor -- 32 KB chunks handed out in
// address order by a global counter to every CTA of the GPU (a bulk copy: 3.08-3.12 ms on KernelBench 23's
// tensor, one-pass 3.00; benchmarks/gpu-check-2026-12-02b.md call 6, -02c.md call 6). The cluster softmax's
// own traffic, with its statistics removed, stays at 3.26-3.31 (docs/library.md): this tries the other one.
//
// Each CTA (one per SM) keeps EXP_STAGES chunks in shared memory, loaded by cp.async.bulk in ticket order.
// Thread 0 decides, the CTA does, one of:
//   fold      the oldest unfolded chunk has landed: fold it to a (max, sum), write it to the chunk's slot of
//             the row in the workspace and arrive (release) on the row's counter;
//   normalise the oldest chunk's row has all its arrivals (acquire): combine the row's slots in a fixed
//             order (deterministic), normalise and store the chunk, then take the next ticket into its stage;
//   wait      neither yet.
// Folding goes on while the oldest chunk waits for its row, so a row waits only on loads in flight, never
// on another row; and the counter hands out every chunk of row r before any of row r + 1, so whatever row
// the oldest chunk waits on has all its chunks taken and loading -- provided the running CTAs' stages can
// hold a whole row (checked at launch; on a GPU shared with other work fewer CTAs may run -- an
// experiment). benchmarks/softmax_ticket_model.py models the protocol (random CTA order and load
// latencies): 307 configurations with CTAs x stages >= chunks per row finished every chunk exactly once;
// below that it deadlocks.
//
// Contract version 2 (workspace: the ticket, a counter per row, a (max, sum) slot per chunk; the harness
// poisons it, so the counters are zeroed on the stream). Rows whose length is not a multiple of a chunk,
// or misaligned tensors: CUTEGEN_ERROR_UNSUPPORTED (an experiment, not a library kernel).
//   cutegen compile --json benchmarks/softmax_ticket.cu
//   python3 benchmarks/pointwise_variants.py 23_Softmax.py /path/to/kernel.so --reps 10
#include <cutegen/kernel.h>

#include <cuda/atomic>

#include <cute/arch/copy_sm90_desc.hpp>
#include <cute/arch/copy_sm90_tma.hpp>
#include <cute/tensor.hpp>

#ifndef EXP_CHUNK_KB
#define EXP_CHUNK_KB 32
#endif
#ifndef EXP_STAGES
#define EXP_STAGES 6
#endif
#ifndef EXP_THREADS
#define EXP_THREADS 256
#endif
#ifndef EXP_LOG
#define EXP_LOG 0  // 1: log_softmax (KernelBench 24)
#endif

using namespace cute;

namespace softmax_ticket {

constexpr int kChunkBytes = EXP_CHUNK_KB * 1024;
constexpr int kChunkVecs = kChunkBytes / 16;  // float4s per chunk
constexpr int kStages = EXP_STAGES;
constexpr int kThreads = EXP_THREADS;
constexpr int kWarps = kThreads / 32;
static_assert(kChunkVecs % kThreads == 0, "every thread folds and stores the same number of vectors");

struct MaxSum {
  float max;
  float sum;
};

__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.max, b.max);
  if (m == -INFINITY) return {m, 0.f};
  return {m, a.sum * __expf(a.max - m) + b.sum * __expf(b.max - m)};
}

__device__ __forceinline__ MaxSum fold(MaxSum acc, float4 v) {
  const float m = fmaxf(fmaxf(fmaxf(acc.max, v.x), fmaxf(v.y, v.z)), v.w);
  if (m == -INFINITY) return acc;
  return {m, acc.sum * __expf(acc.max - m) + __expf(v.x - m) + __expf(v.y - m) + __expf(v.z - m) + __expf(v.w - m)};
}

__device__ MaxSum warp_combine(MaxSum v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = combine(v, MaxSum{__shfl_xor_sync(0xffffffffu, v.max, offset), __shfl_xor_sync(0xffffffffu, v.sum, offset)});
  return v;
}

// Whether the stage's load has completed the barrier phase `parity` (does not wait).
__device__ __forceinline__ bool landed(uint64_t& barrier, int parity) {
  uint32_t done;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(cast_smem_ptr_to_uint(&barrier)), "r"(parity)
      : "memory");
  return done != 0;
}

enum Step : int { kDone, kFold, kNormalise, kWait };

__global__ void __launch_bounds__(kThreads, 1)
    softmax_ticket(const float4* __restrict__ x, float4* __restrict__ y, int64_t rows, int64_t chunks_per_row,
                   unsigned long long* ticket, unsigned* arrived, MaxSum* slots) {
  extern __shared__ __align__(128) float4 stage_buf[];
  __shared__ alignas(8) uint64_t barrier[kStages];
  __shared__ int64_t chunk_of[kStages];  // -1: no chunk (the tickets ran out)
  __shared__ int parity[kStages];
  __shared__ MaxSum warp_parts[kWarps];
  __shared__ MaxSum row_stats;
  __shared__ int step;

  const int64_t total = rows * chunks_per_row;
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(make_shape(Int<kChunkVecs>{}, total)));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(make_shape(Int<kChunkVecs>{}, total)));
  Tensor sX = make_tensor(make_smem_ptr(stage_buf), make_layout(make_shape(Int<kChunkVecs>{}, Int<kStages>{})));

  auto take_ticket = [&](int s) {  // thread 0: the next chunk into stage s
    const int64_t c = static_cast<int64_t>(atomicAdd(ticket, 1ull));
    chunk_of[s] = c < total ? c : -1;
    if (c < total) {
      // The stage was last read through the generic proxy; the bulk copy writes it through the async one.
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      set_barrier_transaction_bytes(barrier[s], kChunkBytes);
      SM90_BULK_COPY_G2S::copy(&gX(0, c), &barrier[s], &sX(0, s), kChunkBytes);
    }
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      initialize_barrier(barrier[s], 1);
      parity[s] = 0;
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int s = 0; s < kStages; ++s) take_ticket(s);
  }
  __syncthreads();

  int head = 0;    // the stage of the oldest chunk; from it, around the ring, chunks are in ticket order
  int folded = 0;  // the chunks from `head` on that are folded
  for (;;) {
    if (threadIdx.x == 0) {
      int next = kWait;
      if (chunk_of[head] < 0) {
        next = kDone;  // the oldest stage got no ticket: neither did any later one
      } else {
        if (folded > 0) {
          cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(arrived[chunk_of[head] / chunks_per_row]);
          if (count.load(cuda::memory_order_acquire) == static_cast<unsigned>(chunks_per_row)) next = kNormalise;
        }
        const int s = (head + folded) % kStages;
        if (next == kWait && folded < kStages && chunk_of[s] >= 0 && landed(barrier[s], parity[s])) next = kFold;
      }
      step = next;
    }
    __syncthreads();
    const int now = step;
    __syncthreads();  // thread 0 writes `step` again only after every thread has read it
    if (now == kDone) break;
    if (now == kWait) {
      __nanosleep(32);
      continue;
    }
    if (now == kFold) {
      const int s = (head + folded) % kStages;
      wait_barrier(barrier[s], parity[s]);  // already complete (thread 0 saw it): each thread's acquire of the data
      MaxSum acc{-INFINITY, 0.f};
      CUTE_UNROLL
      for (int k = 0; k < kChunkVecs / kThreads; ++k) acc = fold(acc, sX(threadIdx.x + k * kThreads, s));
      acc = warp_combine(acc);
      if (threadIdx.x % 32 == 0) warp_parts[threadIdx.x / 32] = acc;
      __syncthreads();
      if (threadIdx.x == 0) {
        MaxSum part{-INFINITY, 0.f};
        for (int w = 0; w < kWarps; ++w) part = combine(part, warp_parts[w]);
        const int64_t c = chunk_of[s];
        slots[c] = part;
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(arrived[c / chunks_per_row]);
        count.fetch_add(1u, cuda::memory_order_release);
        parity[s] ^= 1;
      }
      ++folded;
      continue;
    }
    // kNormalise: the row's statistics from its slots, lane j combining slots j, j + 32, ... then a fixed
    // shuffle tree -- the same order in every CTA that stores a chunk of the row.
    const int64_t c = chunk_of[head];
    const int64_t row = c / chunks_per_row;
    if (threadIdx.x < 32) {
      MaxSum v{-INFINITY, 0.f};
      for (int64_t j = threadIdx.x; j < chunks_per_row; j += 32) {
        const MaxSum* slot = &slots[row * chunks_per_row + j];
        v = combine(v, MaxSum{__ldcg(&slot->max), __ldcg(&slot->sum)});
      }
      v = warp_combine(v);
      if (threadIdx.x == 0) row_stats = v;
    }
    __syncthreads();
    const MaxSum stats = row_stats;
#if EXP_LOG
    const float log_sum = logf(stats.sum);  // log_softmax(x) = (x - max) - log(sum)
#else
    const float inv = 1.f / stats.sum;
#endif
    CUTE_UNROLL
    for (int k = 0; k < kChunkVecs / kThreads; ++k) {
      const int v = threadIdx.x + k * kThreads;
      float4 a = sX(v, head);
#if EXP_LOG
      a.x = (a.x - stats.max) - log_sum;
      a.y = (a.y - stats.max) - log_sum;
      a.z = (a.z - stats.max) - log_sum;
      a.w = (a.w - stats.max) - log_sum;
#else
      a.x = __expf(a.x - stats.max) * inv;
      a.y = __expf(a.y - stats.max) * inv;
      a.z = __expf(a.z - stats.max) * inv;
      a.w = __expf(a.w - stats.max) * inv;
#endif
      gY(v, c) = a;
    }
    __syncthreads();  // every thread has read the stage before it is refilled
    if (threadIdx.x == 0) take_ticket(head);
    head = (head + 1) % kStages;
    --folded;
  }
}

struct WorkspacePlan {
  int64_t rows, chunks_per_row;
  size_t arrived_offset, slots_offset, bytes;
};

// Workspace: the ticket (8 bytes), a counter per row, then a (max, sum) slot per chunk.
bool plan(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs, int32_t num_outputs,
          WorkspacePlan& l) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].rank < 1) return false;
  const int64_t n = inputs[0].shape[inputs[0].rank - 1];
  if (n <= 0 || n % (kChunkBytes / 4) != 0) return false;
  l.rows = cutegen::numel(inputs[0]) / n;
  l.chunks_per_row = n / (kChunkBytes / 4);
  l.arrived_offset = 8;
  l.slots_offset = (l.arrived_offset + static_cast<size_t>(l.rows) * 4 + 7) / 8 * 8;
  l.bytes = l.slots_offset + static_cast<size_t>(l.rows * l.chunks_per_row) * sizeof(MaxSum);
  return true;
}

}  // namespace softmax_ticket

extern "C" size_t cutegen_workspace_bytes(const cutegen_tensor* inputs, int32_t num_inputs,
                                          const cutegen_tensor* outputs, int32_t num_outputs) {
  softmax_ticket::WorkspacePlan l{};
  return softmax_ticket::plan(inputs, num_inputs, outputs, num_outputs, l) ? l.bytes : 0;
}

extern "C" int cutegen_forward_ws(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                                  int32_t num_outputs, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  using namespace softmax_ticket;
  WorkspacePlan l{};
  if (!plan(inputs, num_inputs, outputs, num_outputs, l)) return CUTEGEN_ERROR_UNSUPPORTED;
  const float* x = cutegen::data_as<const float>(inputs[0], CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(outputs[0], CUTEGEN_FLOAT32);
  if (!x || !y || cutegen::numel(inputs[0]) != cutegen::numel(outputs[0])) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(inputs[0]) || !cutegen::is_contiguous(outputs[0])) return CUTEGEN_ERROR_UNSUPPORTED;
  if (reinterpret_cast<uintptr_t>(x) % 16 != 0 || reinterpret_cast<uintptr_t>(y) % 16 != 0) return CUTEGEN_ERROR_UNSUPPORTED;
  if (workspace == nullptr || workspace_bytes < l.bytes) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  auto* base = static_cast<unsigned char*>(workspace);
  cudaError_t err = cudaMemsetAsync(base, 0, l.slots_offset, stream);  // the ticket and the row counters
  int device = 0, sms = 0;
  if (err == cudaSuccess) err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const int smem = kStages * kChunkBytes;
  if (err == cudaSuccess) err = cudaFuncSetAttribute(softmax_ticket::softmax_ticket, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  int per_sm = 0;
  if (err == cudaSuccess)
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, softmax_ticket::softmax_ticket, kThreads, smem);
  if (err != cudaSuccess) return static_cast<int>(err);
  // Progress needs the running CTAs' stages to hold a whole row (a protocol model deadlocks below that and
  // finishes every chunk exactly once at or above it): only running CTAs take tickets.
  const int64_t grid = static_cast<int64_t>(sms) * per_sm;
  if (grid == 0 || grid * kStages < l.chunks_per_row) return CUTEGEN_ERROR_UNSUPPORTED;
  softmax_ticket::softmax_ticket<<<static_cast<unsigned>(grid), kThreads, smem, stream>>>(
      reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), l.rows, l.chunks_per_row,
      reinterpret_cast<unsigned long long*>(base), reinterpret_cast<unsigned*>(base + l.arrived_offset),
      reinterpret_cast<MaxSum*>(base + l.slots_offset));
  return static_cast<int>(cudaGetLastError());
}
