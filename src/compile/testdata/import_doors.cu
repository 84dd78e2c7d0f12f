// Rejected: host code reaching past the kernel through every door the old deny-list left open. Each
// call must be refused by name from the built library's imports (nvcc_compiler_test, ImportDoors).
// Written without <cute/tensor.hpp> to compile quickly; the no-cute verdict it also gets is beside the point.
#include <cutegen/kernel.h>

#include <cuda.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

__global__ void touch(float* y) { y[0] = 1.f; }

static int on_object(struct dl_phdr_info*, size_t, void*) { return 0; }
static void* worker(void*) { return nullptr; }
static void host_fn(void*) {}

extern "C" int cutegen_forward(const cutegen_tensor*, int32_t, const cutegen_tensor* out, int32_t, cudaStream_t s) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, &q);
  cuGetProcAddress("cuMemAlloc", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
  dl_iterate_phdr(on_object, nullptr);
  pthread_t t;
  pthread_create(&t, nullptr, worker, nullptr);
  if (FILE* f = fopen("/tmp/cutegen-door", "w")) fclose(f);
  const char* key = getenv("OPENAI_API_KEY");
  syscall(SYS_getpid, key);
  cudaLaunchHostFunc(s, host_fn, nullptr);
  touch<<<1, 1, 0, s>>>(static_cast<float*>(out[0].data));
  return static_cast<int>(cudaGetLastError());
}
