#pragma once
// `manual`: a person (or another agent) answers. The prompt goes to DIR/<hash>.prompt.md; the answer is
// read from DIR/<hash>.response.md once it appears. Resumable: an answer already there is used at once,
// so a run interrupted while waiting picks up where it stopped.
#include <chrono>
#include <filesystem>
#include <string>

#include "llm/hooks.h"
#include "llm/llm_types.h"

namespace cutegen {

struct ManualOptions {
  std::filesystem::path dir;
  std::string model = "manual";
  std::chrono::milliseconds poll_interval{1'000};
  std::chrono::milliseconds timeout{24LL * 3600 * 1000};
  std::chrono::milliseconds progress_every{30'000};
  ProgressFn progress;
};

class ManualBackend final : public LlmBackend {
 public:
  explicit ManualBackend(ManualOptions options);

  std::string kind() const override { return "manual"; }
  bool costs_money() const override { return false; }
  std::string model() const override { return options_.model; }
  // A response file counts once it is non-empty and unchanged over one poll interval, so an answer
  // still being written is not taken half-finished.
  Result<LlmResponse> complete(const LlmRequest& request) override;

  std::filesystem::path prompt_path(const LlmRequest& request) const;
  std::filesystem::path response_path(const LlmRequest& request) const;

 private:
  ManualOptions options_;
};

}  // namespace cutegen
