// Library kernel: y = log_softmax(x, dim=-1) = (x - max) - log(sum(exp(x - max))) for a contiguous fp32
// tensor (..., N), any N, with each row read from DRAM exactly once when it fits on a thread-block
// cluster's shared memory. This is library/softmax_cluster.cu with kLogSoftmax = true (the
// contract allows no local includes, so the two files are kept identical apart from that and this
// header; python/tests/test_library_kernels.py checks it). Below, "softmax" reads "log-softmax".
//
// Why it is fast. Softmax needs the row's (max, sum of exp) before it can write anything, so a
// one-CTA-per-row kernel reads every row twice (once for the statistics, once to normalise) or keeps
// the row on chip. A KernelBench row (393216 fp32 = 1.5 MB) is far larger than one SM's shared memory
// (227 KB), but not than a cluster's: 16 CTAs of 96 KB each hold it, two CTAs on an SM (8 CTAs of
// 192 KB, the portable cluster size, where 16 cannot be placed).
//   1. load: each CTA of the cluster copies its slice of the row into shared memory with cp.async
//      (16-byte vectors, .cg: no L1 allocation), every copy issued before the first wait, so a CTA has
//      its whole 96 KB slice in flight -- DRAM sees enough outstanding bytes per SM to run at its
//      peak. The copies are committed in SMC_STAGES groups and the (max, sum) of stage s is computed
//      as soon as stage s lands -- for every row after the first, inside the last row's store loop
//      (SMC_EARLY_FOLD), overlapping the SFU work with the stores and copies in flight.
//   2. statistics: the online-softmax recurrence per thread (one rescale per 4-vector), warp
//      shuffles, a fixed-order sum over warps, then the cluster's CTAs exchange their (max, sum)
//      through distributed shared memory (one warp reads the peers' pairs, one lane each, and combines
//      them in a fixed order, so all CTAs of a row compute bit-identical statistics: deterministic).
//   3. write: each CTA normalises its slice straight from shared memory and stores 16-byte vectors;
//      right after storing a vector, the thread copies the next row's vector into the slot it came from
//      (SMC_PREFETCH), so the next row is in flight while this one is written and DRAM never waits for
//      a CTA's statistics or cluster barrier.
// Total DRAM traffic: one read and one write of the tensor, the floor. The grid is persistent
// (SMC_PERSISTENT): as many clusters as fit at once, each looping over rows, so clusters are not
// relaunched per row (a cluster needs all its CTAs' SMs free at once to start) and a warp starts
// loading its next row as soon as it has stored its part of the last one.
// Every thread only reads back the vectors it copied itself, so the slice needs no CTA barrier; the
// cluster barrier orders the statistics exchange. The exchange slots are double-buffered by row
// parity, so one cluster barrier per row is enough. A CTA's shared memory must outlive its peers'
// reads of it: each CTA arrives on one more cluster barrier as soon as it has read the last row's
// pairs, and waits on it only before exiting, when its peers have long arrived -- no CTA idles at
// exit for the slowest CTA's stores.
//
// Other sizes stay correct: short rows use a smaller cluster (down to one CTA); rows whose slice does
// not fit in shared memory (or misaligned tensors, N % 4 != 0) take the streaming path of the same
// kernel -- statistics from a first read, output from a second -- instead of returning an error.
//
// Launched with cudaLaunchKernelExC (cluster dimension attribute) and opted in to more than 48 KB of
// dynamic shared memory with cudaFuncSetAttribute. Knobs (docs/tuning.md) are prefixed SMC_.
#include <cutegen/kernel.h>

#include <cooperative_groups.h>

// cute/tensor.hpp first: the copy atoms below build on what it declares (cutegen/kernel.h includes only
// cute/tensor_impl.hpp).
#include <cute/tensor.hpp>
#include <cute/arch/cluster_sm90.hpp>
#include <cute/arch/copy_sm80.hpp>
#include <cute/atom/copy_atom.hpp>

// The largest cluster a row is spread over (shorter rows shrink it on their own, so smaller values
// would only push 1.5 MB rows onto the streaming path). 16 is beyond the portable size (allowed on
// H100/H200 with cudaFuncAttributeNonPortableClusterSizeAllowed; where a GPU cannot place it the launch
// falls back to 8); with SMC_THREADS <= 512 it puts two 96 KB CTAs on an SM, so one CTA's load overlaps
// another's statistics and stores. 16 with SMC_PREFETCH by default: on KernelBench 23 in-process on the
// H200, 3.557 ms against 3.917-3.931 for 8 without prefetch (benchmarks/results.md).
// cutegen:knob SMC_CLUSTER in {8, 16}
#ifndef SMC_CLUSTER
#define SMC_CLUSTER 16
#endif
// 256 by default: the tuner's choice on KernelBench 23, judged on 23 and 24 on the H200 (softmax 4.06 ms
// against 4.38 with 1024, log-softmax 3.995 against 4.389; benchmarks/results.md).
// cutegen:knob SMC_THREADS in {256, 512, 1024}
#ifndef SMC_THREADS
#define SMC_THREADS 256
#endif
// cp.async groups a slice is loaded in: the statistics of one group overlap the loads of the next.
// cutegen:knob SMC_STAGES in {1, 2, 4, 8}
#ifndef SMC_STAGES
#define SMC_STAGES 4
#endif
// 1: a persistent grid of as many clusters as fit at once, each looping over rows; 0: one cluster per row.
// cutegen:knob SMC_PERSISTENT in {0, 1}
#ifndef SMC_PERSISTENT
#define SMC_PERSISTENT 1
#endif

// 1: the next row's copies are issued from this row's store loop (each vector's copy right after the
// vector is stored from the same shared-memory slot); 0: a row's copies start after the last row's stores.
// cutegen:knob SMC_PREFETCH in {0, 1}
#ifndef SMC_PREFETCH
#define SMC_PREFETCH 1
#endif

// 1: exp of the shifted values (x - max <= 0) by the hardware's ex2.approx on the argument times log2(e)
// (__expf: two instructions where expf's range reduction takes about eight); 0: expf. __expf's error
// grows with |x - max| (CUDA documents 2 + 1.17 |x - max| ulp, against expf's 1), but only where
// exp(x - max) is small, so an output's absolute error stays at PyTorch's scale; the judge's error ratio on
// both input kinds decides, as for any tuned variant. 1 by default: on KernelBench 23 in-process on the
// H200, 3.438-3.482 ms against 3.553-3.579 with expf; judged 3.609 ms, 84.0% of the floor, where expf was
// 3.657 (log-softmax, whose stores use no exp: 3.728 against 3.763) -- benchmarks/results.md.
// cutegen:knob SMC_FAST_EXP in {0, 1}
#ifndef SMC_FAST_EXP
#define SMC_FAST_EXP 1
#endif

// Vectors per thread whose stores wait for the next row: the last SMC_HOLD vectors of a thread's slice
// are normalised into registers (their slots take the next row's copies at once, as every slot does) and
// stored while the CTA waits on the next row's cluster barrier, when an SM would otherwise have no stores
// to send. 0: every vector is stored in the row's own store loop. Measured on KernelBench 23/24's size
// in-process on the H200 (benchmarks/results.md): log-softmax 3.516 ms with 8 against
// 3.685 with 0, but softmax 3.707-3.772 with 4 or 8 against 3.438 -- so 0 by default, and a knob for
// `cutegen tune`. (Without any cluster barrier at all, wrong statistics, the softmax took 3.584 ms: the
// barrier's wait is not what separates it from a copy.)
// cutegen:knob SMC_HOLD in {0, 4, 8}
#ifndef SMC_HOLD
#define SMC_HOLD 0
#endif
// 1: rows handed out in order -- after its first row, a cluster takes its next row from a counter in the
// workspace (contract version 2: the file then defines cutegen_workspace_bytes and cutegen_forward_ws)
// when it exchanges the current row's statistics, so the rows in flight stay a narrow window moving
// through memory; 0: cluster c takes rows c, c + clusters, ... (a fixed stride; the clusters drift apart).
// Why: on the H200 a persistent bulk copy of KernelBench 23's tensor ran 3.30 ms with chunks assigned by
// a fixed stride and 3.07-3.08 with chunks from a counter, on 112 or 132 SMs (the one-pass elementwise
// kernel: 3.00; benchmarks/results.md). It did not carry over: on KernelBench 23
// in-process 3.557 ms against 3.509 with the stride (log-softmax 3.754 against 3.733; with SMC_HOLD=8
// 3.581 against 3.691), and without any statistics (a bound) rows taken per rank from counters ran
// 3.41 against 3.31 (benchmarks/results.md) -- so 0, a knob for `cutegen tune`.
// cutegen:knob SMC_ORDERED in {0, 1}
#ifndef SMC_ORDERED
#define SMC_ORDERED 0
#endif
// Stages of the next row folded inside this row's store loop: 0, the next row's statistics are computed
// after the store loop, when its copies have landed; L > 0, right after the store loop commits its stage s,
// it waits for the next row's stage s - L (at most L stages still in flight) and folds it, so only the
// last L stages are folded after the loop. Why: an SM's two CTAs belong to the same cluster and row, so
// while they fold the whole slice (about 1.5 us of exp per row on 192 KB, beside a 12 us row) and meet at
// the cluster barrier, the SM sends nothing to DRAM; with the statistics dependency removed altogether
// (wrong output, a bound) the same traffic ran 3.26-3.31 ms against 3.47 with the fold after the loop.
// The fold order per thread is unchanged: the statistics are bit-identical for every value of the knob.
// 2 by default. Measured on KernelBench 23/24 in-process on the H200 (benchmarks/results.md):
// the softmax 3.478-3.509 ms, level with 0 (which compiles to the kernel before the knob: 3.464-3.514),
// and the log-softmax 3.604-3.615 (1: 3.539-3.551, which `cutegen tune` tries) against 3.69-3.73 with 0.
// 8 stages: 4.0-4.2.
// cutegen:knob SMC_EARLY_FOLD in {0, 1, 2}
#ifndef SMC_EARLY_FOLD
#define SMC_EARLY_FOLD 2
#endif
// Held vectors and early folds are features of the prefetching store loop; a fold lag of L needs more
// than L stages.
// cutegen:require SMC_PREFETCH == 1 || SMC_HOLD == 0
// cutegen:require SMC_PREFETCH == 1 || SMC_EARLY_FOLD == 0
// cutegen:require SMC_EARLY_FOLD < SMC_STAGES

using namespace cute;
namespace cg = cooperative_groups;

namespace softmax_cluster {

constexpr bool kLogSoftmax = true;  // softmax_cluster.cu: false
constexpr int kThreads = SMC_THREADS;
constexpr int kWarps = kThreads / 32;
constexpr int kStages = SMC_STAGES;
constexpr int kMaxCluster = SMC_CLUSTER;
constexpr int kHold = SMC_HOLD;
constexpr int kFoldLag = SMC_EARLY_FOLD;
// A cluster is halved while every CTA would still get fewer than this many values: short rows are
// better served by fewer, fuller CTAs.
constexpr int64_t kMinValuesPerCta = int64_t(kThreads) * 4 * 8;

struct MaxSum {
  float max;
  float sum;
};
// The kernel's static shared memory (scratch, slots, result; row_slots, row_after), which counts against
// the opt-in limit together with the dynamic slice.
constexpr size_t kStaticSmemBytes = sizeof(MaxSum) * (kWarps + 3) + sizeof(int64_t) * 3;

// exp(d) for d = x - max <= 0 (SMC_FAST_EXP chooses how).
__device__ __forceinline__ float exp_shifted(float d) {
  if constexpr (SMC_FAST_EXP) return __expf(d);
  else return expf(d);
}

__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.max, b.max);
  if (m == -INFINITY) return {m, 0.f};  // both empty: avoid (-inf) - (-inf)
  return {m, a.sum * exp_shifted(a.max - m) + b.sum * exp_shifted(b.max - m)};
}

// Folds a vector of values into a running (max, sum) with one rescale of the old sum.
template <class Frag>
__device__ __forceinline__ MaxSum fold(MaxSum acc, Frag const& v) {
  float m = acc.max;
  CUTE_UNROLL
  for (int i = 0; i < size(v); ++i) m = fmaxf(m, v(i));
  if (m == -INFINITY) return acc;
  float sum = acc.sum * exp_shifted(acc.max - m);
  CUTE_UNROLL
  for (int i = 0; i < size(v); ++i) sum += exp_shifted(v(i) - m);
  return {m, sum};
}

// The CTA's (max, sum) in every thread, combined in a fixed order (deterministic).
__device__ MaxSum block_reduce(MaxSum v, MaxSum* scratch) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = combine(v, MaxSum{__shfl_xor_sync(0xffffffffu, v.max, offset), __shfl_xor_sync(0xffffffffu, v.sum, offset)});
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  MaxSum total{-INFINITY, 0.f};
  for (int w = 0; w < kWarps; ++w) total = combine(total, scratch[w]);
  __syncthreads();  // `scratch` is reused by the next row
  return total;
}

// The row's (max, sum): every CTA publishes its pair in its own shared memory; then lane k of warp 0
// reads rank k's pair through distributed shared memory and the warp combines them with a fixed
// shuffle tree -- the same inputs in the same lanes in every CTA, so all CTAs of the row get
// bit-identical statistics. `result` passes them to the CTA's other warps.
// `while_waiting` runs between this CTA's arrival on the cluster barrier and its wait (SMC_HOLD's stores).
// SMC_ORDERED: rank 0 also takes the cluster's next row from `next_row` (tickets count rows after the
// grid's first ones) and publishes it beside its pair; every CTA reads it into `*row_after`.
template <class F>
__device__ MaxSum cluster_reduce(MaxSum mine, MaxSum* slots, MaxSum* result, int parity, F&& while_waiting,
                                 unsigned long long* next_row, int64_t* row_slots, int64_t* row_after) {
  static_assert(kMaxCluster <= 32, "one lane per CTA of the cluster");
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) {
    slots[parity] = mine;
    if (SMC_ORDERED && cluster.block_rank() == 0) row_slots[parity] = int64_t(gridDim.y) + int64_t(atomicAdd(next_row, 1ull));
  }
  cluster_arrive();  // release: this CTA's slot is visible to the peers once they have waited
  while_waiting();
  cluster_wait();    // acquire: every peer's slot is written and visible
  if (threadIdx.x < 32) {
    const unsigned lane = threadIdx.x;
    MaxSum v = lane < cluster.num_blocks() ? cluster.map_shared_rank(slots, lane)[parity] : MaxSum{-INFINITY, 0.f};
    for (int offset = 16; offset > 0; offset /= 2)
      v = combine(v, MaxSum{__shfl_xor_sync(0xffffffffu, v.max, offset), __shfl_xor_sync(0xffffffffu, v.sum, offset)});
    if (lane == 0) *result = v;
    if (SMC_ORDERED && lane == 0) *row_after = cluster.map_shared_rank(row_slots, 0)[parity];
  }
  __syncthreads();  // the next write of `result` comes after the next row's block_reduce barriers
  return *result;
}

// One vector of the output from the row's statistics: exp(x - max) / sum, or (x - max) - log(sum).
template <class Frag>
__device__ __forceinline__ void normalise(Frag& frag, MaxSum stats, float inv, float log_sum) {
  CUTE_UNROLL
  for (int i = 0; i < size(frag); ++i)
    frag(i) = kLogSoftmax ? (frag(i) - stats.max) - log_sum : exp_shifted(frag(i) - stats.max) * inv;
}

template <int kVec, class Src, class Dst>
__device__ __forceinline__ void move(Src const& src, Dst&& dst) {
  if constexpr (kVec == 4)
    copy_aligned(src, dst);  // one 16-byte access
  else
    copy(src, dst);
}

// grid (cluster size, rows), cluster (cluster size, 1, 1): the CTA of rank k owns vectors
// [k * slice_vecs, (k + 1) * slice_vecs) of each row its cluster handles.
// kResident: the slice is staged in shared memory (kVec == 4 only) and the row is read once.
// Registers for two CTAs per SM (two 96 KB slices with SMC_CLUSTER=16) when they are 512 threads or fewer.
template <int kVec, bool kResident>
__global__ void __launch_bounds__(kThreads, kThreads <= 512 ? 2 : 1)
    softmax_rows_cluster(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t n, int64_t slice_vecs,
                         unsigned long long* __restrict__ next_row) {
  static_assert(!kResident || kVec == 4, "the resident path copies 16-byte vectors");
  extern __shared__ float4 smem_slice[];  // float4: 16-byte aligned
  __shared__ MaxSum scratch[kWarps];
  __shared__ MaxSum slots[2];
  __shared__ MaxSum result;
  __shared__ int64_t row_slots[2];  // SMC_ORDERED: rank 0's ticket for the row after, by row parity
  __shared__ int64_t row_after;

  const int64_t nvec = n / kVec;
  const int64_t begin = std::min<int64_t>(int64_t(cg::this_cluster().block_rank()) * slice_vecs, nvec);
  const int64_t count = std::min<int64_t>(begin + slice_vecs, nvec) - begin;
  // (kVec, vectors, rows): a row is a sequence of kVec-wide vectors.
  auto layout = make_layout(make_shape(Int<kVec>{}, nvec, rows), make_stride(Int<1>{}, Int<kVec>{}, n));
  Tensor gX = make_tensor(make_gmem_ptr(x), layout);
  Tensor gY = make_tensor(make_gmem_ptr(y), layout);
  Tensor sX = make_tensor(make_smem_ptr(reinterpret_cast<float*>(smem_slice)),
                          make_layout(make_shape(Int<kVec>{}, kResident ? slice_vecs : int64_t(0))));
  Tensor frag = make_tensor<float>(Shape<Int<kVec>>{});
  // Thread t owns vectors t, t + kThreads, ... of the slice: iteration k of a thread is vector t + k * kThreads.
  // A resident slice fits in shared memory, so 32-bit indices do (fewer registers in the unrolled stages).
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
  if constexpr (kResident && SMC_PREFETCH) {
    if (blockIdx.y < rows) issue_loads(blockIdx.y);
  }

  // SMC_HOLD: this thread's last kHold normalised vectors of the previous row (held(_, j) is its vector
  // iters - kHold + j when hold_valid[j]), stored by store_held.
  Tensor held = make_tensor<float>(Shape<Int<kVec>, Int<kHold == 0 ? 1 : kHold>>{});
  bool hold_valid[kHold == 0 ? 1 : kHold] = {};
  int64_t held_row = 0;
  auto store_held = [&]() {
    if constexpr (kHold > 0) {
      Tensor prevY = gY(_, _, held_row);
      CUTE_UNROLL
      for (int j = 0; j < kHold; ++j) {
        if (hold_valid[j]) move<kVec>(held(_, j), prevY(_, begin + threadIdx.x + (iters - kHold + j) * kThreads));
        hold_valid[j] = false;
      }
    }
  };

  // Folds stage s of the row now in this thread's slots into `acc`.
  auto fold_stage = [&](MaxSum acc, int s) {
    const int k_end = min((s + 1) * iters_per_stage, iters);
    for (int k = s * iters_per_stage; k < k_end; ++k) {
      const int v = threadIdx.x + k * kThreads;
      if (v < slice_count) {
        move<kVec>(sX(_, v), frag);
        acc = fold(acc, frag);
      }
    }
    return acc;
  };

  int parity = 0;
  MaxSum early{-INFINITY, 0.f};  // SMC_EARLY_FOLD: the stages of row r folded in the last row's store loop
  int early_stages = 0;
  for (int64_t r = blockIdx.y, r_next; r < rows; r = r_next, parity ^= 1) {
    Tensor rowX = gX(_, _, r);  // (kVec, nvec)
    Tensor rowY = gY(_, _, r);
    MaxSum acc = kFoldLag > 0 ? early : MaxSum{-INFINITY, 0.f};
    if constexpr (kResident) {
      if constexpr (!SMC_PREFETCH) issue_loads(r);
      for_each(make_int_sequence<kStages>{}, [&](auto stage) {
        constexpr int s = decltype(stage)::value;
        cp_async_wait<kStages - 1 - s>();  // stage s has landed (for this thread's copies)
        if constexpr (kFoldLag > 0) {
          if (s >= early_stages) acc = fold_stage(acc, s);
        } else {
          // Written out rather than through fold_stage: with it, SMC_EARLY_FOLD=0 compiled to other code
          // that ran 3.67 ms against 3.47 (benchmarks/results.md); this loop compiles to the
          // same SASS as the kernel before the knob (checked with cuobjdump -sass).
          const int k_end = min((s + 1) * iters_per_stage, iters);
          for (int k = s * iters_per_stage; k < k_end; ++k) {
            const int v = threadIdx.x + k * kThreads;
            if (v < slice_count) {
              move<kVec>(sX(_, v), frag);
              acc = fold(acc, frag);
            }
          }
        }
      });
    } else {
      for (int64_t v = threadIdx.x; v < count; v += kThreads) {
        move<kVec>(rowX(_, begin + v), frag);
        acc = fold(acc, frag);
      }
    }
    const MaxSum stats =
        cluster_reduce(block_reduce(acc, scratch), slots, &result, parity, store_held, next_row, row_slots, &row_after);
    r_next = SMC_ORDERED ? row_after : r + gridDim.y;  // the same in every CTA of the cluster
    if (r_next >= rows) cluster_arrive();  // the last row: this CTA is done reading its peers
    const float inv = 1.f / stats.sum;
    const float log_sum = logf(stats.sum);
    if constexpr (kResident && SMC_PREFETCH) {
      // Each vector stored, then the next row's vector copied into the slot it came from (only this
      // thread uses the slot), committed by stage as issue_loads does.
      const bool next = r_next < rows;
      Tensor nextX = gX(_, _, next ? r_next : r);
      // Held vectors (SMC_HOLD) are the last kHold of the thread's slice that lie in the last stage, so
      // the stage groups the next row waits on are unchanged.
      const int hold_begin = max(iters - kHold, (kStages - 1) * iters_per_stage);
      early = MaxSum{-INFINITY, 0.f};
      for_each(make_int_sequence<kStages>{}, [&](auto stage) {
        constexpr int s = decltype(stage)::value;
        const int k_end = min(min((s + 1) * iters_per_stage, iters), s == kStages - 1 ? hold_begin : iters);
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
        if constexpr (s == kStages - 1 && kHold > 0) {
          CUTE_UNROLL
          for (int j = 0; j < kHold; ++j) {
            const int k = iters - kHold + j;
            const int v = threadIdx.x + k * kThreads;
            hold_valid[j] = k >= hold_begin && v < slice_count;
            if (hold_valid[j]) {
              Tensor h = held(_, j);
              move<kVec>(sX(_, v), h);
              normalise(h, stats, inv, log_sum);
              asm volatile("" ::: "memory");
              if (next) copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, float>{}, nextX(_, begin + v), sX(_, v));
            }
          }
          held_row = r;
          if (!next) store_held();  // the CTA's last row: no next barrier to wait on
        }
        if (next) cp_async_fence();
        if constexpr (kFoldLag > 0 && s >= kFoldLag) {
          if (next) {
            cp_async_wait<kFoldLag>();  // the next row's stage s - L has landed
            early = fold_stage(early, s - kFoldLag);
          }
        }
      });
      if constexpr (kFoldLag > 0) early_stages = next ? kStages - kFoldLag : 0;
    } else {
      for (int64_t v = threadIdx.x; v < count; v += kThreads) {
        if constexpr (kResident)
          move<kVec>(sX(_, v), frag);  // the vector this thread copied in: no barrier needed
        else
          move<kVec>(rowX(_, begin + v), frag);
        normalise(frag, stats, inv, log_sum);
        move<kVec>(frag, rowY(_, begin + v));
      }
    }
  }
  cluster_wait();  // every peer has read this CTA's slots (they arrived after their last reads)
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

cudaLaunchConfig_t cluster_config(cudaLaunchAttribute* attr, int64_t grid_rows, int cluster, size_t smem,
                                  cudaStream_t stream) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(cluster), static_cast<unsigned>(grid_rows));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  config.attrs = attr;
  config.numAttrs = 1;
  return config;
}

// Sets the kernel's attributes for this launch shape and returns how many such clusters can be
// resident on the device at once (0: a cluster this size with this much shared memory per CTA does
// not fit a GPC).
template <int kVec, bool kResident>
cudaError_t resident_clusters(int cluster, size_t smem, int& clusters) {
  const void* kernel = reinterpret_cast<const void*>(&softmax_rows_cluster<kVec, kResident>);
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (err == cudaSuccess && cluster > 8)
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  if (err != cudaSuccess) return err;
  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t config = cluster_config(attr, 1, cluster, smem, nullptr);
  clusters = 0;
  return cudaOccupancyMaxActiveClusters(&clusters, kernel, &config);
}

// `clusters`: from resident_clusters for the same shape (which also set the kernel's attributes).
template <int kVec, bool kResident>
int launch(const float* x, float* y, unsigned long long* next_row, int64_t rows, int64_t n, int cluster, int64_t slice_vecs, size_t smem,
           int clusters, cudaStream_t stream) {
  // Persistent: as many clusters as fit at once, each looping over rows, so no cluster is torn down
  // and relaunched per row and a warp starts loading its next row as soon as it stored its last.
  const int64_t grid_rows = std::min<int64_t>(rows, SMC_PERSISTENT ? std::max(clusters, 1) : 65535);
  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t config = cluster_config(attr, grid_rows, cluster, smem, stream);
  void* args[] = {&x, &y, &rows, &n, &slice_vecs, &next_row};
  const cudaError_t err =
      cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(&softmax_rows_cluster<kVec, kResident>), args);
  return static_cast<int>(err != cudaSuccess ? err : cudaGetLastError());
}

}  // namespace softmax_cluster

// The entry point's body; `next_row` is SMC_ORDERED's counter (zeroed on `stream`), unused otherwise.
static int softmax_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                           int32_t num_outputs, unsigned long long* next_row, cudaStream_t stream) {
  using namespace softmax_cluster;
  if (num_inputs != 1 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const cutegen_tensor& in = inputs[0];
  const float* x = cutegen::data_as<const float>(in, CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(outputs[0], CUTEGEN_FLOAT32);
  if (!x || !y || in.rank < 1 || cutegen::numel(in) != cutegen::numel(outputs[0])) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(in) || !cutegen::is_contiguous(outputs[0])) return CUTEGEN_ERROR_UNSUPPORTED;
  const int64_t n = in.shape[in.rank - 1];
  if (n == 0 || cutegen::numel(in) == 0) return CUTEGEN_OK;
  const int64_t rows = cutegen::numel(in) / n;

  int cluster = kMaxCluster;
  while (cluster > 1 && n <= (cluster / 2) * kMinValuesPerCta) cluster /= 2;
  int clusters = 0;
  cudaError_t err = cudaSuccess;
  if (n % 4 != 0 || !aligned16(x) || !aligned16(y)) {
    if ((err = resident_clusters<1, false>(cluster, 0, clusters)) != cudaSuccess) return static_cast<int>(err);
    return launch<1, false>(x, y, next_row, rows, n, cluster, (n + cluster - 1) / cluster, 0, clusters, stream);
  }
  const int64_t slice_vecs = (n / 4 + cluster - 1) / cluster;
  const size_t slice_bytes = static_cast<size_t>(slice_vecs) * 16;
  int device = 0, optin = 0;
  err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (err != cudaSuccess) return static_cast<int>(err);
  if (slice_bytes + kStaticSmemBytes <= static_cast<size_t>(optin)) {
    if ((err = resident_clusters<4, true>(cluster, slice_bytes, clusters)) != cudaSuccess) return static_cast<int>(err);
    if (clusters > 0) return launch<4, true>(x, y, next_row, rows, n, cluster, slice_vecs, slice_bytes, clusters, stream);
  }
  if (cluster > 8) {
    // A GPU that cannot place a non-portable cluster of 16 (or not with this much shared memory per CTA):
    // the portable 8, with slices twice as large, before giving up on keeping the row resident.
    const int64_t vecs8 = (n / 4 + 7) / 8;
    const size_t bytes8 = static_cast<size_t>(vecs8) * 16;
    if (bytes8 + kStaticSmemBytes <= static_cast<size_t>(optin)) {
      if ((err = resident_clusters<4, true>(8, bytes8, clusters)) != cudaSuccess) return static_cast<int>(err);
      if (clusters > 0) return launch<4, true>(x, y, next_row, rows, n, 8, vecs8, bytes8, clusters, stream);
    }
  }
  // A slice too large for shared memory (or a cluster that size with it not fitting a GPC) streams the
  // row twice from global memory: slower, still exact.
  if ((err = resident_clusters<4, false>(cluster, 0, clusters)) != cudaSuccess) return static_cast<int>(err);
  return launch<4, false>(x, y, next_row, rows, n, cluster, slice_vecs, 0, clusters, stream);
}

#if SMC_ORDERED
// Contract version 2: the workspace holds the row counter, which the harness poisons before every call.
extern "C" size_t cutegen_workspace_bytes(const cutegen_tensor*, int32_t, const cutegen_tensor*, int32_t) {
  return 256;
}

extern "C" int cutegen_forward_ws(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                                  int32_t num_outputs, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  if (workspace == nullptr || workspace_bytes < sizeof(unsigned long long)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  auto* next_row = static_cast<unsigned long long*>(workspace);
  const cudaError_t err = cudaMemsetAsync(next_row, 0, sizeof(*next_row), stream);
  if (err != cudaSuccess) return static_cast<int>(err);
  return softmax_forward(inputs, num_inputs, outputs, num_outputs, next_row, stream);
}
#else
extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  return softmax_forward(inputs, num_inputs, outputs, num_outputs, nullptr, stream);
}
#endif
