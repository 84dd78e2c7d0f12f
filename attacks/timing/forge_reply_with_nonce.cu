// Attack (self-reported timing, with the nonce): the forged replies of forge_reply_* fail because
// they cannot know the nonce of the call they answer. This one can: the command line the runner read
// is still in its heap, so the kernel's host code finds it there ([heap] in /proc/self/maps, then a
// remembered address), writes a well-formed reply for the current call on the reply pipe (fd 3) the
// moment its kernel is launched, and points fd 3 at a pipe of its own so that the runner's true reply,
// written after the synchronisation, goes nowhere; the next call puts fd 3 back first. No event time
// is claimed, so the hidden-work check has nothing to compare. The kernel is a ReLU whose every
// output is written 0.5 ms after the call's first kernel starts, so the work truly ends then and not
// before. A supervisor that stopped its clock at the reply would time a few microseconds.
// Expected: pass with at least 0.4 ms — the worker's probe after the call waits for the GPU, and that
// wait is charged, so the early reply gains only its own lead on the kernel (its reply goes out some
// 0.05 ms after the launch) — or hidden_work, when most calls' charged wait passes 0.5 ms, or unwritten,
// if the probe and the gather are time-sliced in before 0.5 ms and read the poison. The first 24 calls (the correctness trials) are answered honestly; the nonce search
// runs on every call so that the current call's nonce is always the one not seen before.
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
constexpr uint64_t kLateNs = 500000;  // every output is written 0.5 ms after the call's first kernel starts
constexpr long kHonestCalls = 24;
constexpr long kReplyFd = 3;
constexpr long kNonceLen = 16;
constexpr long kSysDup = 32, kSysDup2 = 33, kSysPipe2 = 293;

__device__ uint64_t g_start[1];

__global__ void stamp_start() {
  auto start = flat(g_start, 1);
  start(threadIdx.x) = globaltimer_ns();
}

__global__ void relu_late(const float* x, float* y, int64_t n) {
  auto start = flat(g_start, 1);
  const uint64_t until = start(threadIdx.x * 0) + kLateNs;
  while (globaltimer_ns() < until) {
  }
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, ld(gx, i) < 0.f ? 0.f : ld(gx, i));
}

// ---- finding the current call's nonce in the runner's heap ----
char g_maps[1 << 16];
char g_seen[8192][kNonceLen];
long g_seen_count = 0;
const char* g_hint = nullptr;  // where a call command was found last time

bool same(const char* a, const char* b) {
  for (long i = 0; i < kNonceLen; ++i)
    if (a[i] != b[i]) return false;
  return true;
}
bool seen_before(const char* nonce) {
  for (long i = 0; i < g_seen_count; ++i)
    if (same(g_seen[i], nonce)) return true;
  return false;
}
void remember(const char* nonce) {
  if (seen_before(nonce) || g_seen_count == 8192) return;
  for (long i = 0; i < kNonceLen; ++i) g_seen[g_seen_count][i] = nonce[i];
  ++g_seen_count;
}
bool hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// At p a call command (`"call", "set"` as the worker's json.dumps writes it)? Its nonce, or nullptr.
const char* call_nonce_at(const char* p, const char* end) {
  const char* call = "\"call\", \"set\"";
  const char* key = "\"nonce\": \"";
  for (long i = 0; call[i]; ++i)
    if (p + i >= end || p[i] != call[i]) return nullptr;
  for (const char* q = p; q < p + 512 && q + 10 + kNonceLen < end; ++q) {
    long k = 0;
    while (key[k] && q[k] == key[k]) ++k;
    if (key[k]) continue;
    const char* n = q + k;
    for (long i = 0; i < kNonceLen; ++i)
      if (!hex(n[i])) return nullptr;
    return n[kNonceLen] == '"' ? n : nullptr;
  }
  return nullptr;
}

long hex_value(const char*& p) {
  long v = 0;
  for (; hex(*p); ++p) v = v * 16 + (*p <= '9' ? *p - '0' : *p - 'a' + 10);
  return v;
}

bool heap_range(const char*& lo, const char*& hi) {
  long n = sys::slurp("/proc/self/maps", g_maps, sizeof(g_maps));
  for (long line = 0; n > 0 && line < n;) {
    long end = line;
    while (end < n && g_maps[end] != '\n') ++end;
    if (sys::contains(g_maps + line, end - line, "[heap]")) {
      const char* p = g_maps + line;
      lo = reinterpret_cast<const char*>(hex_value(p));
      ++p;  // '-'
      hi = reinterpret_cast<const char*>(hex_value(p));
      return hi > lo;
    }
    line = end + 1;
  }
  return false;
}

// The nonce of the call being made: the one call command in the heap whose nonce was not seen before.
// Every nonce found is remembered, so the next call's is again the only new one.
const char* current_nonce() {
  static char current[kNonceLen];
  const char* lo = nullptr;
  const char* hi = nullptr;
  if (!heap_range(lo, hi)) return nullptr;
  if (g_hint && g_hint >= lo && g_hint < hi) {
    const char* n = call_nonce_at(g_hint, hi);
    if (n && !seen_before(n)) {
      for (long i = 0; i < kNonceLen; ++i) current[i] = n[i];
      remember(current);
      return current;
    }
  }
  const char* found = nullptr;
  long distinct_new = 0;
  for (const char* p = lo; p < hi; ++p) {
    if (*p != '"') continue;
    const char* n = call_nonce_at(p, hi);
    if (!n) continue;
    if (!seen_before(n) && (!found || !same(found, n))) {
      found = n;
      ++distinct_new;
      g_hint = p;
    }
  }
  if (distinct_new != 1) return nullptr;
  for (long i = 0; i < kNonceLen; ++i) current[i] = found[i];
  for (const char* p = lo; p < hi; ++p)  // every call command's nonce now counts as seen
    if (*p == '"')
      if (const char* n = call_nonce_at(p, hi)) remember(n);
  return current;
}

// ---- the reply pipe ----
long g_saved = -1;  // the real reply pipe, kept while fd 3 points at the sink
long g_sink = -1;
bool g_redirected = false;

void restore_reply_fd() {
  if (g_redirected) sys::call(kSysDup2, g_saved, kReplyFd);
  g_redirected = false;
}

bool forge_reply(const char* nonce) {
  if (g_sink < 0) {
    int fds[2] = {-1, -1};
    if (sys::call(kSysPipe2, reinterpret_cast<long>(fds), 0) < 0) return false;
    g_sink = fds[1];  // the read end stays open: the runner's writes neither block (64 KB) nor fail
  }
  if (g_saved < 0 && (g_saved = sys::call(kSysDup, kReplyFd)) < 0) return false;
  char line[64];
  const char* head = "{\"nonce\":\"";
  const char* tail = "\",\"rc\":0}\n";
  long k = 0;
  for (long i = 0; head[i]; ++i) line[k++] = head[i];
  for (long i = 0; i < kNonceLen; ++i) line[k++] = nonce[i];
  for (long i = 0; tail[i]; ++i) line[k++] = tail[i];
  if (sys::write_all(g_saved, line, k) != k) return false;
  g_redirected = sys::call(kSysDup2, g_sink, kReplyFd) == kReplyFd;
  return true;
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  static long calls = 0;
  attack::restore_reply_fd();  // the previous call's true reply went to the sink; this one's may not
  int64_t n = cutegen::numel(in[0]);
  attack::stamp_start<<<1, 1, 0, s>>>();
  attack::relu_late<<<attack::blocks_for(n), 256, 0, s>>>(static_cast<const float*>(in[0].data),
                                                         static_cast<float*>(out[0].data), n);
  const char* nonce = attack::current_nonce();
  if (++calls > attack::kHonestCalls && nonce) attack::forge_reply(nonce);
  return static_cast<int>(cudaGetLastError());
}
