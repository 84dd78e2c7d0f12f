#include "compile/import_rules.h"

#include <regex>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "compile/demangle.h"

namespace cutegen {
namespace {

struct Refusal {
  std::regex pattern;
  std::string why;
};

// Checked first, so that a refused symbol gets its reason even where a broad allow pattern would match.
const std::vector<Refusal>& refusals() {
  static const std::vector<Refusal> rules = {
      {std::regex(R"(^(cudaGetDriverEntryPoint|cuGetProcAddress))"),
       "hands out any CUDA driver function (allocation, streams, contexts); cutegen compiles with "
       "-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL, so CuTe's TMA descriptors call cuTensorMapEncodeTiled/"
       "cuTensorMapEncodeIm2col directly: call those directly too"},
      {std::regex(R"(^(dlopen|dlmopen|dlsym|dlvsym|dladdr1?|dlinfo|dlerror|dlclose|dl_iterate_phdr|_dl_\w+)$)"),
       "loads or looks up code at run time, which the contract forbids"},
      {std::regex(R"(^(syscall|__syscall\w*)$)"), "makes raw system calls; a kernel needs none"},
      {std::regex(R"(^(pthread_\w+|thrd_\w+|clone3?|__clone|_ZNSt6thread\w*|_ZSt5async\w*)$)"),
       "creates or manages host threads; launch all work on the stream passed to cutegen_forward"},
      {std::regex(R"(^(fork|vfork|_Fork|exec[lv]p?e?|fexecve|system|popen|pclose|posix_spawnp?|daemon|setsid|kill|raise|ptrace)$)"),
       "starts or signals processes"},
      {std::regex(R"(^(signal|sigaction|bsd_signal|sysv_signal|__sysv_signal|sigset|alarm|setitimer|timer_create)$)"),
       "installs signal handlers or timers"},
      {std::regex(R"(^(atexit|at_quick_exit|on_exit|__cxa_thread_atexit|__cxa_thread_atexit_impl)$)"),
       "registers host code to run at exit; do all work inside cutegen_forward"},
      {std::regex(R"(^(_exit|_Exit|quick_exit)$)"), "ends the process; return an error code instead"},
      {std::regex(R"(^(getenv|secure_getenv|setenv|putenv|unsetenv|clearenv|environ|__environ|_environ)$)"),
       "reads or changes the environment; a kernel may depend only on its inputs"},
      {std::regex(R"(^(mmap|mmap64|munmap|mprotect|mremap|madvise|shm_open|shmget|shmat|brk|sbrk|memfd_create)$)"),
       "maps memory or changes its protection"},
      {std::regex(R"(^__tls_get_addr$)"), "uses thread_local storage; keep no state between calls"},
      {std::regex(R"(^(printf|vprintf|puts|putchar|putc|putchar_unlocked|dprintf|vdprintf|__printf_chk|__vprintf_chk|__dprintf_chk|perror|stdout|_IO_2_1_stdout_|_IO_putc|_ZSt4cout|_ZSt5wcout|_ZSt4clog|_ZSt5wclog)$)"),
       "prints (printf, puts, std::cout): output is forbidden; report failures through the return code"},
      {std::regex(R"(^(open|open64|openat|openat64|__open_2|__open64_2|creat|creat64|fopen|fopen64|freopen|freopen64|fdopen|tmpfile|tmpfile64|mkstemp|mkstemp64|read|write|pread|pread64|pwrite|pwrite64|readv|writev|__read_chk|close|lseek|lseek64|fread|__fread_chk|fwrite|fgets|fputs|fputc|fscanf|__isoc99_fscanf|fflush|ftruncate|unlink|unlinkat|rename|remove|mkdir|rmdir|opendir|readdir|readdir64|stat|stat64|fstat|fstat64|lstat|__xstat|__fxstat|__lxstat|access|faccessat|ioctl|fcntl|fcntl64|dup|dup2|dup3|pipe|pipe2|sendfile|splice|chdir|getcwd|realpath|readlink)$)"),
       "uses files; the kernel's only inputs and outputs are the tensors passed to cutegen_forward"},
      {std::regex(R"(^_ZNS[ti]?\d*(basic_filebuf|basic_ifstream|basic_ofstream|basic_fstream))"),
       "uses files; the kernel's only inputs and outputs are the tensors passed to cutegen_forward"},
      {std::regex(R"(^(socket|socketpair|connect|bind|listen|accept4?|send|sendto|sendmsg|recv|recvfrom|recvmsg|getaddrinfo|gethostbyname\w*|shutdown|setsockopt|getsockopt)$)"),
       "uses the network"},
      {std::regex(R"(^(cudaMalloc|cudaFree|cudaHostAlloc|cudaHostRegister|cudaMallocHost|cudaFreeHost|cudaMemPool|cudaMallocAsync|cudaFreeAsync|cudaMallocManaged|cudaMallocPitch|cudaMalloc3D|cudaMallocArray|cudaArray|cudaMallocMipmappedArray|cudaIpc|cuMem|cuIpc|__cudaRegisterManagedVar))"),
       "allocates or maps memory; the harness owns every buffer (scratch space comes from shared memory and "
       "registers)"},
      {std::regex(R"(^(cudaStream(Create|Destroy|BeginCapture|EndCapture|WaitEvent|Attach|Query|SetAttribute|CopyAttributes)|cudaEvent|cudaGraph|cudaUserObject|cuStream|cuEvent|cuGraph))"),
       "creates or manages streams, events or graphs; launch every kernel on the stream passed to cutegen_forward"},
      {std::regex(R"(^(cudaLaunchHostFunc|cudaStreamAddCallback|cuLaunchHostFunc|cuStreamAddCallback))"),
       "runs host code from the stream; all work must be GPU work launched on the stream"},
      {std::regex(R"(^(cudaDeviceSynchronize|cudaStreamSynchronize|cudaEventSynchronize|cudaThreadSynchronize|cuCtxSynchronize|cuStreamSynchronize|cudaMemcpy|cudaMemcpy2D|cudaMemcpy3D|cudaMemset|cudaMemset2D|cudaMemset3D|cudaMemcpyToSymbol|cudaMemcpyFromSymbol|cudaMemcpyPeer)(_v\d+|_ptds)?$)"),
       "waits for the GPU; cutegen_forward must return without synchronising (use the ...Async forms on the "
       "stream)"},
      {std::regex(R"(^(cudaDeviceReset|cudaSetDevice|cudaSetDeviceFlags|cudaDeviceSetLimit|cudaDeviceSetCacheConfig|cudaDeviceSetSharedMemConfig|cudaCtx|cuCtx|cuDevicePrimaryCtx|cudaInitDevice|cudaSetValidDevices|cudaDeviceSetMemPool|cudaDeviceEnablePeerAccess|cudaDeviceDisablePeerAccess|cuInit|cudaThreadExit|cudaThreadSetLimit))"),
       "changes the device or context the harness set up"},
      {std::regex(R"(^cublas)"), "calls cuBLAS; the kernel must be written in CuTe"},
      {std::regex(R"(^cudnn)"), "calls cuDNN; the kernel must be written in CuTe"},
      {std::regex(R"(^(cufft|curand|cusparse|cusolver|nvjpeg|npp|nccl|nvrtc|nvJitLink|cutensor|cuFile|nvml|cupti|cudla))"),
       "calls a CUDA library; the kernel must be written in CuTe"},
      {std::regex(R"(^_?Py)"), "calls into Python; the kernel must be self-contained CUDA"},
      {std::regex(R"(^_ZN?K?(2at|3c10|5torch)\d)"), "calls libtorch; the kernel must be written in CuTe"},
  };
  return rules;
}

// CUDA runtime entry points a kernel needs: nvcc's registration and launch glue, launches, function
// attributes, occupancy, stream-ordered memset/memcpy, symbol addresses, errors, device properties.
bool allowed_cuda_runtime(std::string name) {
  for (const char* suffix : {"_ptsz", "_ptds"})
    if (name.size() > 5 && name.compare(name.size() - 5, 5, suffix) == 0) name.resize(name.size() - 5);
  static const std::set<std::string> exact = {
      "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary", "__cudaRegisterFunction",
      "__cudaRegisterVar", "__cudaPushCallConfiguration", "__cudaPopCallConfiguration", "__cudaLaunchKernel",
      "__cudaGetKernel", "__cudaInitModule",
      "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel",
      "cudaFuncSetAttribute", "cudaFuncGetAttributes", "cudaFuncSetCacheConfig", "cudaFuncSetSharedMemConfig",
      "cudaFuncGetName", "cudaGetFuncBySymbol",
      "cudaMemsetAsync", "cudaMemset2DAsync", "cudaMemset3DAsync", "cudaMemcpyAsync", "cudaMemcpy2DAsync",
      "cudaMemcpy3DAsync", "cudaMemcpyToSymbolAsync", "cudaMemcpyFromSymbolAsync",
      "cudaGetSymbolAddress", "cudaGetSymbolSize",
      "cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName",
      "cudaGetDevice", "cudaGetDeviceCount", "cudaGetDeviceProperties", "cudaGetDeviceProperties_v2",
      "cudaDeviceGetAttribute", "cudaDeviceGetLimit", "cudaDriverGetVersion", "cudaRuntimeGetVersion",
      "cudaPointerGetAttributes"};
  return exact.count(name) > 0 || name.rfind("cudaOccupancy", 0) == 0;
}

// Driver entry points: the TMA descriptor encoders CuTe calls directly, and error strings.
bool allowed_cuda_driver(const std::string& name) {
  static const std::set<std::string> exact = {"cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col",
                                              "cuTensorMapEncodeIm2colWide", "cuGetErrorString",
                                              "cuGetErrorName"};
  return exact.count(name) > 0;
}

// The C library: memory and string basics, heap, abort/assert, stack protector, static destructor
// registration (__cxa_atexit: the compiler's own, e.g. for <iostream>'s initialiser), exit (the body
// nvcc gives the host stand-in of every non-inline __device__ function), and stderr through fprintf,
// which CUTLASS's own error paths use (output at run time is judged separately).
bool allowed_libc(const std::string& name) {
  static const std::set<std::string> exact = {
      "memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strnlen", "strcmp", "strncmp", "strchr",
      "strrchr", "strstr", "strcpy", "strncpy", "strcat", "strncat", "__memcpy_chk", "__memmove_chk",
      "__memset_chk", "__strcpy_chk", "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign",
      "abort", "exit", "__assert_fail", "__stack_chk_fail", "__cxa_finalize", "__cxa_atexit", "__libc_single_threaded",
      "__errno_location", "snprintf", "__snprintf_chk", "vsnprintf", "__vsnprintf_chk", "fprintf",
      "__fprintf_chk", "stderr", "qsort", "bsearch"};
  return exact.count(name) > 0;
}

// What header-only C++ (CUTLASS included) pulls in from libstdc++ and libgcc: exception and
// static-initialisation support, operator new/delete, std::string, and std::cerr, which CuTe's TMA
// descriptor code writes to when the driver refuses a descriptor.
bool allowed_cxx_runtime(const std::string& name) {
  static const std::regex re(
      R"(^(__cxa_\w+|__gxx_personality_v0|__dynamic_cast|_Unwind_\w+|_ZSt\d+__throw_\w+|_Z(nw|na|dl|da)\w+|_ZSt7nothrow|_ZT[ISV]St\w+|_ZT[ISV]N10__cxxabiv1\w+|_ZNK?St\d+(exception|bad_alloc|bad_array_new_length|bad_cast|bad_typeid|runtime_error|logic_error|length_error|out_of_range|invalid_argument|domain_error|range_error|overflow_error|underflow_error)\w*|_ZNK?St7__cxx1112basic_string\w+|_ZNSt8ios_base4Init[CD][12]Ev|_ZSt21ios_base_library_initv|_ZSt4cerr|_ZNSo\w+|_ZStlsI\w+|_ZSt16__ostream_insert\w+|_ZSt4endl\w+|_ZSt5flush\w+|_ZNSt9basic_iosIcSt11char_traitsIcEE5clear\w+|_ZNKSt5ctypeIcE13_M_widen_initEv|__(u?div|u?mod)ti3|__muloti4|__popcount[ds]i2|__clz[ds]i2|__ctz[ds]i2|__powi[sd]f2|__(mul|div)[sd]c3|__gmon_start__|_ITM_\w+)$)");
  return std::regex_match(name, re);
}

enum class Family { none, cuda_runtime, cuda_driver, c_runtime, libm, other };

Family family_of(const std::string& soname) {
  auto starts = [&](const char* p) { return soname.rfind(p, 0) == 0; };
  if (soname.empty()) return Family::none;
  if (starts("libcudart.so")) return Family::cuda_runtime;
  if (starts("libcuda.so")) return Family::cuda_driver;
  if (starts("libm.so")) return Family::libm;
  if (starts("libc.so") || starts("libstdc++.so") || starts("libgcc_s.so") || starts("ld-linux")) return Family::c_runtime;
  return Family::other;
}

}  // namespace

std::optional<std::string> import_problem(const std::string& name, const std::string& provider) {
  std::string shown = demangle(name);
  std::string from = provider.empty() ? "" : " from " + provider;
  for (const auto& rule : refusals())
    if (std::regex_search(name, rule.pattern)) return fmt::format("imports {}: {}", shown, rule.why);
  Family f = family_of(provider);
  if (f == Family::libm) return std::nullopt;  // libm is nothing but math
  bool cuda = allowed_cuda_runtime(name) || allowed_cuda_driver(name);
  bool c = allowed_libc(name) || allowed_cxx_runtime(name);
  bool family_ok = cuda ? (f == Family::none || f == Family::cuda_runtime || f == Family::cuda_driver)
                        : (f == Family::none || f == Family::c_runtime);
  if ((cuda || c) && family_ok) return std::nullopt;
  if ((cuda || c) && !family_ok)
    return fmt::format("imports {}{}: only the CUDA runtime/driver and the C/C++ runtime may provide it", shown, from);
  return fmt::format("imports {}{}, which is not on the list of what a CuTe kernel may call (launches, function "
                     "attributes, occupancy, async memset/memcpy on the stream, errors, device properties, TMA "
                     "descriptor encoders, math, basic C/C++ runtime): remove the call", shown, from);
}

bool allowed_needed_library(const std::string& soname) {
  // libpthread/librt/libdl are empty shells on current glibc but older linkers still list them; what
  // matters is the symbols, which are checked one by one.
  static const std::regex re(
      R"(^(libcudart\.so|libcuda\.so|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|libpthread\.so|librt\.so|libdl\.so|ld-linux-x86-64\.so|ld-linux-aarch64\.so)(\.[0-9]+)*$)");
  return std::regex_match(soname, re);
}

}  // namespace cutegen
