// Kernels with known performance characters, profiled by scripts/capture-ncu-fixtures to make the
// ncu fixtures the profile stage's tests read. Each one exists to light up one signal of the summary:
//
//   scale_scalar        memory-bound elementwise, 4-byte loads (narrow accesses)
//   scale_vec4          the same with 16-byte loads
//   gather_strided      one float per 128-byte line: uncoalesced loads
//   transpose_conflicts 32x32 shared tile read down columns: 32-way bank conflicts
//   fma_gemm            register-hungry FMA GEMM (8x8 outputs per thread): register-limited occupancy,
//                       no tensor-pipe use
//   wmma_gemm           tensor-core GEMM (WMMA fp16 -> fp32)
//   cutegen_harness_fill  a harness-style kernel that the kernel-name filter must exclude
//
// `main` runs two "calls" (like the runner calling cutegen_forward twice), so every kernel has two
// launches, and a cudaMemsetAsync (which ncu must not report: it is not a kernel).
// Build: nvcc -O3 -gencode arch=compute_90a,code=sm_90a -o fixture_kernels fixture_kernels.cu
#include <cstdio>
#include <cstdlib>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e = (x);                                                                \
    if (e != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

__global__ void cutegen_harness_fill(float* p, size_t n, float v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] = v;
}

__global__ void scale_scalar(const float* __restrict__ x, float* __restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    y[i] = 2.f * x[i];
}

__global__ void scale_vec4(const float4* __restrict__ x, float4* __restrict__ y, size_t n4) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
    float4 v = x[i];
    y[i] = make_float4(2.f * v.x, 2.f * v.y, 2.f * v.z, 2.f * v.w);
  }
}

// Thread i reads x[i * 32]: each 4-byte load touches its own 32-byte sector.
__global__ void gather_strided(const float* __restrict__ x, float* __restrict__ y, size_t n_out) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n_out; i += size_t(gridDim.x) * blockDim.x)
    y[i] = x[i * 32];
}

// Tile transpose without padding: the column read hits one bank 32 times.
__global__ void transpose_conflicts(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[32][32];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[size_t(y) * n + x];
  __syncthreads();
  int tx = blockIdx.y * 32 + threadIdx.x, ty = blockIdx.x * 32 + threadIdx.y;
  out[size_t(ty) * n + tx] = tile[threadIdx.x][threadIdx.y];
}

// C = A * B, row-major, n x n; 16x16 threads, each computes an 8x8 block of C from shared tiles.
constexpr int kT = 8, kBlock = 16 * kT, kK = 16;
__global__ void __launch_bounds__(256) fma_gemm(const float* __restrict__ A, const float* __restrict__ B,
                                                float* __restrict__ C, int n) {
  __shared__ float As[kK][kBlock];
  __shared__ float Bs[kK][kBlock];
  float acc[kT][kT] = {};
  int row0 = blockIdx.y * kBlock, col0 = blockIdx.x * kBlock;
  int tid = threadIdx.y * 16 + threadIdx.x;
  for (int k0 = 0; k0 < n; k0 += kK) {
    for (int i = tid; i < kK * kBlock; i += 256) {
      int kk = i / kBlock, mm = i % kBlock;
      As[kk][mm] = A[size_t(row0 + mm) * n + k0 + kk];
      Bs[kk][mm] = B[size_t(k0 + kk) * n + col0 + mm];
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kK; ++kk) {
      float a[kT], b[kT];
#pragma unroll
      for (int i = 0; i < kT; ++i) a[i] = As[kk][threadIdx.y * kT + i];
#pragma unroll
      for (int j = 0; j < kT; ++j) b[j] = Bs[kk][threadIdx.x * kT + j];
#pragma unroll
      for (int i = 0; i < kT; ++i)
#pragma unroll
        for (int j = 0; j < kT; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kT; ++i)
#pragma unroll
    for (int j = 0; j < kT; ++j) C[size_t(row0 + threadIdx.y * kT + i) * n + col0 + threadIdx.x * kT + j] = acc[i][j];
}

// One warp per 16x16 tile of C, straight from global memory (no staging): tensor pipe in use, but fed slowly.
__global__ void wmma_gemm(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C, int n) {
  using namespace nvcuda;
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int tiles = n / 16;
  int tm = warp / tiles, tn = warp % tiles;
  if (tm >= tiles) return;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fill_fragment(c, 0.f);
  for (int k = 0; k < n; k += 16) {
    wmma::load_matrix_sync(a, A + size_t(tm) * 16 * n + k, n);
    wmma::load_matrix_sync(b, B + size_t(k) * n + tn * 16, n);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(C + size_t(tm) * 16 * n + tn * 16, c, n, wmma::mem_row_major);
}

int main() {
  const size_t n = size_t(1) << 26;  // 256 MiB of floats: well past the 60 MB L2
  const int g = 2048;                // square GEMM size
  float *x, *y, *a, *b, *c;
  half *ha, *hb;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMalloc(&a, size_t(g) * g * sizeof(float)));
  CHECK(cudaMalloc(&b, size_t(g) * g * sizeof(float)));
  CHECK(cudaMalloc(&c, size_t(g) * g * sizeof(float)));
  CHECK(cudaMalloc(&ha, size_t(g) * g * sizeof(half)));
  CHECK(cudaMalloc(&hb, size_t(g) * g * sizeof(half)));
  cutegen_harness_fill<<<1024, 256>>>(x, n, 1.f);
  cutegen_harness_fill<<<1024, 256>>>(a, size_t(g) * g, 0.5f);
  cutegen_harness_fill<<<1024, 256>>>(b, size_t(g) * g, 0.25f);
  CHECK(cudaMemset(ha, 0, size_t(g) * g * sizeof(half)));
  CHECK(cudaMemset(hb, 0, size_t(g) * g * sizeof(half)));
  CHECK(cudaDeviceSynchronize());
  for (int call = 0; call < 2; ++call) {
    CHECK(cudaMemsetAsync(y, 0xFF, n * sizeof(float)));  // the runner's output poisoning
    scale_scalar<<<132 * 16, 256>>>(x, y, n);
    scale_vec4<<<132 * 16, 256>>>(reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), n / 4);
    gather_strided<<<132 * 16, 256>>>(x, y, n / 32);
    transpose_conflicts<<<dim3(g / 32, g / 32), dim3(32, 32)>>>(a, c, g);
    fma_gemm<<<dim3(g / kBlock, g / kBlock), dim3(16, 16)>>>(a, b, c, g);
    wmma_gemm<<<(g / 16) * (g / 16) / 8, 256>>>(ha, hb, c, g);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  }
  std::printf("fixture kernels ran\n");
  return 0;
}
