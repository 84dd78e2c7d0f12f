#pragma once
// `exec`: pipes the conversation (roles marked, see render_as_text) to the user's shell command on stdin
// and takes its stdout as the answer, e.g. `exec:'llm -m gpt-5'` or a script around a local model.
#include <chrono>
#include <string>
#include <vector>

#include "common/process.h"
#include "llm/llm_types.h"

namespace cutegen {

struct ExecOptions {
  std::string command;  // run as `sh -c COMMAND`
  std::string model;    // a label for records and the request hash; empty: the command itself
  std::chrono::milliseconds timeout{600'000};
  // The command inherits the environment, keys included (an `llm`-style CLI needs them); should it print
  // them on stderr, they are cut out of the error messages that quote it.
  std::vector<std::string> secrets;
};

class ExecBackend final : public LlmBackend {
 public:
  ExecBackend(ProcessRunner& runner, ExecOptions options);

  std::string kind() const override { return "exec"; }
  bool costs_money() const override { return false; }
  std::string model() const override { return options_.model.empty() ? options_.command : options_.model; }
  // The generation parameters that are set reach the command as CUTEGEN_LLM_MAX_TOKENS,
  // CUTEGEN_LLM_TEMPERATURE, CUTEGEN_LLM_REASONING_EFFORT and CUTEGEN_LLM_THINKING_BUDGET.
  Result<LlmResponse> complete(const LlmRequest& request) override;

 private:
  ProcessRunner& runner_;
  ExecOptions options_;
};

}  // namespace cutegen
