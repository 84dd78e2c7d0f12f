#pragma once
// A buffer (or host scalar) as the worker describes it to the runner (docs/worker-protocol.md,
// "Tensor references"). Parsing lives here, free of CUDA, so it is tested on machines without a GPU.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace cutegen {

enum class DType : int32_t {  // values equal cutegen_dtype in include/cutegen/kernel.h
  float32 = 0, float16 = 1, bfloat16 = 2, float64 = 3, int32 = 4, int64 = 5, boolean = 6, int8 = 7, uint8 = 8, int16 = 9,
};

Result<DType> parse_dtype(const std::string& torch_name);  // "float32", "bfloat16", "bool", ...
std::string dtype_name(DType d);
std::size_t dtype_size(DType d);

struct TensorRef {
  bool is_scalar = false;
  DType dtype = DType::float32;
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
  uint64_t nbytes = 0;
  std::optional<std::array<unsigned char, 64>> ipc_handle;  // cudaIpcMemHandle_t bytes
  uint64_t offset = 0;     // bytes from the IPC allocation's base
  uint64_t data_ptr = 0;   // when shared without IPC (same process, tests)
  double scalar_f = 0;
  int64_t scalar_i = 0;
};

Result<TensorRef> parse_tensor_ref(const nlohmann::json& j);
Result<std::vector<TensorRef>> parse_tensor_refs(const nlohmann::json& j);

}  // namespace cutegen
