#pragma once
#include <string>

namespace cutegen {

// One broken rule of the kernel contract, found before or after nvcc.
struct CheckViolation {
  std::string code;     // stable identifier, e.g. "forbidden-import"; tests and the agent key on it
  std::string message;  // names the symbol/library/line and says what the contract allows instead
};

}  // namespace cutegen
