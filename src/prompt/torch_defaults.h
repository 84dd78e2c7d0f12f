#pragma once
// Numerical defaults of PyTorch modules and functions that a reference relies on without writing
// them: `nn.LayerNorm(hidden)` normalises with eps=1e-05, `F.leaky_relu(x)` uses a slope of 0.01. A
// kernel must use the same values, and a prompt that only shows the source leaves them to the LLM's
// memory; the tensor table states them instead. Found by reading the reference's source for the calls
// in a fixed table, so a call written another way (an alias, `*args`) is simply not listed.
#include <string>
#include <string_view>
#include <vector>

namespace cutegen {

struct ImpliedDefault {
  std::string call;   // as the source names it: "nn.LayerNorm", "F.normalize"
  std::string param;  // "eps"
  std::string value;  // PyTorch's default, as Python writes it: "1e-05"
};

// Each (call, parameter, default) once, in the order the source first uses them; a parameter the
// call passes, by keyword or by position, is not listed.
std::vector<ImpliedDefault> implied_defaults(std::string_view reference_source);

}  // namespace cutegen
