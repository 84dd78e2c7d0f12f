// EXPERIMENT (sessions 17-18; measured in benchmarks/gpu-check-2026-12-02d.md: KernelBench 23 3.28 ms in-process
// on the H200 with EXP_THREADS=128, the cluster softmax 3.46-3.48; KernelBench 24 3.23 with the defaults;
// its library form is examples/kernels/softmax_ticket.cu): y = softmax(x, dim=-1) (log_softmax with
// EXP_LOG=1) for KernelBench 23-like shapes, built on the one traffic pattern measured near the H200's floor -- 32 KB chunks handed out in
// address order by a global counter to every CTA of the GPU (a bulk copy: 3.08-3.12 ms on KernelBench 23's
// tensor; benchmarks/gpu-check-2026-12-02b.md call 6, -02c.md call 6). The cluster softmax's own traffic, with
// its statistics removed, stays at 3.26-3.31 (docs/library.md): this tries the other one.
//
// Each CTA (one per SM) keeps EXP_STAGES chunks in shared memory, loaded by cp.async.bulk in ticket order.
// A chunk is folded to a (max, sum) as soon as it lands and published in its slot of the workspace; it is
// normalised and stored once every slot of its row is published, and only then is its stage refilled.
// Folding goes on while the oldest chunk waits for its row, so a row waits only on loads in flight, never
// on another row; the counter hands out every chunk of row r before any of row r + 1, so whatever row the
// oldest chunk waits on has all its chunks taken and loading -- provided the running CTAs' stages can hold
// a whole row (checked at launch). benchmarks/softmax_ticket_model.py models the protocol (random CTA order
// and load latencies): 307 configurations with CTAs x stages >= chunks per row finished every chunk exactly
// once; below that it deadlocks.
//
// Session 17's form had thread 0 decide every step with the whole CTA at a barrier: ~6 L2 round trips a
// chunk on the critical path, 7.7 ms on KernelBench 23 (gpu-check-2026-12-02d.md call 1). This form splits
// the roles over warps so that no round trip stalls the folding and storing warps:
//   producer  (one warp, one lane): waits for a stage to be emptied, takes the next ticket, issues its copy;
//   poller    (one warp): for each stage in ring order, waits for its chunk, then polls the chunk's row's
//             slots until all are published, combines them (fixed order: every CTA of the row computes the
//             same statistics, bit for bit) and marks the stage ready;
//   compute   (EXP_THREADS threads): folds landed chunks and publishes their slots; normalises and stores
//             the oldest chunk once it is ready, then empties its stage.
// A slot is its own flag: one 64-bit store of (max, sum), read by 64-bit loads, the launch's memset leaving
// every slot all-ones (a max of 0xffffffff, which fmaxf never returns: it returns a canonical NaN) -- no
// counter, no fence. The same memset starts the ticket at ~0, so the first ticket is ~0 + 1 = 0.
//
// Contract version 2 (workspace: the ticket, then a (max, sum) slot per chunk). Rows whose length is not a
// multiple of a chunk, or misaligned tensors: CUTEGEN_ERROR_UNSUPPORTED (an experiment, not a library
// kernel).
//   cutegen compile --json benchmarks/softmax_ticket.cu
//   python3 benchmarks/pointwise_variants.py problems/softmax_large.py /path/to/kernel.so --reps 10
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
#define EXP_THREADS 256  // the compute threads; the producer and poller warps come on top
#endif
#ifndef EXP_LOG
#define EXP_LOG 0  // 1: log_softmax (KernelBench 24)
#endif
#ifndef EXP_BULK_STORE
#define EXP_BULK_STORE 0  // 1: the normalised chunk goes back into its stage and out by one bulk store
#endif
#ifndef EXP_TRACE
#define EXP_TRACE 0
#endif
#ifndef EXP_FAST_FOLD
#define EXP_FAST_FOLD 1  // 0: session 17's fold (an online (max, sum) per vector, exp again in the normalise)
#endif

using namespace cute;

// EXP_TRACE=1: each role of CTAs 0 and 1 prints its cycles per activity when it ends (a diagnosis build).
#if EXP_TRACE
#define TRACE_DECL(x) long long x = {}
#define TRACE_MARK(m) m = clock64()
#define TRACE_ADD(bucket, m) \
  do {                       \
    const long long now_ = clock64(); \
    bucket += now_ - m;      \
    m = now_;                \
  } while (0)
#define TRACE_USE(v) asm volatile("" ::"l"(v))
#define TRACE_PRINT(role, a, ta, b, tb, c, tc)                                                              \
  do {                                                                                                      \
    if (blockIdx.x < 2)                                                                                     \
      printf("trace cta %d %s: %s %lld, %s %lld, %s %lld\n", blockIdx.x, role, a, ta, b, tb, c, (long long)(tc)); \
  } while (0)
#else
#define TRACE_DECL(x)
#define TRACE_MARK(m)
#define TRACE_ADD(bucket, m)
#define TRACE_USE(v)
#define TRACE_PRINT(role, a, ta, b, tb, c, tc)
#endif

namespace softmax_ticket {

constexpr int kChunkBytes = EXP_CHUNK_KB * 1024;
constexpr int kChunkVecs = kChunkBytes / 16;  // float4s per chunk
constexpr int kStages = EXP_STAGES;
constexpr int kCompute = EXP_THREADS;
constexpr int kComputeWarps = kCompute / 32;
constexpr int kProducerWarp = kComputeWarps;
constexpr int kPollerWarp = kComputeWarps + 1;
constexpr int kThreads = kCompute + 64;
static_assert(kChunkVecs % kCompute == 0, "every compute thread folds and stores the same number of vectors");
static_assert(kStages <= 32, "the stages' barrier parities are bits of one word");
static_assert((kComputeWarps & (kComputeWarps - 1)) == 0 && kComputeWarps <= 32, "warp 0 combines the warps' parts by a shuffle tree");

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

// A slot as one 64-bit word: max in the low half. All-ones = not yet published.
constexpr unsigned long long kUnpublished = ~0ull;
__device__ __forceinline__ bool published(unsigned long long w) { return static_cast<uint32_t>(w) != 0xffffffffu; }
__device__ __forceinline__ unsigned long long pack(MaxSum v) {
  return (static_cast<unsigned long long>(__float_as_uint(v.sum)) << 32) | __float_as_uint(v.max);
}
__device__ __forceinline__ MaxSum unpack(unsigned long long w) {
  return {__uint_as_float(static_cast<uint32_t>(w)), __uint_as_float(static_cast<uint32_t>(w >> 32))};
}

// Whether the barrier has completed the phase `parity` (does not wait).
__device__ __forceinline__ bool phase_done(uint64_t& barrier, int parity) {
  uint32_t done;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(cast_smem_ptr_to_uint(&barrier)), "r"(parity)
      : "memory");
  return done != 0;
}

__device__ __forceinline__ unsigned long long load_slot(const unsigned long long* slot) {
  return cuda::atomic_ref<const unsigned long long, cuda::thread_scope_device>(*slot).load(cuda::memory_order_relaxed);
}

// The poller warp's wait for a row: returns, once every slot of the row is published, lane j's combination of
// slots j, j + 32, ... in that order (then a fixed shuffle tree: the same statistics in every CTA). Rows of up
// to 32 * kPollRegs chunks keep what they have seen in registers and issue every missing slot's load at once,
// so a poll costs one L2 round trip; longer rows reload the row each poll.
constexpr int kPollRegs = 8;
__device__ MaxSum poll_row(const unsigned long long* row_slots, int64_t chunks_per_row, int lane) {
  if (chunks_per_row <= 32 * kPollRegs) {
    unsigned long long seen[kPollRegs];
    uint32_t missing = 0;
    CUTE_UNROLL
    for (int i = 0; i < kPollRegs; ++i)
      if (lane + 32 * i < chunks_per_row) missing |= 1u << i;
    for (;;) {
      CUTE_UNROLL
      for (int i = 0; i < kPollRegs; ++i)
        if (missing >> i & 1) seen[i] = load_slot(&row_slots[lane + 32 * i]);
      CUTE_UNROLL
      for (int i = 0; i < kPollRegs; ++i)
        if ((missing >> i & 1) && published(seen[i])) missing &= ~(1u << i);
      if (__all_sync(0xffffffffu, missing == 0)) break;
      __nanosleep(64);
    }
    MaxSum v{-INFINITY, 0.f};
    CUTE_UNROLL
    for (int i = 0; i < kPollRegs; ++i)
      if (lane + 32 * i < chunks_per_row) v = combine(v, unpack(seen[i]));
    return v;
  }
  for (;;) {
    MaxSum v{-INFINITY, 0.f};
    bool all = true;
    for (int64_t j = lane; j < chunks_per_row; j += 32) {
      const unsigned long long w = load_slot(&row_slots[j]);
      all = all && published(w);
      v = combine(v, unpack(w));
    }
    if (__all_sync(0xffffffffu, all)) return v;
    __nanosleep(64);
  }
}

__device__ __forceinline__ void compute_sync() { asm volatile("bar.sync 1, %0;" ::"n"(kCompute) : "memory"); }

enum Step : int { kDone, kFold, kNormalise, kWait };

__global__ void __launch_bounds__(kThreads, 1)
    softmax_ticket(const float4* __restrict__ x, float4* __restrict__ y, int64_t rows, int64_t chunks_per_row,
                   unsigned long long* ticket, unsigned long long* slots) {
  extern __shared__ __align__(128) float4 stage_buf[];
  __shared__ alignas(8) uint64_t full[kStages];   // the copy landed (or, with no chunk, the producer arrived)
  __shared__ alignas(8) uint64_t empty[kStages];  // the compute warps are done with the stage
  __shared__ alignas(8) uint64_t ready[kStages];  // the poller has the stage's row statistics
  __shared__ int64_t chunk_of[kStages];           // -1: the tickets ran out
  __shared__ MaxSum stats_of[kStages];
  __shared__ MaxSum warp_parts[kComputeWarps];
  __shared__ float warp_max_of[kStages][kComputeWarps];  // EXP_FAST_FOLD: each warp's max in each stage
  __shared__ int step[2];

  const int64_t total = rows * chunks_per_row;
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(make_shape(Int<kChunkVecs>{}, total)));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(make_shape(Int<kChunkVecs>{}, total)));
  Tensor sX = make_tensor(make_smem_ptr(stage_buf), make_layout(make_shape(Int<kChunkVecs>{}, Int<kStages>{})));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      initialize_barrier(full[s], 1);
      initialize_barrier(empty[s], 1);
      initialize_barrier(ready[s], 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (warp == kProducerWarp) {
    if (lane != 0) return;
    // Stage s's k-th fill waits for its (k-1)-th emptying. Stages refill in ring order, the order the compute
    // warps empty them, so tickets sit in the ring oldest-first from the compute warps' head. Every stage
    // found empty takes its ticket in one atomicAdd (a ticket is only ever taken into an empty stage: a
    // ticket held without a stage could be the one chunk its own CTA's oldest row waits for).
    auto is_empty = [&](int64_t k) {
      return k < kStages || phase_done(empty[k % kStages], static_cast<int>((k / kStages - 1) & 1));
    };
    TRACE_DECL(t_empty); TRACE_DECL(t_ticket); TRACE_DECL(t_mark);
    for (int64_t k = 0;;) {
      TRACE_MARK(t_mark);
      if (k >= kStages) wait_barrier(empty[k % kStages], static_cast<int>((k / kStages - 1) & 1));
      TRACE_ADD(t_empty, t_mark);
      int n = 1;
      while (n < kStages && is_empty(k + n)) ++n;
      const int64_t first = static_cast<int64_t>(atomicAdd(ticket, static_cast<unsigned long long>(n)) + 1ull);
      TRACE_USE(first);
      TRACE_ADD(t_ticket, t_mark);
      for (int i = 0; i < n; ++i, ++k) {  // the memset left the ticket at ~0: the first is 0
        const int s = static_cast<int>(k % kStages);
        const int64_t c = first + i;
        if (c >= total) {
          chunk_of[s] = -1;
          arrive_barrier(full[s]);  // releases chunk_of: the stage "lands" empty, and that ends the consumers
          TRACE_PRINT("producer", "wait-empty", t_empty, "ticket", t_ticket, "-", 0ll);
          return;
        }
        chunk_of[s] = c;
        // The stage was last read through the generic proxy; the bulk copy writes it through the async one.
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        set_barrier_transaction_bytes(full[s], kChunkBytes);
        SM90_BULK_COPY_G2S::copy(&gX(0, c), &full[s], &sX(0, s), kChunkBytes);
      }
    }
  }

  if (warp == kPollerWarp) {
    TRACE_DECL(t_full); TRACE_DECL(t_poll); TRACE_DECL(t_mark);
    for (int64_t k = 0;; ++k) {
      const int s = static_cast<int>(k % kStages);
      const int lap = static_cast<int>((k / kStages) & 1);
      TRACE_MARK(t_mark);
      wait_barrier(full[s], lap);
      TRACE_ADD(t_full, t_mark);
      const int64_t c = chunk_of[s];
      if (c < 0) {
        if (lane == 0) TRACE_PRINT("poller", "wait-full", t_full, "poll", t_poll, "-", 0ll);
        return;
      }
      MaxSum v = poll_row(slots + (c / chunks_per_row) * chunks_per_row, chunks_per_row, lane);
      TRACE_ADD(t_poll, t_mark);
      v = warp_combine(v);
      if (lane == 0) {
        stats_of[s] = v;
        arrive_barrier(ready[s]);  // release: stats_of[s] before the compute warps' acquire
      }
      __syncwarp();
    }
  }

  // The compute warps. Thread 0 decides each step from shared memory only; `step` alternates between two
  // words so that one barrier a step suffices.
  int head = 0;    // the stage of the oldest chunk
  int folded = 0;  // the chunks from `head` on, around the ring, that are folded
  uint32_t full_parity = 0, ready_parity = 0;  // bit s: the phase of stage s's barrier to wait for next
  TRACE_DECL(t_step[4]); TRACE_DECL(t_mark); TRACE_MARK(t_mark);
  [[maybe_unused]] int traced = kWait;
  [[maybe_unused]] int storing = -1;  // EXP_BULK_STORE, thread 0: the stage whose bulk store may still read it
  for (int iteration = 0;; ++iteration) {
    if (threadIdx.x == 0) { TRACE_ADD(t_step[traced], t_mark); }
    if (threadIdx.x == 0) {
      int next = kWait;
      const int f = (head + folded) % kStages;
      if (folded > 0 && phase_done(ready[head], (ready_parity >> head) & 1)) {
        next = kNormalise;
      } else if (folded < kStages && phase_done(full[f], (full_parity >> f) & 1)) {
        next = chunk_of[f] >= 0 ? kFold : (folded == 0 ? kDone : kWait);
      }
      step[iteration & 1] = next;
      traced = next;
    }
    compute_sync();
    const int now = step[iteration & 1];
    if (now == kDone) {
#if EXP_BULK_STORE
      if (threadIdx.x == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");  // the stores are done
#endif
      if (threadIdx.x == 0) TRACE_PRINT("compute", "wait", t_step[kWait], "fold", t_step[kFold], "normalise", t_step[kNormalise]);
      break;
    }
    if (now == kWait) {
#if EXP_BULK_STORE
      if (threadIdx.x == 0 && storing >= 0) {
        tma_store_wait<0>();
        arrive_barrier(empty[storing]);
        storing = -1;
      }
#endif
      __nanosleep(32);
      continue;
    }
    if (now == kFold) {
      const int s = (head + folded) % kStages;
      wait_barrier(full[s], (full_parity >> s) & 1);  // complete already: each thread's acquire of the bytes
      full_parity ^= 1u << s;
#if EXP_FAST_FOLD
      // Each warp's max first (no exponentials), then exp(x - warp max) once per element -- independent, no
      // rescaling chain -- kept in the stage for the normalise (softmax), summed without rescaling; the
      // warps' (max, sum) pairs meet in warp 0 by a fixed shuffle tree.
      constexpr int kVecs = kChunkVecs / kCompute;
      float4 v[kVecs];
      CUTE_UNROLL
      for (int k = 0; k < kVecs; ++k) v[k] = sX(threadIdx.x + k * kCompute, s);
      float m = -INFINITY;
      CUTE_UNROLL
      for (int k = 0; k < kVecs; ++k) m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
      for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
      float sum = 0.f;
      if (m != -INFINITY) {
        CUTE_UNROLL
        for (int k = 0; k < kVecs; ++k) {
          float4 e{__expf(v[k].x - m), __expf(v[k].y - m), __expf(v[k].z - m), __expf(v[k].w - m)};
          sum += (e.x + e.y) + (e.z + e.w);
#if !EXP_LOG
          sX(threadIdx.x + k * kCompute, s) = e;
#endif
        }
      }
#if !EXP_LOG
      else {
        CUTE_UNROLL
        for (int k = 0; k < kVecs; ++k) sX(threadIdx.x + k * kCompute, s) = float4{0.f, 0.f, 0.f, 0.f};
      }
#endif
      for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
      if (lane == 0) {
        warp_parts[warp] = MaxSum{m, sum};
        warp_max_of[s][warp] = m;
      }
      compute_sync();
      if (warp == 0) {
        MaxSum part = lane < kComputeWarps ? warp_parts[lane] : MaxSum{-INFINITY, 0.f};
        for (int offset = kComputeWarps / 2; offset > 0; offset /= 2)
          part = combine(part, MaxSum{__shfl_xor_sync(0xffffffffu, part.max, offset),
                                      __shfl_xor_sync(0xffffffffu, part.sum, offset)});
        if (lane == 0) {
          cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> slot(slots[chunk_of[s]]);
          slot.store(pack(part), cuda::memory_order_relaxed);
        }
      }
#else
      MaxSum acc{-INFINITY, 0.f};
      CUTE_UNROLL
      for (int k = 0; k < kChunkVecs / kCompute; ++k) acc = fold(acc, sX(threadIdx.x + k * kCompute, s));
      acc = warp_combine(acc);
      if (lane == 0) warp_parts[warp] = acc;
      compute_sync();
      if (threadIdx.x == 0) {
        MaxSum part{-INFINITY, 0.f};
        for (int w = 0; w < kComputeWarps; ++w) part = combine(part, warp_parts[w]);
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> slot(slots[chunk_of[s]]);
        slot.store(pack(part), cuda::memory_order_relaxed);
      }
#endif
      ++folded;
      continue;
    }
    // kNormalise the oldest chunk with its row's statistics from the poller.
    wait_barrier(ready[head], (ready_parity >> head) & 1);  // complete already: each thread's acquire of stats_of
    ready_parity ^= 1u << head;
    const MaxSum stats = stats_of[head];
    const int64_t c = chunk_of[head];
#if EXP_LOG
    const float log_sum = logf(stats.sum);  // log_softmax(x) = (x - max) - log(sum)
#elif EXP_FAST_FOLD
    // The stage holds exp(x - this warp's max): y = that * exp(warp max - row max) / sum.
    const float warp_max = warp_max_of[head][warp];
    const float scale = warp_max == -INFINITY ? 0.f : __expf(warp_max - stats.max) / stats.sum;
#else
    const float inv = 1.f / stats.sum;
#endif
    CUTE_UNROLL
    for (int k = 0; k < kChunkVecs / kCompute; ++k) {
      const int v = threadIdx.x + k * kCompute;
      float4 a = sX(v, head);
#if EXP_LOG
      a.x = (a.x - stats.max) - log_sum;
      a.y = (a.y - stats.max) - log_sum;
      a.z = (a.z - stats.max) - log_sum;
      a.w = (a.w - stats.max) - log_sum;
#elif EXP_FAST_FOLD
      a.x *= scale;
      a.y *= scale;
      a.z *= scale;
      a.w *= scale;
#else
      a.x = __expf(a.x - stats.max) * inv;
      a.y = __expf(a.y - stats.max) * inv;
      a.z = __expf(a.z - stats.max) * inv;
      a.w = __expf(a.w - stats.max) * inv;
#endif
#if EXP_BULK_STORE
      sX(v, head) = a;
    }
    // Each thread's writes to the stage visible to the async proxy, then one bulk store of the chunk. The
    // stage is handed back once the store has read it: at the next normalise (the store before it, by then
    // long done) or the next idle step, so thread 0 does not wait on its own store.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    compute_sync();
    if (threadIdx.x == 0) {
      SM90_BULK_COPY_S2G::copy(&sX(0, head), &gY(0, c), kChunkBytes);
      tma_store_arrive();
      if (storing >= 0) {
        tma_store_wait<1>();
        arrive_barrier(empty[storing]);
      }
      storing = head;
    }
#else
      gY(v, c) = a;
    }
    compute_sync();  // every compute thread has read the stage (and stats_of, chunk_of) before it is refilled
    if (threadIdx.x == 0) arrive_barrier(empty[head]);
#endif
    head = (head + 1) % kStages;
    --folded;
  }
}

struct WorkspacePlan {
  int64_t rows, chunks_per_row;
  size_t bytes;
};

// Workspace: the ticket (8 bytes), then a (max, sum) slot per chunk.
bool plan(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs, int32_t num_outputs,
          WorkspacePlan& l) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].rank < 1) return false;
  const int64_t n = inputs[0].shape[inputs[0].rank - 1];
  if (n <= 0 || n % (kChunkBytes / 4) != 0) return false;
  l.rows = cutegen::numel(inputs[0]) / n;
  l.chunks_per_row = n / (kChunkBytes / 4);
  l.bytes = 8 + static_cast<size_t>(l.rows * l.chunks_per_row) * 8;
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
  // All-ones: the ticket at ~0 (its first atomicAdd returns ~0, ticket 0) and every slot unpublished.
  cudaError_t err = cudaMemsetAsync(workspace, 0xff, l.bytes, stream);
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
      static_cast<unsigned long long*>(workspace), reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(workspace) + 8));
  return static_cast<int>(cudaGetLastError());
}
