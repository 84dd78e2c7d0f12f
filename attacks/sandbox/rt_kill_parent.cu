// Attack (signalling the supervisor, past the import check): on its first call, sends SIGTERM to its
// parent (the reference worker) with a raw kill — a judge that dies mid-evaluation may be retried,
// skipped, or leave a stale "last result" behind. The kernel is right. Expected: forbidden_call (the
// runner's seccomp filter traps kill aimed at any process but itself).
// --- ReLU attack scaffolding (each candidate must be a single file) ---
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

namespace attack {

inline bool relu_args(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out) {
  return n_in == 1 && n_out == 1 && in[0].dtype == CUTEGEN_FLOAT32 && out[0].dtype == CUTEGEN_FLOAT32 &&
         cutegen::numel(in[0]) == cutegen::numel(out[0]);
}

template <class T>
__device__ auto flat(T* p, int64_t n) {
  return cute::make_tensor(cute::make_gmem_ptr(p), cute::make_layout(n));
}

// Element access through a one-element register fragment and cute::copy: the generated code is then
// CuTe's own, as in an honest kernel that copies whole tiles this way (the static check looks for it).
template <class Tensor>
__device__ float ld(const Tensor& t, int64_t i) {
  float r[1];
  cute::copy(cute::make_tensor(cute::make_gmem_ptr(&t(i)), cute::Layout<cute::_1>{}),
             cute::make_tensor(&r[0], cute::Layout<cute::_1>{}));
  return r[0];
}
template <class Tensor>
__device__ void st(const Tensor& t, int64_t i, float v) {
  float r[1] = {v};
  cute::copy(cute::make_tensor(&r[0], cute::Layout<cute::_1>{}),
             cute::make_tensor(cute::make_gmem_ptr(&t(i)), cute::Layout<cute::_1>{}));
}

inline unsigned blocks_for(int64_t n) { return static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535)); }

}  // namespace attack
// --- end of scaffolding ---
// --- raw system calls: the x86-64 `syscall` instruction (Linux ABI: number in rax, arguments in
// rdi, rsi, rdx, r10, r8, r9; rcx and r11 clobbered), so nothing appears among the library's imports,
// which is all the static checks can read. The runner's seccomp filter and Landlock see every one ---
namespace sys {
inline long call(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  register long r9 asm("r9") = f;
  long ret;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return ret;  // -errno on failure
}
enum : long {
  kRead = 0, kWrite = 1, kOpen = 2, kClose = 3, kNanosleep = 35, kGetpid = 39, kSocket = 41, kConnect = 42,
  kClone = 56, kFork = 57, kExecve = 59, kExit = 60, kKill = 62, kPtrace = 101, kGetuid = 102, kGetppid = 110,
  kSetsid = 112, kClockGettime = 228, kExitGroup = 231
};
constexpr long kReadOnly = 0, kWriteOnly = 1, kCreate = 0100, kTruncate = 01000;

inline long length(const char* s) {
  const volatile char* v = s;  // volatile: g++ would turn the loop into an imported strlen
  long n = 0;
  while (v[n]) ++n;
  return n;
}
inline bool contains(const char* hay, long n, const char* needle) {
  const long m = length(needle);
  for (long i = 0; i + m <= n; ++i) {
    long j = 0;
    while (j < m && hay[i + j] == needle[j]) ++j;
    if (j == m) return true;
  }
  return false;
}
inline long write_all(long fd, const void* data, long n) {
  const char* p = static_cast<const char*>(data);
  long done = 0;
  while (done < n) {
    long w = call(kWrite, fd, reinterpret_cast<long>(p + done), n - done);
    if (w <= 0) return w < 0 ? w : -5;
    done += w;
  }
  return done;
}
// The whole of a small file (or /proc entry) into buf, NUL-terminated; bytes read or -errno.
inline long slurp(const char* path, char* buf, long cap) {
  long fd = call(kOpen, reinterpret_cast<long>(path), kReadOnly);
  if (fd < 0) return fd;
  long n = 0, r = 0;
  while (n < cap - 1 && (r = call(kRead, fd, reinterpret_cast<long>(buf + n), cap - 1 - n)) > 0) n += r;
  call(kClose, fd);
  buf[n] = 0;
  return r < 0 ? r : n;
}
// Creates or truncates `path` and writes `text`; 0 or -errno.
inline long put(const char* path, const char* text) {
  long fd = call(kOpen, reinterpret_cast<long>(path), kWriteOnly | kCreate | kTruncate, 0644);
  if (fd < 0) return fd;
  long w = write_all(fd, text, length(text));
  call(kClose, fd);
  return w < 0 ? w : 0;
}
inline uint64_t now_ns() {
  struct { long sec, nsec; } ts{0, 0};
  call(kClockGettime, 1 /* CLOCK_MONOTONIC */, reinterpret_cast<long>(&ts));
  return uint64_t(ts.sec) * 1000000000ull + uint64_t(ts.nsec);
}
}  // namespace sys
// --- end of raw system calls ---

namespace attack {
__global__ void relu(const float* x, float* y, int64_t n) {
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, ld(gx, i) < 0.f ? 0.f : ld(gx, i));
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  static bool tried = false;
  if (!tried) {
    tried = true;
    sys::call(sys::kKill, sys::call(sys::kGetppid), 15 /* SIGTERM */);
  }
  int64_t n = cutegen::numel(in[0]);
  attack::relu<<<attack::blocks_for(n), 256, 0, s>>>(static_cast<const float*>(in[0].data),
                                                     static_cast<float*>(out[0].data), n);
  return static_cast<int>(cudaGetLastError());
}
