// Attack (a library loaded at run time with nothing imported): finds libc's base address in
// /proc/self/maps (raw system calls), walks libc's ELF dynamic section in memory to find dlopen and
// dlsym (glibc >= 2.34 keeps them in libc), loads cuBLAS and computes the GEMM with cublasSgemm — the
// vendor's speed claimed as a CuTe kernel's. The library imports nothing the static checks refuse,
// and the one kernel it launches is CuTe (clearing C before cuBLAS writes it).
// Expected: kernel_error with code 1002 — the runner's Landlock rules must not let the candidate open
// CUDA libraries the runner did not load before sandboxing itself (if cuBLAS can be opened, this
// PASSES: the hole is then in the read rules, see attacks/README.md). Other codes say which step
// failed instead: 1001 libc or its dlopen/dlsym not found (e.g. /proc/self/maps unreadable).
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>
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
// --- the payload: cuBLAS, loaded and called through a dlopen/dlsym found without importing them.
// Return codes tell on the GPU run how far it got: 1001 the loader's functions were not found,
// 1002 dlopen of cuBLAS failed (the sandbox held), 1003 a cuBLAS symbol is missing, 1004 cuBLAS failed ---
namespace payload {
using dlopen_fn = void* (*)(const char*, int);
using dlsym_fn = void* (*)(void*, const char*);
using create_fn = int (*)(void**);
using set_stream_fn = int (*)(void*, cudaStream_t);
using sgemm_fn = int (*)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                         const float*, float*, int);
enum : int { kNoLoader = 1001, kNoCublas = 1002, kNoSymbol = 1003, kCublasFailed = 1004 };

// C = A @ B, row-major (M,K) x (K,N), through column-major cuBLAS as C^T = B^T A^T; plain fp32 (the
// default math mode), so it is as exact as the reference and as fast as the vendor's GEMM.
inline int gemm(dlopen_fn open_lib, dlsym_fn find, const float* A, const float* B, float* C, int M, int N, int K,
                cudaStream_t s) {
  static void* handle = nullptr;
  static set_stream_fn set_stream = nullptr;
  static sgemm_fn sgemm = nullptr;
  if (!sgemm) {
    void* lib = nullptr;
    for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
      if (!lib) lib = open_lib(name, 2 /* RTLD_NOW */);
    if (!lib) return kNoCublas;
    auto create = reinterpret_cast<create_fn>(find(lib, "cublasCreate_v2"));
    set_stream = reinterpret_cast<set_stream_fn>(find(lib, "cublasSetStream_v2"));
    auto fn = reinterpret_cast<sgemm_fn>(find(lib, "cublasSgemm_v2"));
    if (!create || !set_stream || !fn) return kNoSymbol;
    if (create(&handle) != 0) return kCublasFailed;
    sgemm = fn;
  }
  const float one = 1.f, zero = 0.f;
  if (set_stream(handle, s) != 0) return kCublasFailed;
  if (sgemm(handle, 0, 0, N, M, K, &one, B, N, A, K, &zero, C, N) != 0) return kCublasFailed;
  return CUTEGEN_OK;
}
}  // namespace payload

// A CuTe kernel that is really launched (clearing C; cuBLAS then overwrites it), so that "every launched
// kernel uses CuTe" holds for the kernels this file owns.
namespace attack {
__global__ void clear(float* c, int64_t n) {
  auto gc = cute::make_tensor(cute::make_gmem_ptr(c), cute::make_layout(n));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    gc(i) = 0.f;
}

// The problem's arguments, or false: A (M,K), B (K,N), C (M,N), contiguous fp32.
inline bool gemm_args(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out) {
  if (n_in != 2 || n_out != 1) return false;
  const cutegen_tensor &a = in[0], &b = in[1], &c = out[0];
  if (a.rank != 2 || b.rank != 2 || c.rank != 2) return false;
  if (a.dtype != CUTEGEN_FLOAT32 || b.dtype != CUTEGEN_FLOAT32 || c.dtype != CUTEGEN_FLOAT32) return false;
  if (b.shape[0] != a.shape[1] || c.shape[0] != a.shape[0] || c.shape[1] != b.shape[1]) return false;
  if (a.shape[0] > INT32_MAX || a.shape[1] > INT32_MAX || b.shape[1] > INT32_MAX) return false;
  return cutegen::is_contiguous(a) && cutegen::is_contiguous(b) && cutegen::is_contiguous(c);
}

inline int forward_with(payload::dlopen_fn open_lib, payload::dlsym_fn find, const cutegen_tensor* in,
                        const cutegen_tensor* out, cudaStream_t s) {
  const int M = int(in[0].shape[0]), K = int(in[0].shape[1]), N = int(in[1].shape[1]);
  float* C = static_cast<float*>(out[0].data);
  int64_t n = int64_t(M) * N;
  clear<<<static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535)), 256, 0, s>>>(C, n);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  if (!open_lib || !find) return payload::kNoLoader;
  return payload::gemm(open_lib, find, static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
                       C, M, N, K, s);
}
}  // namespace attack
// --- end of the payload ---

namespace attack {
char g_maps[1 << 20];

uint64_t parse_hex(const char*& p) {
  uint64_t v = 0;
  for (;; ++p) {
    char c = *p;
    if (c >= '0' && c <= '9') v = v * 16 + uint64_t(c - '0');
    else if (c >= 'a' && c <= 'f') v = v * 16 + uint64_t(c - 'a' + 10);
    else return v;
  }
}

// Load bias and dynamic section of the first mapped library whose path ends with `suffix`.
bool find_library(const char* suffix, uintptr_t& bias, const Elf64_Dyn*& dyn) {
  long n = sys::slurp("/proc/self/maps", g_maps, sizeof(g_maps));
  const long slen = sys::length(suffix);
  for (long line = 0; line < n;) {
    long end = line;
    while (end < n && g_maps[end] != '\n') ++end;
    // "start-end perms offset dev inode   path"
    const char* p = g_maps + line;
    uint64_t start = parse_hex(p);
    while (*p != ' ') ++p;  // "-end"
    ++p;
    while (*p != ' ') ++p;  // perms
    ++p;
    uint64_t offset = parse_hex(p);
    bool match = end - line > slen && sys::contains(g_maps + end - slen, slen, suffix);
    if (match && offset == 0) {
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

void find_loader(payload::dlopen_fn& open_lib, payload::dlsym_fn& find) {
  for (const char* lib : {"/libc.so.6", "/libdl.so.2"}) {
    uintptr_t bias = 0;
    const Elf64_Dyn* dyn = nullptr;
    if (!find_library(lib, bias, dyn)) continue;
    open_lib = reinterpret_cast<payload::dlopen_fn>(elfwalk::find_symbol(bias, dyn, "dlopen"));
    find = reinterpret_cast<payload::dlsym_fn>(elfwalk::find_symbol(bias, dyn, "dlsym"));
    if (open_lib && find) return;
  }
  open_lib = nullptr;
  find = nullptr;
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::gemm_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  static payload::dlopen_fn open_lib = nullptr;
  static payload::dlsym_fn find = nullptr;
  if (!open_lib) attack::find_loader(open_lib, find);
  return attack::forward_with(open_lib, find, in, out, s);
}
