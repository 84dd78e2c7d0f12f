#pragma once
// Checks on an emitted kernel's text that several routes' tests share.
#include <string>

#include <gtest/gtest.h>

namespace cutegen::seed::testing {

// A chained file exports exactly the contract's two workspace entry points, cutegen_workspace_bytes first and
// then cutegen_forward_ws: every part's own entry points were made static.
inline ::testing::AssertionResult exports_only_the_workspace_pair(const std::string& src) {
  const auto first = src.find("extern \"C\"");
  if (first == std::string::npos) return ::testing::AssertionFailure() << "no extern \"C\" entry point";
  if (!src.substr(first).starts_with("extern \"C\" size_t cutegen_workspace_bytes("))
    return ::testing::AssertionFailure() << "the first entry point is not cutegen_workspace_bytes: "
                                         << src.substr(first, 60);
  const auto second = src.find("extern \"C\"", first + 1);
  if (second == std::string::npos) return ::testing::AssertionFailure() << "one extern \"C\" entry point only";
  if (src.find("extern \"C\"", second + 1) != std::string::npos)
    return ::testing::AssertionFailure() << "a third extern \"C\" entry point: " << src.substr(src.find("extern \"C\"", second + 1), 60);
  return ::testing::AssertionSuccess();
}

}  // namespace cutegen::seed::testing
