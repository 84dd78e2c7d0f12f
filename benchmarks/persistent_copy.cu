// Benchmark kernel (not a library kernel): a persistent copy by bulk asynchronous copies, to measure how
// the order a persistent grid hands out work in affects its DRAM rate (benchmarks/results.md,
// calls 3 and 6). One thread per CTA loads EXP_CHUNK_KB chunks into EXP_STAGES shared-memory stages
// (cp.async.bulk global->shared, an mbarrier per stage) and stores each back (cp.async.bulk shared->global).
// The chunk a CTA takes next: a fixed stride (CTA b: chunks b, b + grid, ...), a contiguous run per CTA
// (EXP_BLOCKED=1), or the next one from a global counter (EXP_TICKET=1; a static __device__ counter reset
// per call: not re-entrant, fine for a benchmark, not for a library kernel -- the softmax's SMC_ORDERED
// keeps its counter in the workspace).
//
// Run it as a contract kernel on any fp32 input whose size is a multiple of the chunk, e.g. KernelBench 23's:
//   { echo "#define EXP_TICKET 1"; cat benchmarks/persistent_copy.cu; } > /tmp/copy_ticket.cu
//   cutegen compile --json /tmp/copy_ticket.cu      # prints the library path
//   python3 benchmarks/pointwise_variants.py 23_Softmax.py /path/to/kernel.so --reps 10
// (the deviation column is then the softmax's, not the copy's: a copy is not a softmax).
#include <cutegen/kernel.h>
#include <cute/tensor.hpp>
#include <cute/arch/copy_sm90_desc.hpp>
#include <cute/arch/copy_sm90_tma.hpp>
using namespace cute;
#ifndef EXP_SMS
#define EXP_SMS 132
#endif
#ifndef EXP_STAGES
#define EXP_STAGES 4
#endif
#ifndef EXP_CHUNK_KB
#define EXP_CHUNK_KB 32
#endif
#ifndef EXP_BLOCKED
#define EXP_BLOCKED 0
#endif
#ifndef EXP_TICKET
#define EXP_TICKET 0
#endif
// EXP_SLICES: the cluster softmax's address order without its statistics -- CTA b is rank b % EXP_RANKS of
// group b / EXP_RANKS; a row is EXP_RANKS slices of EXP_STAGES chunks, group g takes rows g, g + groups, ...
// and rank k copies slice k of each (softmax_cluster.cu's order, by bulk copies instead of per-thread ones).
#ifndef EXP_SLICES
#define EXP_SLICES 0
#endif
#ifndef EXP_RANKS
#define EXP_RANKS 16
#endif
__device__ unsigned long long g_next_chunk;  // EXP_TICKET: chunks handed out in order
constexpr int kChunk = EXP_CHUNK_KB * 1024;
constexpr int kStages = EXP_STAGES;
__global__ void __launch_bounds__(32) copy_tma(const float* __restrict__ x, float* __restrict__ y, int64_t nchunks) {
  extern __shared__ __align__(128) unsigned char buf[];
  __shared__ alignas(8) uint64_t bar[kStages];
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(nchunks * (kChunk / 4)));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(nchunks * (kChunk / 4)));
  if (nchunks < 0) gY(0) = gX(0);  // never
  if (threadIdx.x != 0) return;
  for (int s = 0; s < kStages; ++s) initialize_barrier(bar[s], 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const int64_t first = blockIdx.x, stride = gridDim.x;
  int64_t chunk_of[kStages];
  auto load = [&](int64_t i) -> bool {
    const int s = int(i % kStages);
    const int64_t per = (nchunks + stride - 1) / stride;  // EXP_BLOCKED: a contiguous run of chunks per CTA
    const int64_t groups = stride / EXP_RANKS, row = first / EXP_RANKS + (i / kStages) * groups;
    const int64_t c = EXP_SLICES    ? (row < nchunks / (EXP_RANKS * kStages)
                                           ? (row * EXP_RANKS + first % EXP_RANKS) * kStages + i % kStages
                                           : nchunks)
                      : EXP_TICKET  ? int64_t(atomicAdd(&g_next_chunk, 1ull))
                      : EXP_BLOCKED ? (i < per ? first * per + i : nchunks)
                                    : first + i * stride;
    chunk_of[s] = c;
    if (c >= nchunks) return false;
    set_barrier_transaction_bytes(bar[s], kChunk);
    SM90_BULK_COPY_G2S::copy(&gX(c * (kChunk / 4)), &bar[s], buf + s * kChunk, kChunk);
    return true;
  };
  int64_t loaded = 0;
  while (loaded < kStages && load(loaded)) ++loaded;
  for (int64_t i = 0; i < loaded; ++i) {
    const int s = int(i % kStages);
    wait_barrier(bar[s], int((i / kStages) & 1));
    SM90_BULK_COPY_S2G::copy(buf + s * kChunk, &gY(chunk_of[s] * (kChunk / 4)), kChunk);
    tma_store_arrive();
    if (i >= 1 && loaded == i - 1 + kStages) {
      tma_store_wait<1>();  // chunk i - 1's store has read its stage
      if (load(loaded)) ++loaded;
    }
  }
  tma_store_wait<0>();
}
extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t, const cutegen_tensor* outputs, int32_t,
                               cudaStream_t stream) {
  const float* x = cutegen::data_as<const float>(inputs[0], CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(outputs[0], CUTEGEN_FLOAT32);
  const int64_t bytes = cutegen::numel(inputs[0]) * 4;
  if (bytes % kChunk != 0) return CUTEGEN_ERROR_UNSUPPORTED;
  const int smem = kStages * kChunk;
  cudaFuncSetAttribute(copy_tma, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (EXP_TICKET) {
    void* counter = nullptr;
    cudaGetSymbolAddress(&counter, g_next_chunk);
    cudaMemsetAsync(counter, 0, sizeof(unsigned long long), stream);
  }
  copy_tma<<<EXP_SMS, 32, smem, stream>>>(x, y, bytes / kChunk);
  return static_cast<int>(cudaGetLastError());
}
