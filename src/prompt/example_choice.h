#pragma once
// Which library kernel (library/) the synthesis and restart prompts show, chosen from what
// the problem is: its workload class, the aten ops its forward pass runs, its dtype and the precision
// policy. The LLM imitates the example it is shown, so it is the fastest library kernel of the
// problem's kind, not a toy; the prompt says which one it is and why (ExampleChoice::why).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/evaluation.h"

namespace cutegen {

struct ExampleFacts {
  WorkloadClass workload = WorkloadClass::other;
  std::vector<std::string> aten_ops;  // "aten::_softmax", ... (ProblemFacts::aten_ops); may be empty
  std::string dtype;                  // the problem's least precise floating dtype ("float32", "bfloat16")
  Precision precision = Precision::strict;
};

struct ExampleChoice {
  std::string_view file;  // in library/, e.g. "gemm_sm90_3xtf32.cu"
  std::string why;        // one line for the prompt: what the kernel is, its idioms, its measured speed
};

// Pure: the same facts always give the same file.
ExampleChoice choose_example(const ExampleFacts& facts);

// Every file choose_example can return, so the prompt library can load (and check) them all up front.
std::span<const std::string_view> example_files();

}  // namespace cutegen
