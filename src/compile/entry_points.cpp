#include "compile/entry_points.h"

#include <fmt/format.h>

namespace cutegen {

std::string entry_point_signatures() {
  return "extern \"C\" int cutegen_forward(const cutegen_tensor*, int32_t, const cutegen_tensor*, int32_t, "
         "cudaStream_t), or for a workspace both extern \"C\" size_t cutegen_workspace_bytes(const cutegen_tensor*, "
         "int32_t, const cutegen_tensor*, int32_t) and extern \"C\" int cutegen_forward_ws(const cutegen_tensor*, "
         "int32_t, const cutegen_tensor*, int32_t, void*, size_t, cudaStream_t)";
}

Result<EntryForm> entry_form(const EntryPoints& d) {
  bool any_ws = d.workspace_bytes || d.forward_ws;
  if (d.forward && any_ws)
    return Error{fmt::format("defines both {} and {}: a kernel with a workspace defines {} and {} instead of {}, "
                             "a kernel without one only {}",
                             kForwardSymbol, d.forward_ws ? kForwardWsSymbol : kWorkspaceBytesSymbol,
                             kWorkspaceBytesSymbol, kForwardWsSymbol, kForwardSymbol, kForwardSymbol)};
  if (d.workspace_bytes && !d.forward_ws)
    return Error{fmt::format("defines {} but not {}: the workspace is passed only to {}", kWorkspaceBytesSymbol,
                             kForwardWsSymbol, kForwardWsSymbol)};
  if (d.forward_ws && !d.workspace_bytes)
    return Error{fmt::format("defines {} but not {}: the harness must be told the workspace's size", kForwardWsSymbol,
                             kWorkspaceBytesSymbol)};
  if (d.forward) return EntryForm::plain;
  if (any_ws) return EntryForm::workspace;
  return Error{fmt::format("does not define {}: include <cutegen/kernel.h> and define {}", kForwardSymbol,
                           entry_point_signatures())};
}

}  // namespace cutegen
