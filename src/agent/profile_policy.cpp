#include "agent/profile_policy.h"

#include <fmt/format.h>

namespace cutegen {

Result<ProfilePolicy> ProfilePolicy::parse(const std::string& text) {
  ProfilePolicy p;
  if (text == "auto") return p;
  if (text == "always") {
    p.mode_ = Mode::always;
    return p;
  }
  if (text == "never") {
    p.mode_ = Mode::never;
    return p;
  }
  try {
    size_t used = 0;
    int n = std::stoi(text, &used);
    if (used == text.size() && n >= 1) {
      p.mode_ = Mode::from_step;
      p.from_step_ = n;
      return p;
    }
  } catch (const std::exception&) {
  }
  return Error{fmt::format("--profile-from '{}' is not valid: use auto, always, never or a step number >= 1", text)};
}

int ProfilePolicy::first_step(const std::string& workload_class) const {
  auto it = first_step_.find(workload_class);
  return it == first_step_.end() ? first_step_.at("other") : it->second;
}

bool ProfilePolicy::should_profile(const std::string& workload_class, int step, int non_improving_streak) const {
  switch (mode_) {
    case Mode::always: return true;
    case Mode::never: return false;
    case Mode::from_step: return step >= from_step_;
    case Mode::automatic:
      return step >= first_step(workload_class) || non_improving_streak >= kPlateauSteps;
  }
  return false;
}

std::string ProfilePolicy::explain(const std::string& workload_class, int step, int non_improving_streak) const {
  bool yes = should_profile(workload_class, step, non_improving_streak);
  switch (mode_) {
    case Mode::always: return "profile: always";
    case Mode::never: return "profile: never";
    case Mode::from_step: return fmt::format("profile: {} (from step {})", yes ? "yes" : "not yet", from_step_);
    case Mode::automatic:
      if (step >= first_step(workload_class))
        return fmt::format("profile: yes ({} kernels from step {})", workload_class, first_step(workload_class));
      if (non_improving_streak >= kPlateauSteps)
        return fmt::format("profile: yes (plateau: {} steps without improvement)", non_improving_streak);
      return fmt::format("profile: not yet ({} kernels from step {} or after a {}-step plateau)", workload_class,
                         first_step(workload_class), kPlateauSteps);
  }
  return "";
}

std::string ProfilePolicy::to_string() const {
  switch (mode_) {
    case Mode::always: return "always";
    case Mode::never: return "never";
    case Mode::from_step: return std::to_string(from_step_);
    case Mode::automatic: return "auto";
  }
  return "auto";
}

}  // namespace cutegen
