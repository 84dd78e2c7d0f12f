#pragma once
// A built kernel library's host code, run on this CPU machine: the slow-tier seed tests call a library
// kernel's cutegen_workspace_bytes (its planning) without a GPU.
#include <cutegen/kernel.h>
#include <dlfcn.h>

#include <filesystem>
#include <string>
#include <vector>

namespace cutegen::seed::testing {

// Why a test's host-planning half is skipped where CMake found no CUDA toolkit to load a library with.
inline constexpr const char* kNoHostCuda =
    "the host-planning half needs the CUDA toolkit's headers and libraries, which CMake did not find";

#ifdef CUTEGEN_CUDA_LIB_DIR
// A built kernel library loaded on a machine that may have no GPU driver: the toolkit's libcudart, and the
// driver's libcuda or else the toolkit's stub of it (its SONAME, libcuda.so.1, then satisfies the library's
// dependency). Host code runs; a CUDA call would answer an error.
struct HostOnlyLibrary {
  void* handle = nullptr;
  std::string error;
  explicit HostOnlyLibrary(const std::filesystem::path& library) {
    const std::string dir = CUTEGEN_CUDA_LIB_DIR;
    if (!dlopen((dir + "/libcudart.so").c_str(), RTLD_NOW | RTLD_GLOBAL)) error = dlerror();
    if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) &&
        !dlopen((dir + "/stubs/libcuda.so").c_str(), RTLD_NOW | RTLD_GLOBAL))
      error = dlerror();
    if (error.empty() && !(handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL))) error = dlerror();
  }
  using WorkspaceBytes = size_t (*)(const cutegen_tensor*, int32_t, const cutegen_tensor*, int32_t);
  // The library's cutegen_workspace_bytes, or nullptr when it has none or did not load.
  WorkspaceBytes workspace_bytes() const {
    return handle ? reinterpret_cast<WorkspaceBytes>(dlsym(handle, "cutegen_workspace_bytes")) : nullptr;
  }
};

// Declares `name`, the built library's cutegen_workspace_bytes, loaded with HostOnlyLibrary (which stays
// loaded: nothing closes it); the test fails where the library does not load or has no such function.
#define CUTEGEN_HOST_WORKSPACE_BYTES(name, library)                              \
  const ::cutegen::seed::testing::HostOnlyLibrary name##_library(library);       \
  ASSERT_TRUE(name##_library.error.empty()) << name##_library.error;             \
  const ::cutegen::seed::testing::HostOnlyLibrary::WorkspaceBytes name = name##_library.workspace_bytes(); \
  ASSERT_NE(name, nullptr)

inline cutegen_tensor fp32(std::vector<int64_t> shape, std::vector<int64_t> stride = {}) {
  cutegen_tensor t{};
  t.dtype = CUTEGEN_FLOAT32;
  t.rank = static_cast<int32_t>(shape.size());
  if (stride.empty()) {
    stride.assign(shape.size(), 1);
    for (int i = t.rank - 2; i >= 0; --i) stride[i] = stride[i + 1] * shape[i + 1];
  }
  for (int i = 0; i < t.rank; ++i) t.shape[i] = shape[i], t.stride[i] = stride[i];
  return t;
}
#endif

}  // namespace cutegen::seed::testing
