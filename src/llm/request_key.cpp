#include "llm/request_key.h"

#include "common/sha256.h"

namespace cutegen {

nlohmann::json request_identity(const std::string& kind, const std::string& model, const LlmRequest& request) {
  // "v" lets a future change of this layout invalidate old cassettes loudly instead of mismatching quietly.
  return {{"v", 1},
          {"backend", kind},
          {"model", model},
          {"messages", to_json(request.messages)},
          {"params", to_json(request.params)}};
}

std::string request_hash(const std::string& kind, const std::string& model, const LlmRequest& request) {
  return sha256_hex(dump_json(request_identity(kind, model, request)));
}

}  // namespace cutegen
