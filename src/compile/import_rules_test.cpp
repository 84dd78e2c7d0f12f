#include "compile/import_rules.h"

#include <gtest/gtest.h>

#include "compile/demangle.h"

using namespace cutegen;

namespace {
std::string why(const std::string& name, const std::string& provider) {
  auto p = import_problem(name, provider);
  return p ? *p : "";
}
}  // namespace

// What the examples, the attack suite and the TMA/wgmma/cp.async/cluster test kernels import (nm -D
// --undefined-only on their kernel.so, CUDA 13.0, g++ 12): all of it must stay allowed.
TEST(ImportRules, WhatHonestKernelsImportIsAllowed) {
  const std::pair<const char*, const char*> honest[] = {
      {"__cudaRegisterFatBinary", "libcudart.so.13"}, {"__cudaRegisterFatBinaryEnd", "libcudart.so.13"},
      {"__cudaRegisterFunction", "libcudart.so.13"}, {"__cudaRegisterVar", "libcudart.so.13"},
      {"__cudaUnregisterFatBinary", "libcudart.so.13"}, {"__cudaPushCallConfiguration", "libcudart.so.13"},
      {"__cudaPopCallConfiguration", "libcudart.so.13"}, {"__cudaLaunchKernel", "libcudart.so.13"},
      {"__cudaGetKernel", "libcudart.so.13"}, {"cudaGetLastError", "libcudart.so.13"},
      {"cudaLaunchKernelExC", "libcudart.so.13"}, {"cudaLaunchKernel", "libcudart.so.13"},
      {"cudaFuncSetAttribute", "libcudart.so.13"}, {"cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "libcudart.so.13"},
      {"cudaMemsetAsync", "libcudart.so.13"}, {"cudaMemcpyAsync", "libcudart.so.13"},
      {"cudaMemcpyToSymbolAsync", "libcudart.so.13"}, {"cudaGetSymbolAddress", "libcudart.so.13"},
      {"cudaGetDevice", "libcudart.so.13"}, {"cudaDeviceGetAttribute", "libcudart.so.13"},
      {"cudaGetDeviceProperties", "libcudart.so.13"}, {"cudaGetErrorString", "libcudart.so.13"},
      {"cuTensorMapEncodeTiled", ""}, {"cuTensorMapEncodeIm2col", ""},
      {"__cxa_atexit", "libc.so.6"}, {"__cxa_finalize", "libc.so.6"}, {"__assert_fail", "libc.so.6"},
      {"exit", "libc.so.6"}, {"memcpy", "libc.so.6"}, {"strlen", "libc.so.6"}, {"fprintf", "libc.so.6"},
      {"stderr", "libc.so.6"}, {"sqrtf", "libm.so.6"}, {"expf", "libm.so.6"},
      {"__cxa_guard_acquire", "libstdc++.so.6"}, {"__gxx_personality_v0", "libstdc++.so.6"},
      {"_ZNSt8ios_base4InitC1Ev", "libstdc++.so.6"}, {"_ZSt4cerr", "libstdc++.so.6"},
      {"_ZNSo9_M_insertImEERSoT_", "libstdc++.so.6"}, {"_ZSt16__throw_bad_castv", "libstdc++.so.6"},
      {"_Znwm", "libstdc++.so.6"}, {"_ZdlPvm", "libstdc++.so.6"}, {"_Unwind_Resume", "libgcc_s.so.1"},
      {"__gmon_start__", ""}, {"_ITM_registerTMCloneTable", ""}};
  for (const auto& [name, lib] : honest) EXPECT_EQ(why(name, lib), "") << name;
}

TEST(ImportRules, EveryDoorIsRefusedWithAReason) {
  const std::pair<const char*, const char*> doors[] = {
      {"cudaGetDriverEntryPoint", "cuTensorMapEncodeTiled"}, {"cudaGetDriverEntryPointByVersion", "directly"},
      {"cuGetProcAddress_v2", "any CUDA driver function"}, {"dl_iterate_phdr", "run time"},
      {"dlopen", "run time"}, {"pthread_create", "threads"}, {"fopen", "files"}, {"fwrite", "files"},
      {"open", "files"}, {"atexit", "at exit"}, {"syscall", "system calls"}, {"getenv", "environment"},
      {"cudaLaunchHostFunc", "host code"}, {"cudaStreamAddCallback", "host code"}, {"mmap", "memory"},
      {"mprotect", "memory"}, {"fork", "processes"}, {"system", "processes"}, {"posix_spawn", "processes"},
      {"sigaction", "signal"}, {"socket", "network"}, {"connect", "network"}, {"cudaMalloc", "allocates"},
      {"cuMemAlloc_v2", "allocates"}, {"cudaStreamCreate", "streams"}, {"cudaEventCreate", "events"},
      {"cudaGraphLaunch", "graphs"}, {"cudaDeviceSynchronize", "synchronising"},
      {"cudaStreamSynchronize", "synchronising"}, {"cudaMemcpy", "synchronising"}, {"cudaDeviceReset", "device"},
      {"cudaSetDevice", "device"}, {"cuCtxSetCurrent", "context"}, {"cublasSgemm_v2", "cuBLAS"},
      {"cudnnCreate", "cuDNN"}, {"curandGenerate", "CUDA library"}, {"PyObject_Call", "Python"},
      {"_ZN2at6native3addEv", "libtorch"}, {"printf", "output is forbidden"}, {"puts", "output is forbidden"},
      {"_ZSt4cout", "output is forbidden"}, {"__tls_get_addr", "thread_local"}, {"_exit", "ends the process"}};
  for (const auto& [name, reason] : doors) {
    std::string w = why(name, "");
    EXPECT_NE(w.find("imports " + demangle(name)), std::string::npos) << name << ": " << w;
    EXPECT_NE(w.find(reason), std::string::npos) << name << ": " << w;
  }
}

TEST(ImportRules, AnythingElseIsRefusedNamingTheSymbolDemangled) {
  auto w = why("_ZNSt13basic_filebufIcSt11char_traitsIcEE4openEPKcSt13_Ios_Openmode", "libstdc++.so.6");
  EXPECT_NE(w.find("uses files"), std::string::npos) << w;
  w = why("qsort_r", "libc.so.6");
  EXPECT_NE(w.find("imports qsort_r from libc.so.6, which is not on the list"), std::string::npos) << w;
  w = why("_ZNSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEEC1Ev", "libstdc++.so.6");
  EXPECT_NE(w.find("std::__cxx11::basic_ostringstream"), std::string::npos) << w;
  EXPECT_NE(why("cudaStreamGetFlags", "libcudart.so.13"), "");
}

TEST(ImportRules, TheProvidingLibraryMustBeTheOneTheNameBelongsTo) {
  EXPECT_NE(why("memcpy", "libevil.so"), "");
  EXPECT_NE(why("cudaLaunchKernel", "libc.so.6"), "");
  EXPECT_EQ(why("cudaLaunchKernel", ""), "");  // unversioned (an older runtime): judged by name
  EXPECT_EQ(why("anything_in_libm", "libm.so.6"), "");
}

TEST(ImportRules, NeededLibrariesAreAnAllowList) {
  for (const char* ok : {"libcudart.so.13", "libcuda.so.1", "libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1",
                         "ld-linux-x86-64.so.2"})
    EXPECT_TRUE(allowed_needed_library(ok)) << ok;
  for (const char* bad : {"libcublas.so.13", "libtorch.so", "libpython3.11.so.1.0", "libnvrtc.so.13", "libevil.so"})
    EXPECT_FALSE(allowed_needed_library(bad)) << bad;
}
