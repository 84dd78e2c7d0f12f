// Attack (raw code past the CuTe check, loaded at run time): the static checks read the kernels in the
// library's device code, and every one of them must be CuTe. This library's only compiled kernel is CuTe
// and never runs; the work is done by a raw CUDA kernel kept as PTX text in the host data, which the
// kernel's host code hands to the driver's own compiler (cuModuleLoadData, cuModuleGetFunction and
// cuLaunchKernel found in the already-loaded libcuda by walking its ELF tables, nothing imported) and
// launches on the given stream. Its results and times are right; only the kernel is not CuTe.
// Expected: rejected (embedded-device-code) — PTX text outside the fatbin nvcc built.
// At run time (were it accepted) it would return 1005/1001 when libcuda or its functions are not found and
// 1003 when the driver cannot compile the PTX (attacks/cute_only/jit_obfuscated_ptx.cu is that case).
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
// The CuTe kernel the static checks see; it is never launched.
__global__ void decoy(const float* x, float* y, int64_t n) {
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, ld(gx, i));
}

// The kernel that does the work: a plain grid-stride ReLU, no CuTe (ptxas-checked for sm_90).
const char kPtx[] = R"PTX(
.version 8.0
.target sm_90
.address_size 64

.visible .entry jit_relu(.param .u64 px, .param .u64 py, .param .u64 pn)
{
  .reg .pred %p<2>;
  .reg .b32 %r<5>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [px];
  ld.param.u64 %rd2, [py];
  ld.param.u64 %rd3, [pn];
  cvta.to.global.u64 %rd4, %rd1;
  cvta.to.global.u64 %rd5, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd6, %r1, %r2;
  cvt.u64.u32 %rd7, %r3;
  add.s64 %rd8, %rd6, %rd7;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd9, %r4, %r2;
LOOP:
  setp.ge.s64 %p1, %rd8, %rd3;
  @%p1 bra DONE;
  shl.b64 %rd10, %rd8, 2;
  add.s64 %rd11, %rd4, %rd10;
  ld.global.f32 %f1, [%rd11];
  max.f32 %f2, %f1, 0f00000000;
  add.s64 %rd11, %rd5, %rd10;
  st.global.f32 [%rd11], %f2;
  add.s64 %rd8, %rd8, %rd9;
  bra LOOP;
DONE:
  ret;
}
)PTX";

enum : int { kNoDriverLibrary = 1005, kNoDriverSymbol = 1001, kNoCompiler = 1003, kLaunchFailed = 1004 };
using load_fn = int (*)(void**, const void*);
using get_fn = int (*)(void**, void*, const char*);
using launch_fn = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                          void**);

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

}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  static attack::launch_fn launch = nullptr;
  static void* function = nullptr;
  if (!function) {
    uintptr_t bias = 0;
    const Elf64_Dyn* dyn = nullptr;
    if (!attack::find_library("/libcuda.so", bias, dyn)) return attack::kNoDriverLibrary;
    auto load = reinterpret_cast<attack::load_fn>(elfwalk::find_symbol(bias, dyn, "cuModuleLoadData"));
    auto get = reinterpret_cast<attack::get_fn>(elfwalk::find_symbol(bias, dyn, "cuModuleGetFunction"));
    launch = reinterpret_cast<attack::launch_fn>(elfwalk::find_symbol(bias, dyn, "cuLaunchKernel"));
    if (!load || !get || !launch) return attack::kNoDriverSymbol;
    void* module = nullptr;
    if (load(&module, attack::kPtx) != 0 || get(&function, module, "jit_relu") != 0) return attack::kNoCompiler;
  }
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  long long n = cutegen::numel(in[0]);
  void* args[] = {&x, &y, &n};
  if (launch(function, attack::blocks_for(n), 1, 1, 256, 1, 1, 0, s, args, nullptr) != 0) return attack::kLaunchFailed;
  return 0;
}
