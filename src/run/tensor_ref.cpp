#include "run/tensor_ref.h"

#include <openssl/evp.h>

#include <fmt/format.h>

namespace cutegen {
namespace {

struct DTypeInfo {
  const char* name;
  DType dtype;
  std::size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {"float32", DType::float32, 4}, {"float16", DType::float16, 2}, {"bfloat16", DType::bfloat16, 2},
    {"float64", DType::float64, 8}, {"int32", DType::int32, 4},     {"int64", DType::int64, 8},
    {"bool", DType::boolean, 1},    {"int8", DType::int8, 1},       {"uint8", DType::uint8, 1},
    {"int16", DType::int16, 2},
};

Result<std::vector<unsigned char>> base64_decode(const std::string& text) {
  std::vector<unsigned char> out(text.size() / 4 * 3 + 3);
  int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return Error{"ipc_handle is not valid base64"};
  // EVP_DecodeBlock counts '=' padding as zero bytes; drop them.
  std::size_t pad = 0;
  for (auto it = text.rbegin(); it != text.rend() && *it == '='; ++it) ++pad;
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

}  // namespace

Result<DType> parse_dtype(const std::string& name) {
  for (const auto& d : kDTypes)
    if (name == d.name) return d.dtype;
  return Error{fmt::format("unsupported dtype '{}' (the contract supports float32, float16, bfloat16, float64, int32, "
                           "int64, bool, int8, uint8, int16)", name)};
}

std::string dtype_name(DType dt) {
  for (const auto& d : kDTypes)
    if (d.dtype == dt) return d.name;
  return "unknown";
}

std::size_t dtype_size(DType dt) {
  for (const auto& d : kDTypes)
    if (d.dtype == dt) return d.size;
  return 0;
}

Result<TensorRef> parse_tensor_ref(const nlohmann::json& j) {
  if (!j.is_object()) return Error{"tensor ref must be an object"};
  TensorRef t;
  auto dt = parse_dtype(j.value("dtype", ""));
  if (!dt) return dt.error();
  t.dtype = *dt;
  std::string kind = j.value("kind", "tensor");
  if (kind == "scalar") {
    t.is_scalar = true;
    const auto& v = j.at("value");
    if (t.dtype == DType::float64) t.scalar_f = v.get<double>();
    else if (t.dtype == DType::boolean) t.scalar_i = v.is_boolean() ? v.get<bool>() : v.get<int64_t>();
    else if (t.dtype == DType::int64) t.scalar_i = v.get<int64_t>();
    else return Error{fmt::format("scalar of dtype {}: only float64, int64 and bool scalars exist", dtype_name(t.dtype))};
    return t;
  }
  if (kind != "tensor") return Error{fmt::format("unknown tensor ref kind '{}'", kind)};
  try {
    t.shape = j.at("shape").get<std::vector<int64_t>>();
    t.stride = j.at("stride").get<std::vector<int64_t>>();
    t.nbytes = j.value("nbytes", uint64_t{0});
    t.offset = j.value("offset", uint64_t{0});
    t.data_ptr = j.contains("data_ptr") && !j["data_ptr"].is_null() ? j["data_ptr"].get<uint64_t>() : 0;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("malformed tensor ref: {}", e.what())};
  }
  if (t.shape.size() != t.stride.size()) return Error{"tensor ref: shape and stride differ in rank"};
  if (t.shape.size() > 8) return Error{fmt::format("tensor of rank {}: the contract supports rank 8 at most", t.shape.size())};
  if (j.contains("ipc_handle") && !j["ipc_handle"].is_null()) {
    auto bytes = base64_decode(j["ipc_handle"].get<std::string>());
    if (!bytes) return bytes.error();
    if (bytes->size() != 64)
      return Error{fmt::format("ipc_handle has {} bytes, expected 64 (cudaIpcMemHandle_t)", bytes->size())};
    std::array<unsigned char, 64> h{};
    std::copy(bytes->begin(), bytes->end(), h.begin());
    t.ipc_handle = h;
  } else if (t.data_ptr == 0) {
    return Error{"tensor ref has neither ipc_handle nor data_ptr"};
  }
  return t;
}

Result<std::vector<TensorRef>> parse_tensor_refs(const nlohmann::json& j) {
  if (!j.is_array()) return Error{"expected a list of tensor refs"};
  std::vector<TensorRef> out;
  for (const auto& e : j) {
    auto t = parse_tensor_ref(e);
    if (!t) return t.error();
    out.push_back(std::move(*t));
  }
  return out;
}

}  // namespace cutegen
