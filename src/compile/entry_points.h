#pragma once
// The contract's entry points (include/cutegen/kernel.h) and which combinations a library may
// export. Shared by the static library check, which rejects a bad combination before anything runs,
// and the runner, which decides how to call what it loaded (and refuses the same combinations, since
// it must not trust that the check ran).
#include <string>

#include "common/result.h"

namespace cutegen {

inline constexpr const char* kForwardSymbol = "cutegen_forward";             // version 1
inline constexpr const char* kWorkspaceBytesSymbol = "cutegen_workspace_bytes";  // version 2, with ...
inline constexpr const char* kForwardWsSymbol = "cutegen_forward_ws";        // ... this one

// Which of the entry points a library defines.
struct EntryPoints {
  bool forward = false;
  bool workspace_bytes = false;
  bool forward_ws = false;
};

enum class EntryForm {
  plain,      // cutegen_forward only
  workspace,  // cutegen_workspace_bytes + cutegen_forward_ws, asked for its size once at load
};

// The form a library's exports select, or a one-line error naming what is missing or extra.
Result<EntryForm> entry_form(const EntryPoints& defined);

// The C declarations of both forms, for messages that tell the author what to define.
std::string entry_point_signatures();

}  // namespace cutegen
