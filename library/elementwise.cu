// Library kernel: y = op(x), elementwise over one contiguous tensor of any size, generic over a device
// functor. Instantiated here for ReLU on fp32 (problems/relu.py, problems/relu_large.py); for another
// pointwise op, replace `Op` (and `Element`): the kernels below never name the operation.
//
// CuTe structure: the flat tensor is viewed as (kTile, num_tiles), kTile = threads * vector * unroll.
// Each thread's slice of a tile is a static (vector, unroll) sub-tensor, recast to words of up to 128 bits,
// so every load and store is a wide access with `unroll` independent loads in flight. No copy atom is
// needed for that, so the file includes only <cute/tensor_impl.hpp>: CuTe's copy atoms bring its MMA
// atoms with them, 4-5 s more of every compile (benchmarks/results.md, "Compile times").
// Launch shape: one pass (a CTA per tile) or grid-stride over tiles with a few CTAs per SM. What is
// left after the last whole tile, or a tensor not 16-byte aligned, goes through a scalar CuTe loop.
//
// Knobs (docs/tuning.md), prefixed EW_ because a knob is also a macro defined before every header:
// `cutegen tune problems/relu.py library/elementwise.cu` tries them.
#include <cutegen/kernel.h>

#include <cute/tensor_impl.hpp>

// cutegen:knob EW_THREADS in {128, 256, 512, 1024}
#ifndef EW_THREADS
#define EW_THREADS 256
#endif
// Elements per access group: 4 fp32 = one 128-bit access, 8 = two (for 16-bit types, 8 and 16).
// cutegen:knob EW_VEC in {4, 8}
#ifndef EW_VEC
#define EW_VEC 4
#endif
// The defaults are what measured fastest on the H200 for KernelBench 19's 12.9 GB ReLU: one 16-byte
// vector per thread, a CTA per 1024 values, one pass — 3.015 ms of events against 3.164 with four
// vectors per thread and 3.389 grid-stride; eager PyTorch 3.038 (benchmarks/results.md).
// Many small CTAs keep more loads in flight per SM than few large ones waiting on their own unrolled loads.
// cutegen:knob EW_UNROLL in {1, 2, 4, 8}
#ifndef EW_UNROLL
#define EW_UNROLL 1
#endif
// cutegen:knob EW_GRID_STRIDE in {0, 1}
#ifndef EW_GRID_STRIDE
#define EW_GRID_STRIDE 0
#endif
// cutegen:knob EW_BLOCKS_PER_SM in {4, 8, 16}
#ifndef EW_BLOCKS_PER_SM
#define EW_BLOCKS_PER_SM 8
#endif
// Registers: EW_VEC * EW_UNROLL values live per thread.
// cutegen:require EW_VEC * EW_UNROLL <= 32
// A one-pass launch ignores EW_BLOCKS_PER_SM: one value of it is enough.
// cutegen:require EW_GRID_STRIDE == 1 || EW_BLOCKS_PER_SM == 8

using namespace cute;

namespace elementwise {

// The operation: a small struct with a __device__ call operator. NaN stays NaN, like torch.relu.
struct Relu {
  __device__ __forceinline__ float operator()(float v) const { return v < 0.f ? 0.f : v; }
};
using Op = Relu;
using Element = float;
constexpr cutegen_dtype kDtype = CUTEGEN_FLOAT32;

constexpr int kThreads = EW_THREADS;
constexpr int kVec = EW_VEC;
constexpr int kUnroll = EW_UNROLL;
constexpr int kTile = kThreads * kVec * kUnroll;
static_assert(kVec * sizeof(Element) % 16 == 0 || 16 % (kVec * sizeof(Element)) == 0,
              "EW_VEC elements must fill whole 16-byte accesses or a power-of-two part of one");

// A thread's vector as one access: 16 bytes, or the whole vector where it is narrower.
template <class T>
using Word = uint_bit_t<(kVec * sizeof(T) * 8 < 128 ? kVec * sizeof(T) * 8 : 128)>;

template <class T, class F>
__global__ void __launch_bounds__(kThreads) map_tiles(const T* __restrict__ x, T* __restrict__ y, int64_t num_tiles, F op) {
  // (kTile, num_tiles): mode 0 is one tile, mode 1 picks the tile.
  auto tiles = make_layout(make_shape(Int<kTile>{}, num_tiles));
  Tensor gX = make_tensor(make_gmem_ptr(x), tiles);
  Tensor gY = make_tensor(make_gmem_ptr(y), tiles);
  // One tile as (vector, thread, unroll): thread t owns kVec contiguous values every kThreads*kVec elements,
  // so a warp's accesses are contiguous for every unroll step.
  auto tv = make_layout(make_shape(Int<kVec>{}, Int<kThreads>{}, Int<kUnroll>{}),
                        make_stride(Int<1>{}, Int<kVec>{}, Int<kVec * kThreads>{}));
  Tensor frag = make_tensor<T>(make_shape(Int<kVec>{}, Int<kUnroll>{}));
  for (int64_t t = blockIdx.x; t < num_tiles; t += gridDim.x) {
    Tensor tX = make_tensor(gX(_, t).data(), tv)(_, threadIdx.x, _);  // (kVec, kUnroll), static layout
    Tensor tY = make_tensor(gY(_, t).data(), tv)(_, threadIdx.x, _);
    Tensor wFrag = recast<Word<T>>(frag);  // the same registers, as words
    Tensor wX = recast<Word<T>>(tX);
    CUTE_UNROLL
    for (int i = 0; i < size(wFrag); ++i) wFrag(i) = wX(i);
    CUTE_UNROLL
    for (int i = 0; i < size(frag); ++i) frag(i) = op(frag(i));
    Tensor wY = recast<Word<T>>(tY);
    CUTE_UNROLL
    for (int i = 0; i < size(wFrag); ++i) wY(i) = wFrag(i);
  }
}

// Elements [begin, n): the tail after the last whole tile, or everything when the tensors are not aligned.
template <class T, class F>
__global__ void map_rest(const T* __restrict__ x, T* __restrict__ y, int64_t begin, int64_t n, F op) {
  Tensor gX = make_tensor(make_gmem_ptr(x + begin), make_layout(n - begin));
  Tensor gY = make_tensor(make_gmem_ptr(y + begin), make_layout(n - begin));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < size(gX); i += int64_t(gridDim.x) * blockDim.x)
    gY(i) = op(gX(i));
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

int sm_count() {
  int sms = 132, device = 0;
  if (cudaGetDevice(&device) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms;
}

}  // namespace elementwise

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  using namespace elementwise;
  if (num_inputs != 1 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const cutegen_tensor& in = inputs[0];
  const cutegen_tensor& out = outputs[0];
  const Element* x = cutegen::data_as<const Element>(in, kDtype);
  Element* y = cutegen::data_as<Element>(out, kDtype);
  if (!x || !y || cutegen::numel(in) != cutegen::numel(out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(in) || !cutegen::is_contiguous(out)) return CUTEGEN_ERROR_UNSUPPORTED;

  const int64_t n = cutegen::numel(in);
  if (n == 0) return CUTEGEN_OK;
  const int64_t full_tiles = (aligned16(x) && aligned16(y)) ? n / kTile : 0;
  if (full_tiles > 0) {
    // One pass: a CTA per tile. Grid-stride: a few CTAs per SM, each walking many tiles.
    const int64_t limit = EW_GRID_STRIDE ? int64_t(sm_count()) * EW_BLOCKS_PER_SM : int64_t(0x7fffffff);
    const int64_t grid = std::min<int64_t>(full_tiles, limit);
    map_tiles<<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(x, y, full_tiles, Op{});
  }
  const int64_t begin = full_tiles * kTile;
  if (begin < n) {
    const int64_t rest = n - begin;
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>((rest + 255) / 256, int64_t(sm_count()) * 8));
    map_rest<<<grid, 256, 0, stream>>>(x, y, begin, n, Op{});
  }
  return static_cast<int>(cudaGetLastError());
}
