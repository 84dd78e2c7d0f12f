#include "prompt/prompt_inputs.h"

#include <fmt/format.h>

namespace cutegen {

const std::vector<WorkloadClass>& all_workload_classes() {
  static const std::vector<WorkloadClass> classes = {WorkloadClass::gemm,      WorkloadClass::elementwise,
                                                     WorkloadClass::reduction, WorkloadClass::conv,
                                                     WorkloadClass::attention, WorkloadClass::other};
  return classes;
}

std::string_view to_string(WorkloadClass c) {
  switch (c) {
    case WorkloadClass::gemm: return "gemm";
    case WorkloadClass::elementwise: return "elementwise";
    case WorkloadClass::reduction: return "reduction";
    case WorkloadClass::conv: return "conv";
    case WorkloadClass::attention: return "attention";
    case WorkloadClass::other: return "other";
  }
  return "other";
}

Result<WorkloadClass> parse_workload_class(std::string_view name) {
  std::string known;
  for (WorkloadClass c : all_workload_classes()) {
    if (name == to_string(c)) return c;
    known += fmt::format("{}{}", known.empty() ? "" : ", ", to_string(c));
  }
  return Error{fmt::format("unknown workload class \"{}\"; use one of: {}", name, known)};
}

std::string_view to_string(TensorRole r) {
  switch (r) {
    case TensorRole::forward_input: return "forward() argument";
    case TensorRole::host_scalar: return "forward() scalar argument (host value)";
    case TensorRole::parameter: return "parameter";
    case TensorRole::buffer: return "buffer";
    case TensorRole::output: return "output";
  }
  return "?";
}

std::string_view to_string(FailureKind k) {
  switch (k) {
    case FailureKind::compile_error: return "compile error";
    case FailureKind::rejected: return "rejected by the static checks";
    case FailureKind::runtime_error: return "runtime failure";
    case FailureKind::wrong_result: return "wrong result";
  }
  return "?";
}

Result<FailureKind> failure_kind_for_verdict(std::string_view verdict) {
  static const std::vector<std::pair<std::string_view, FailureKind>> table = {
      {"compile_error", FailureKind::compile_error},  {"rejected", FailureKind::rejected},
      {"load_failed", FailureKind::runtime_error},    {"kernel_error", FailureKind::runtime_error},
      {"cuda_error", FailureKind::runtime_error},     {"crash", FailureKind::runtime_error},
      {"timeout", FailureKind::runtime_error},        {"printed_output", FailureKind::runtime_error},
      {"hidden_work", FailureKind::runtime_error},    {"mismatch", FailureKind::wrong_result},
      {"unwritten", FailureKind::wrong_result},       {"nondeterministic", FailureKind::wrong_result},
      {"input_mutated", FailureKind::wrong_result},   {"result_reuse", FailureKind::wrong_result},
      {"forbidden_call", FailureKind::runtime_error}, {"tampering", FailureKind::runtime_error},
  };
  for (const auto& [word, kind] : table)
    if (word == verdict) return kind;
  return Error{fmt::format("verdict \"{}\" is not a failure the prompts know; map it in prompt_inputs.cpp", verdict)};
}

std::string_view to_string(StepOutcome o) {
  switch (o) {
    case StepOutcome::improved: return "improved";
    case StepOutcome::not_faster: return "not_faster";
    case StepOutcome::compile_error: return "compile_error";
    case StepOutcome::rejected: return "rejected";
    case StepOutcome::runtime_error: return "runtime_error";
    case StepOutcome::wrong_result: return "wrong_result";
    case StepOutcome::bad_answer: return "bad_answer";
  }
  return "?";
}

}  // namespace cutegen
