// Library kernel: RMSNorm over dimension 1 of a contiguous fp32 tensor (B, C, *), no affine parameters:
//   y[b, :, s] = x[b, :, s] / sqrt(mean(x[b, :, s]^2) + eps),  eps = 1e-5
// (problems/rmsnorm_large.py, KernelBench 36: (112, 64, 512, 512), C = 64 features).
//
// Why it is fast. The reduction runs across channels, which are H*W values (1 MB) apart, while the
// spatial positions are contiguous. So a thread owns RN_VEC adjacent spatial positions and walks the
// C channels: at every channel a warp reads 32 * RN_VEC consecutive floats (whole 128-byte lines,
// coalesced), and the thread keeps all C values in registers (C <= 64: 64 * RN_VEC registers), so x is
// read from DRAM once and y written once -- the floor -- with no shared memory and no barrier. All C
// loads of a thread are issued before the first is used (the channel loop is unrolled over a static
// bound with a run-time guard), which puts 64 loads per thread in flight: enough bytes per SM to keep
// DRAM busy. The squares are summed in 8 independent partial sums (more ILP, smaller rounding error
// than one running sum), and y = x / rms uses IEEE division, as PyTorch does.
//
// Other sizes stay correct: any B and spatial size; C <= 64 takes the register path, larger C a
// streaming path (the thread reads its C values twice, the second time mostly from L1/L2); an odd
// spatial size or misaligned tensors use RN_VEC = 1 accesses. Knobs (docs/tuning.md) are prefixed RN_.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

// 128 threads of 2 positions by default: on KernelBench 36 on the H200, 3.822 ms of events (judged 3.934,
// 90% of the floor) against 4.661 for 256 x 1, the first default, whose profile showed DRAM at 67% of its
// peak with 4-byte accesses (benchmarks/results.md).
// cutegen:knob RN_THREADS in {128, 256, 512}
#ifndef RN_THREADS
#define RN_THREADS 128
#endif
// Adjacent spatial positions per thread (one 4- or 8-byte access per channel).
// cutegen:knob RN_VEC in {1, 2}
#ifndef RN_VEC
#define RN_VEC 2
#endif
// Registers: 64 * RN_VEC values per thread; 2 with 512 threads would leave too few for 2 CTAs per SM.
// cutegen:require RN_VEC * RN_THREADS <= 512

using namespace cute;

namespace rmsnorm_channels {

constexpr int kThreads = RN_THREADS;
constexpr int kMaxChannels = 64;  // channels kept in registers
constexpr int kPartials = 8;
constexpr float kEps = 1e-5f;

// x and y as (kVec, positions / kVec, C, B). A thread owns one (kVec, p, :, b) column.
template <int kVec>
__device__ auto channel_layout(int64_t batch, int64_t channels, int64_t inner) {
  return make_layout(make_shape(Int<kVec>{}, inner / kVec, channels, batch),
                     make_stride(Int<1>{}, Int<kVec>{}, inner, channels * inner));
}

template <int kVec, class Src, class Dst>
__device__ __forceinline__ void move(Src const& src, Dst&& dst) {
  if constexpr (kVec > 1)
    copy_aligned(src, dst);  // one 8-byte access for kVec == 2
  else
    copy(src, dst);
}

// kInRegisters: C <= kMaxChannels, each value loaded once into registers.
template <int kVec, bool kInRegisters>
__global__ void __launch_bounds__(kThreads)
    rmsnorm(const float* __restrict__ x, float* __restrict__ y, int64_t batch, int64_t channels, int64_t inner) {
  const auto layout = channel_layout<kVec>(batch, channels, inner);
  Tensor gX = make_tensor(make_gmem_ptr(x), layout);
  Tensor gY = make_tensor(make_gmem_ptr(y), layout);
  const int64_t columns = size<1>(gX) * batch;
  const float inv_c = 1.f / static_cast<float>(channels);
  for (int64_t col = blockIdx.x * int64_t(kThreads) + threadIdx.x; col < columns; col += int64_t(gridDim.x) * kThreads) {
    const int64_t p = col % size<1>(gX), b = col / size<1>(gX);  // adjacent threads: adjacent positions
    Tensor cX = gX(_, p, _, b);  // (kVec, C)
    Tensor cY = gY(_, p, _, b);
    float partial[kPartials][kVec] = {};
    if constexpr (kInRegisters) {
      Tensor vals = make_tensor<float>(Shape<Int<kVec>, Int<kMaxChannels>>{});
      CUTE_UNROLL
      for (int c = 0; c < kMaxChannels; ++c)
        if (c < channels) move<kVec>(cX(_, c), vals(_, c));
      CUTE_UNROLL
      for (int c = 0; c < kMaxChannels; ++c)
        if (c < channels) {
          CUTE_UNROLL
          for (int i = 0; i < kVec; ++i) partial[c % kPartials][i] += vals(i, c) * vals(i, c);
        }
      float rms[kVec];
      CUTE_UNROLL
      for (int i = 0; i < kVec; ++i) {
        float sum = 0.f;
        CUTE_UNROLL
        for (int k = 0; k < kPartials; ++k) sum += partial[k][i];
        rms[i] = sqrtf(sum * inv_c + kEps);
      }
      CUTE_UNROLL
      for (int c = 0; c < kMaxChannels; ++c)
        if (c < channels) {
          CUTE_UNROLL
          for (int i = 0; i < kVec; ++i) vals(i, c) = vals(i, c) / rms[i];
          move<kVec>(vals(_, c), cY(_, c));
        }
    } else {
      Tensor v = make_tensor<float>(Shape<Int<kVec>>{});
      for (int64_t c0 = 0; c0 < channels; c0 += kPartials) {
        CUTE_UNROLL
        for (int k = 0; k < kPartials; ++k)  // static k: `partial` stays in registers
          if (c0 + k < channels) {
            move<kVec>(cX(_, c0 + k), v);
            CUTE_UNROLL
            for (int i = 0; i < kVec; ++i) partial[k][i] += v(i) * v(i);
          }
      }
      float rms[kVec];
      CUTE_UNROLL
      for (int i = 0; i < kVec; ++i) {
        float sum = 0.f;
        CUTE_UNROLL
        for (int k = 0; k < kPartials; ++k) sum += partial[k][i];
        rms[i] = sqrtf(sum * inv_c + kEps);
      }
      for (int64_t c = 0; c < channels; ++c) {
        move<kVec>(cX(_, c), v);
        CUTE_UNROLL
        for (int i = 0; i < kVec; ++i) v(i) = v(i) / rms[i];
        move<kVec>(v, cY(_, c));
      }
    }
  }
}

bool aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <int kVec, bool kInRegisters>
int launch(const float* x, float* y, int64_t batch, int64_t channels, int64_t inner, cudaStream_t stream) {
  const int64_t columns = batch * (inner / kVec);
  const int64_t grid = std::min<int64_t>((columns + kThreads - 1) / kThreads, 0x7fffffff);
  rmsnorm<kVec, kInRegisters><<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(x, y, batch, channels, inner);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace rmsnorm_channels

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  using namespace rmsnorm_channels;
  if (num_inputs != 1 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const cutegen_tensor &in = inputs[0], &out = outputs[0];
  const float* x = cutegen::data_as<const float>(in, CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(out, CUTEGEN_FLOAT32);
  if (!x || !y || in.rank < 2 || cutegen::numel(in) != cutegen::numel(out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(in) || !cutegen::is_contiguous(out)) return CUTEGEN_ERROR_UNSUPPORTED;
  if (cutegen::numel(in) == 0) return CUTEGEN_OK;
  const int64_t batch = in.shape[0], channels = in.shape[1];
  const int64_t inner = cutegen::numel(in) / (batch * channels);  // 1 for a (B, C) tensor
  const bool in_registers = channels <= kMaxChannels;
  if (RN_VEC > 1 && inner % RN_VEC == 0 && aligned(x, 4 * RN_VEC) && aligned(y, 4 * RN_VEC))
    return in_registers ? launch<RN_VEC, true>(x, y, batch, channels, inner, stream)
                        : launch<RN_VEC, false>(x, y, batch, channels, inner, stream);
  return in_registers ? launch<1, true>(x, y, batch, channels, inner, stream)
                      : launch<1, false>(x, y, batch, channels, inner, stream);
}
