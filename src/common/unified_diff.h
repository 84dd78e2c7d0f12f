#pragma once
// A unified diff between two versions of a kernel, for the run store (every step records what it
// changed) and for reports. Line-based, Myers' O(ND) shortest edit script: tiny for the one-step
// edits the loop makes, and exact (minimal) so the +/- counts are meaningful.
#include <string>
#include <string_view>

namespace cutegen {

struct DiffOptions {
  std::string before_label = "a/kernel.cu";
  std::string after_label = "b/kernel.cu";
  int context = 3;  // unchanged lines shown around each change
};

struct UnifiedDiff {
  std::string text;  // "" when the inputs are equal; otherwise "--- ...\n+++ ...\n@@ ... @@\n..." like diff -u
  int lines_added = 0;
  int lines_removed = 0;
  bool empty() const { return text.empty(); }
};

// Lines compare with their terminators, so a changed line ending or a lost final newline is a change
// (shown with "\ No newline at end of file", as diff -u does).
UnifiedDiff unified_diff(std::string_view before, std::string_view after, const DiffOptions& options = {});

}  // namespace cutegen
