#include "seed/store_epilogue.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

// The descriptor field a host scalar of this dtype carries its value in (kernel contract), as the pointwise seed
// reads it.
std::string epilogue_scalar_field(const std::string& dtype) { return dtype == "float64" ? "scalar_f" : "scalar_i"; }

bool epilogue_uses(const StoreEpilogue& ep, const std::string& what) {
  for (const auto& s : ep.steps)
    if (s.expr.find(what) != std::string::npos) return true;
  return false;
}

std::string epilogue_definitions(const StoreEpilogue& ep, bool define_clamps) {
  int64_t numel = 1;
  for (int64_t d : ep.shape) numel *= d;
  std::string s = fmt::format(
      "// The pointwise step after this seed, folded into its store (docs/seed.md, \"A convolution, then more "
      "seeds\"):\n"
      "//   {}\n"
      "// The value v this seed computes for element e of its result is written as the step makes it of v: the step's\n"
      "// own fp32 statements in its order, its other tensors read at e's coordinates in the result's row-major shape\n"
      "// ({}), a dimension one of them lacks repeating it. No intermediate is written or read for the step.\n"
      "struct StoreEpilogue {{\n",
      ep.description, fmt::join(ep.shape, ", "));
  for (const auto& o : ep.operands)
    s += fmt::format("  const float* {};  // {} (input {}), {} values\n", o.value, o.name, o.input, o.size);
  for (const auto& sc : ep.scalars)
    s += fmt::format("  float {} = 0.f;  // forward argument {} ({}), read on every call\n", sc.member, sc.name,
                     sc.dtype);
  s += "};\n\n";
  if (define_clamps)
    s += "__device__ __forceinline__ float clamp_lo(float v, float lo) { return v < lo ? lo : v; }\n"
         "__device__ __forceinline__ float clamp_hi(float v, float hi) { return v > hi ? hi : v; }\n\n";
  s += "__device__ __forceinline__ float store_epilogue(const StoreEpilogue& ep, float v, int64_t e) {\n"
       "  // v itself (v + -0 is v for every v), by an explicitly rounded add that the compiler does not contract: "
       "so the\n"
       "  // seed's last multiply and the step's first add stay two roundings, as when v went through memory.\n";
  for (std::size_t i = 0; i < ep.value_names.size(); ++i)
    s += i == 0 ? fmt::format("  const float {} = __fadd_rn(v, -0.f);  // the seed's value\n", ep.value_names[i])
                : fmt::format("  const float {} = {};\n", ep.value_names[i], ep.value_names[0]);
  for (const auto& o : ep.operands)
    s += fmt::format("  const float {0} = make_tensor(make_gmem_ptr(ep.{0}), "
                     "make_layout(make_shape(int64_t{{{1}}})))({2});  // {3}\n",
                     o.value, o.size, epilogue_offset(ep.shape, o.strides, "e"), o.name);
  for (const auto& sc : ep.scalars) s += fmt::format("  const float {0} = ep.{0};\n", sc.member);
  for (const auto& st : ep.steps) s += fmt::format("  const float {} = {};  // {}\n", st.value, st.expr, st.what);
  s += fmt::format("  return {};\n}}\n\n", ep.result);
  s += fmt::format(
      "// The step's operands from the contract's inputs; the call is refused where they or the result are not the\n"
      "// traced ones.\n"
      "int load_store_epilogue(const cutegen_tensor* inputs, const cutegen_tensor& out, StoreEpilogue& ep) {{\n"
      "  if (cutegen::numel(out) != {}) return CUTEGEN_ERROR_UNSUPPORTED;\n",
      numel);
  for (const auto& o : ep.operands)
    s += fmt::format(
        "  ep.{0} = cutegen::data_as<const float>(inputs[{1}], CUTEGEN_FLOAT32);\n"
        "  if (!ep.{0}) return CUTEGEN_ERROR_BAD_ARGUMENTS;\n"
        "  if (cutegen::numel(inputs[{1}]) != {2} || !cutegen::is_contiguous(inputs[{1}])) "
        "return CUTEGEN_ERROR_UNSUPPORTED;\n",
        o.value, o.input, o.size);
  for (const auto& sc : ep.scalars)
    s += fmt::format(
        "  if (!inputs[{0}].is_host_scalar) return CUTEGEN_ERROR_BAD_ARGUMENTS;\n"
        "  ep.{1} = static_cast<float>(inputs[{0}].{2});\n",
        sc.index, sc.member, epilogue_scalar_field(sc.dtype));
  s += "  return CUTEGEN_OK;\n}\n\n";
  return s;
}

}  // namespace

std::string epilogue_description(const std::optional<StoreEpilogue>& epilogue) {
  return epilogue ? fmt::format(", then {} (folded into its store)", epilogue->description) : "";
}

std::string epilogue_pattern(const std::optional<StoreEpilogue>& epilogue) {
  return epilogue ? fmt::format(", then {} (folded into its store)", epilogue->pattern) : "";
}

std::string epilogue_offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                            const std::string& index) {
  const std::size_t rank = shape.size();
  std::vector<int64_t> later(rank, 1);  // the product of the dimensions after d
  for (std::size_t d = rank; d-- > 1;) later[d - 1] = later[d] * shape[d];
  bool in_order = true;
  for (std::size_t d = 0; d < rank; ++d) in_order = in_order && (shape[d] == 1 || strides.at(d) == later[d]);
  if (in_order) return index;
  std::vector<std::string> terms;
  for (std::size_t d = 0; d < rank; ++d) {
    if (shape[d] == 1 || strides.at(d) == 0) continue;
    std::string coord = index;
    if (later[d] != 1) coord += fmt::format(" / {}", later[d]);
    if (d > 0) coord += fmt::format(" % {}", shape[d]);  // the first dimension's coordinate is below its size
    terms.push_back(strides[d] == 1 ? coord : fmt::format("{} * {}", coord, strides[d]));
  }
  return terms.empty() ? "0" : fmt::format("{}", fmt::join(terms, " + "));
}

void fill_store_epilogue(std::string& text, const std::optional<StoreEpilogue>& epilogue) {
  // The stores first: `{{STORE(v; e)}}`, split at its last ';' (a C++ expression has none).
  for (auto at = text.find("{{STORE("); at != std::string::npos; at = text.find("{{STORE(", at)) {
    const auto end = text.find(")}}", at);
    const std::string inner = text.substr(at + 8, end - (at + 8));
    const auto semicolon = inner.rfind(';');
    std::string value = inner.substr(0, semicolon), index = inner.substr(semicolon + 1);
    while (!index.empty() && index.front() == ' ') index.erase(0, 1);
    const std::string store = epilogue ? fmt::format("store_epilogue(ep, {}, {})", value, index) : value;
    text.replace(at, end + 3 - at, store);
    at += store.size();
  }
  if (!epilogue) {
    for (const char* key : {"EPILOGUE_DEFS", "EPILOGUE_PARAM", "EPILOGUE_ARG", "EPILOGUE_LOAD"})
      replace_placeholder(text, key, "");
    return;
  }
  const bool define_clamps = text.find("float clamp_lo(") == std::string::npos &&
                             (epilogue_uses(*epilogue, "clamp_lo(") || epilogue_uses(*epilogue, "clamp_hi("));
  replace_placeholder(text, "EPILOGUE_PARAM", ", const StoreEpilogue ep");
  replace_placeholder(text, "EPILOGUE_ARG", ", ep");
  replace_placeholder(text, "EPILOGUE_LOAD",
                      "  StoreEpilogue ep{};  // the pointwise step folded into the store\n"
                      "  if (const int rc = load_store_epilogue(inputs, outputs[0], ep); rc != CUTEGEN_OK) "
                      "return rc;\n");
  // Last: the definitions hold the step's text, which is not searched for placeholders.
  replace_placeholder(text, "EPILOGUE_DEFS", epilogue_definitions(*epilogue, define_clamps));
}

}  // namespace cutegen::seed
