#pragma once
// The identity of an LLM request: what decides the answer (backend kind, model, messages, generation
// parameters) as canonical JSON, and its SHA-256. Cassettes and the manual backend name files by it.
#include <string>

#include <nlohmann/json.hpp>

#include "llm/llm_types.h"

namespace cutegen {

// Keys sorted, no whitespace (nlohmann::json's default object is ordered by key), so equal requests
// always serialise to equal bytes. Timeouts and retry settings are not part of it: they do not change
// the answer.
nlohmann::json request_identity(const std::string& kind, const std::string& model, const LlmRequest& request);

std::string request_hash(const std::string& kind, const std::string& model, const LlmRequest& request);

}  // namespace cutegen
