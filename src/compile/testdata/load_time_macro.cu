// Rejected: load-time code the source scanner (it does not expand macros) cannot see, one of each
// kind the built library's check must find with the real nvcc: a constructor and a destructor
// attribute assembled by a macro (DT_INIT_ARRAY/DT_FINI_ARRAY list functions that are not the
// toolchain's own), an instruction spliced into _init through the .init section, a definition of the
// weak __gmon_start__ hook crti's _init calls, a global ifunc with its address taken. Expected:
// library-load-time-code naming each (the manifest's load_time_* attacks and forge_reply_at_load
// prove the other kinds in the default tier).
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

#define ON_LOAD(when) __attribute__((when))

namespace on_load {

volatile int loaded = 0;
ON_LOAD(constructor) void first_thing() { loaded = 1; }
ON_LOAD(destructor) void last_thing() { loaded = 2; }
asm(".pushsection .init,\"ax\",@progbits\n nop\n .popsection");
extern "C" void __gmon_start__() { loaded = 3; }

__global__ void copy(const float* x, float* y, int64_t n) {
  auto gX = cute::make_tensor(cute::make_gmem_ptr(x), cute::make_layout(n));
  auto gY = cute::make_tensor(cute::make_gmem_ptr(y), cute::make_layout(n));
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) gY(i) = gX(i);
}

}  // namespace on_load

// The resolver is named at global scope (nvcc's front end looks it up there).
using pick_fn = int (*)();
int pick_256() { return 256; }
extern "C" pick_fn pick_threads() { return pick_256; }
extern "C" int threads() __attribute__((ifunc("pick_threads")));
int (*volatile g_threads)() = threads;

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t, const cutegen_tensor* out, int32_t, cudaStream_t s) {
  int64_t n = cutegen::numel(in[0]);
  on_load::copy<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(static_cast<const float*>(in[0].data),
                                                                       static_cast<float*>(out[0].data), n);
  return static_cast<int>(cudaGetLastError());
}
