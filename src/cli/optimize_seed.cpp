#include "cli/optimize_seed.h"

namespace cutegen::cli {
namespace {

class NoLlm final : public LlmBackend {
 public:
  std::string kind() const override { return "none"; }
  std::string model() const override { return "seed"; }
  bool costs_money() const override { return false; }
  Result<LlmResponse> complete(const LlmRequest&) override {
    return Error{"this run has no LLM (--llm none): give --llm to let one write or repair the kernel"};
  }
};

}  // namespace

std::unique_ptr<LlmBackend> make_no_llm_backend() { return std::make_unique<NoLlm>(); }

}  // namespace cutegen::cli
