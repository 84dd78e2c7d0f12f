#include "profile/profile_provider.h"

namespace cutegen {

std::string to_string(ProfileStatus s) {
  switch (s) {
    case ProfileStatus::ok: return "ok";
    case ProfileStatus::counters_unavailable: return "counters_unavailable";
    case ProfileStatus::ncu_missing: return "ncu_missing";
    case ProfileStatus::no_kernels: return "no_kernels";
    case ProfileStatus::timeout: return "timeout";
    case ProfileStatus::failed: return "failed";
  }
  return "unknown";
}

nlohmann::json ProfileReport::to_json() const {
  nlohmann::json j;
  j["status"] = to_string(status);
  j["message"] = message;
  j["summary"] = summary;
  j["notes"] = notes;
  j["signals"] = nlohmann::json::array();
  for (const auto& s : signals) j["signals"].push_back(cutegen::to_json(s));
  j["kernels"] = nlohmann::json::array();
  for (const auto& k : kernels) j["kernels"].push_back(k.to_json());
  j["command"] = command;
  j["log"] = log_path.string();
  j["seconds"] = seconds;
  return j;
}

}  // namespace cutegen
