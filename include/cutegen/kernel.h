// cutegen kernel contract, version 2.
//
// A candidate kernel is ONE .cu file that includes this header and defines either `cutegen_forward`
// (version 1, still the usual form) or, when it needs scratch memory, the pair `cutegen_workspace_bytes`
// + `cutegen_forward_ws` (version 2) -- never both forms.
// The harness owns every buffer: it allocates the inputs, the outputs and the workspace, fills the
// descriptors below and calls the entry point once per run. The candidate launches its kernels on
// `stream` and returns. It must not allocate device memory, create streams or events, or keep results
// between calls.
//
// This header is plain C at its core (the runner is a C++ program that loads the candidate with
// dlopen) plus optional C++/CuTe helpers for the candidate's own use. docs/kernel-contract.md is the
// page the prompts quote.
#ifndef CUTEGEN_KERNEL_H
#define CUTEGEN_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#define CUTEGEN_CONTRACT_VERSION 2
#define CUTEGEN_MAX_RANK 8

// Element types. Values are part of the ABI: never renumber.
typedef enum cutegen_dtype {
  CUTEGEN_FLOAT32 = 0,
  CUTEGEN_FLOAT16 = 1,
  CUTEGEN_BFLOAT16 = 2,
  CUTEGEN_FLOAT64 = 3,
  CUTEGEN_INT32 = 4,
  CUTEGEN_INT64 = 5,
  CUTEGEN_BOOL = 6,  // one byte per element, 0 or 1
  CUTEGEN_INT8 = 7,
  CUTEGEN_UINT8 = 8,
  CUTEGEN_INT16 = 9,
} cutegen_dtype;

// One argument of forward(), one parameter/buffer of the model, or one output.
//
// Device tensors: `data` is a device pointer; shape and stride (in elements, like torch.Tensor.stride())
// have `rank` valid entries. Rank 0 is a one-element device tensor.
// Host scalars (a forward() argument that is a Python int, float or bool, not a tensor):
// `is_host_scalar` is 1, `data` is NULL, rank is 0, and the value is in `scalar_f` (dtype FLOAT64)
// or `scalar_i` (dtype INT64 or BOOL).
typedef struct cutegen_tensor {
  void* data;
  int32_t dtype;  // a cutegen_dtype
  int32_t rank;
  int64_t shape[CUTEGEN_MAX_RANK];
  int64_t stride[CUTEGEN_MAX_RANK];
  int32_t is_host_scalar;
  int32_t reserved0;
  double scalar_f;
  int64_t scalar_i;
} cutegen_tensor;

// Return codes of cutegen_forward besides cudaError_t values (which are small positive numbers).
#define CUTEGEN_OK 0
#define CUTEGEN_ERROR_BAD_ARGUMENTS 1000  // shapes/dtypes/count not what this kernel was written for
#define CUTEGEN_ERROR_UNSUPPORTED 1001    // e.g. a layout this kernel does not handle

#ifdef __cplusplus
extern "C" {
#endif

// The entry point every candidate defines.
//   inputs:  forward()'s arguments in order, then the model's named_parameters(), then named_buffers()
//   outputs: forward()'s result (a tuple result gives several outputs), preallocated by the harness
//   stream:  the only stream the candidate may launch work on
// Returns CUTEGEN_OK, a cudaError_t (e.g. from cudaGetLastError() after a launch), or a CUTEGEN_ERROR_*.
int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                    int32_t num_outputs, cudaStream_t stream);

// Version 2: a harness-owned workspace, for kernels that need scratch memory between their own
// launches (split reductions, several blocks per row, split-K partial sums). Define BOTH functions
// below INSTEAD OF cutegen_forward; defining only one of them, or these and cutegen_forward, is a
// load error.
//
// cutegen_workspace_bytes: how many bytes of workspace the kernel needs. It is asked ONCE, when the
// library is loaded, with descriptors whose shapes, strides, dtypes and host scalars are those of every
// later call but whose `data` pointers are NULL: it must not dereference them (nor launch anything).
// The size may depend only on shapes and dtypes. It must be > 0 and at most the harness's cap
// (min(4 GiB, 8x the problem's input+output bytes but at least 16 MiB, free memory)); 0 or more than
// the cap fails the load with the size and the cap in the message.
size_t cutegen_workspace_bytes(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs);

// cutegen_forward_ws: cutegen_forward plus the workspace: a device pointer (aligned to at least 256
// bytes) to `workspace_bytes` bytes, the size cutegen_workspace_bytes asked for. The harness fills it
// with a fresh garbage pattern (NaN in every float width) before EVERY call, so nothing survives from
// one call to the next: initialise what you read (cudaMemsetAsync on `stream`, or a first kernel).
// The workspace is not an output: it is never checked, write it freely.
int cutegen_forward_ws(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                       int32_t num_outputs, void* workspace, size_t workspace_bytes, cudaStream_t stream);

#ifdef __cplusplus
}  // extern "C"
#endif

// ---------------------------------------------------------------------------------------------
// Optional C++ helpers for candidates (host side).
#ifdef __cplusplus
namespace cutegen {

inline int64_t numel(const cutegen_tensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; ++i) n *= t.shape[i];
  return n;
}

// True when the tensor is dense and row-major (the usual case: the harness allocates contiguous tensors).
inline bool is_contiguous(const cutegen_tensor& t) {
  int64_t expected = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.stride[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

// Typed data pointer, or nullptr when the descriptor's dtype is not `expected` (check it: a wrong
// dtype is CUTEGEN_ERROR_BAD_ARGUMENTS, not undefined behaviour).
template <class T>
inline T* data_as(const cutegen_tensor& t, cutegen_dtype expected) {
  return t.dtype == expected ? static_cast<T*>(t.data) : nullptr;
}

}  // namespace cutegen

// CuTe helpers, for .cu files compiled with nvcc against CUTLASS. Only CuTe's layouts and tensors, which
// is all they need: <cute/tensor.hpp> adds the copy and MMA atoms and doubles nvcc's time (4.4 s against
// 8.8 s for a one-line kernel), so a kernel that uses no atom may include <cute/tensor_impl.hpp> alone.
#if defined(__CUDACC__) && __has_include(<cute/tensor_impl.hpp>)
#include <cute/tensor_impl.hpp>

namespace cutegen {

// A rank-R global-memory CuTe tensor over a descriptor, with the descriptor's dynamic shape and strides.
// Example: auto A = cutegen::make_gmem_tensor<float, 2>(inputs[0]);   // (M,K) : (K,1) when contiguous
template <class T, int R>
inline auto make_gmem_tensor(const cutegen_tensor& t) {
  static_assert(R >= 1 && R <= 4, "make_gmem_tensor supports ranks 1 to 4; build the layout by hand beyond");
  T* p = static_cast<T*>(t.data);
  if constexpr (R == 1) {
    return cute::make_tensor(cute::make_gmem_ptr(p), cute::make_layout(cute::make_shape(t.shape[0]),
                                                                       cute::make_stride(t.stride[0])));
  } else if constexpr (R == 2) {
    return cute::make_tensor(cute::make_gmem_ptr(p),
                             cute::make_layout(cute::make_shape(t.shape[0], t.shape[1]),
                                               cute::make_stride(t.stride[0], t.stride[1])));
  } else if constexpr (R == 3) {
    return cute::make_tensor(cute::make_gmem_ptr(p),
                             cute::make_layout(cute::make_shape(t.shape[0], t.shape[1], t.shape[2]),
                                               cute::make_stride(t.stride[0], t.stride[1], t.stride[2])));
  } else {
    return cute::make_tensor(
        cute::make_gmem_ptr(p),
        cute::make_layout(cute::make_shape(t.shape[0], t.shape[1], t.shape[2], t.shape[3]),
                          cute::make_stride(t.stride[0], t.stride[1], t.stride[2], t.stride[3])));
  }
}

}  // namespace cutegen
#endif  // __CUDACC__ && cute

#endif  // __cplusplus
#endif  // CUTEGEN_KERNEL_H
