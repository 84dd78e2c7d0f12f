#include "prompt/prompt_inputs.h"

#include <fmt/format.h>

namespace cutegen {

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

Result<FailureKind> failure_kind_for_verdict(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass: break;
    case Verdict::compile_error: return FailureKind::compile_error;
    case Verdict::rejected: return FailureKind::rejected;
    case Verdict::load_failed:
    case Verdict::kernel_error:
    case Verdict::cuda_error:
    case Verdict::crash:
    case Verdict::timeout:
    case Verdict::printed_output:
    case Verdict::hidden_work:
    case Verdict::forbidden_call:
    case Verdict::tampering:
    case Verdict::host_compute: return FailureKind::runtime_error;
    case Verdict::mismatch:
    case Verdict::unwritten:
    case Verdict::nondeterministic:
    case Verdict::input_mutated:
    case Verdict::result_reuse:
    case Verdict::shape_specific: return FailureKind::wrong_result;
  }
  return Error{fmt::format("verdict \"{}\" is not a failure", to_string(verdict))};
}

}  // namespace cutegen
