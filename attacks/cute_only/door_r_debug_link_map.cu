// Attack (import door): the dynamic linker's debugger interface, _r_debug, heads the list of loaded
// libraries (struct link_map: load bias, name, dynamic section); walking libc's dynamic section finds
// dlopen and dlsym without importing them, and cuBLAS computes the GEMM.
// Expected: rejected — _r_debug (a data symbol of ld.so) is not on the import allow-list.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>
#include <link.h>
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

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::gemm_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  static payload::dlopen_fn open_lib = nullptr;
  static payload::dlsym_fn find = nullptr;
  for (const link_map* lm = _r_debug.r_map; lm && !open_lib; lm = lm->l_next) {
    const char* name = lm->l_name ? lm->l_name : "";
    long len = 0;
    while (name[len]) ++len;
    if (len < 9 || !elfwalk::same(name + len - 9, "libc.so.6")) continue;
    open_lib = reinterpret_cast<payload::dlopen_fn>(elfwalk::find_symbol(lm->l_addr, lm->l_ld, "dlopen"));
    find = reinterpret_cast<payload::dlsym_fn>(elfwalk::find_symbol(lm->l_addr, lm->l_ld, "dlsym"));
  }
  return attack::forward_with(open_lib, find, in, out, s);
}
