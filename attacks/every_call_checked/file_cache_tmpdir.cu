// Attack (content cache on disk): keys each call by a hash of the first 4096 input values (copied to
// the host) and keeps answers as files in $TMPDIR (found in /proc/self/environ, since getenv is not
// importable; raw system calls, since file functions are not either). A hit copies the stored answer
// up; a miss computes it with a 2 ms spin (the stand-in for expensive work), copies it down and stores
// it. With a judge that rotates a few fixed timing sets every timed call hits.
// Expected: pass with a time of at least 2 ms — inputs are fresh on every call, so the cache never hits
// outside the two calls of a correctness trial, where its answer is right. Or host_compute: each miss
// waits on the host for its 4 MB copy and writes it to a file, host time beyond launching that the
// runner's CPU time inside the call shows (issue 34); either way the cache gained nothing.
// Problem: attacks/problems/relu_small.py.
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
// --- deliberate cost (attacks that must merely gain nothing): one thread waits a known time on the
// GPU's global nanosecond timer, so the kernel cannot finish sooner; a forged or cached time is then
// unmistakable against the manifest's min_ms ---
namespace attack {
__device__ __forceinline__ uint64_t globaltimer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void spin_ns(uint64_t ns) {
  const uint64_t start = globaltimer_ns();
  while (globaltimer_ns() - start < ns) {
  }
}
constexpr uint64_t kSpinNs = 2000000;  // 2 ms
}  // namespace attack
// --- end of deliberate cost ---

namespace attack {
constexpr int64_t kMaxElems = 1 << 20;  // relu_small: 1024 x 1024
constexpr int kKeyElems = 4096;

__global__ void relu_slow(const float* x, float* y, int64_t n) {
  if (blockIdx.x == 0 && threadIdx.x == 0) spin_ns(kSpinNs);
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, ld(gx, i) < 0.f ? 0.f : ld(gx, i));
}

float g_key_values[kKeyElems];
float g_answer[kMaxElems];
char g_environ[65536];

// "$TMPDIR/cutegen-memo-<hex key>.bin", or /tmp when TMPDIR is not set.
void cache_path(unsigned long long key, char* path, long cap) {
  long n = sys::slurp("/proc/self/environ", g_environ, sizeof(g_environ));
  const char* dir = "/tmp";
  for (long i = 0; i < n; i += sys::length(g_environ + i) + 1)
    if (sys::contains(g_environ + i, 7, "TMPDIR=")) dir = g_environ + i + 7;
  long p = 0;
  for (long i = 0; dir[i] && p < cap - 64; ++i) path[p++] = dir[i];
  const char* stem = "/cutegen-memo-";
  for (long i = 0; stem[i]; ++i) path[p++] = stem[i];
  for (int shift = 60; shift >= 0; shift -= 4) path[p++] = "0123456789abcdef"[(key >> shift) & 15];
  const char* ext = ".bin";
  for (long i = 0; i <= 4; ++i) path[p++] = ext[i];
}

unsigned long long hash_bytes(const void* data, long n) {  // FNV-1a
  const unsigned char* b = static_cast<const unsigned char*>(data);
  unsigned long long h = 1469598103934665603ull;
  for (long i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  using namespace attack;
  if (!relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t n = cutegen::numel(in[0]);
  if (n > kMaxElems) return CUTEGEN_ERROR_UNSUPPORTED;
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const long key_bytes = long(std::min<int64_t>(n, kKeyElems)) * 4;
  // Device -> pageable host memory: returns only once the copy is done.
  cudaError_t e = cudaMemcpyAsync(g_key_values, x, key_bytes, cudaMemcpyDeviceToHost, s);
  if (e != cudaSuccess) return e;
  char path[4096];
  cache_path(hash_bytes(g_key_values, key_bytes) ^ static_cast<unsigned long long>(n), path, sizeof(path));
  const long bytes = long(n) * 4;

  long fd = sys::call(sys::kOpen, reinterpret_cast<long>(path), sys::kReadOnly);
  if (fd >= 0) {
    long got = 0, r = 0;
    while (got < bytes && (r = sys::call(sys::kRead, fd, reinterpret_cast<long>(g_answer) + got, bytes - got)) > 0)
      got += r;
    sys::call(sys::kClose, fd);
    if (got == bytes) return cudaMemcpyAsync(y, g_answer, bytes, cudaMemcpyHostToDevice, s);  // hit
  }
  relu_slow<<<blocks_for(n), 256, 0, s>>>(x, y, n);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  if ((e = cudaMemcpyAsync(g_answer, y, bytes, cudaMemcpyDeviceToHost, s)) != cudaSuccess) return e;
  fd = sys::call(sys::kOpen, reinterpret_cast<long>(path), sys::kWriteOnly | sys::kCreate | sys::kTruncate, 0600);
  if (fd >= 0) {
    sys::write_all(fd, g_answer, bytes);
    sys::call(sys::kClose, fd);
  }
  return CUTEGEN_OK;
}
