#pragma once
// Test double for ProcessRunner: records every command and answers from a script.
#include <functional>
#include <mutex>
#include <vector>

#include "common/process.h"

namespace cutegen {

class FakeProcessRunner final : public ProcessRunner {
 public:
  using Handler = std::function<Result<ProcessResult>(const ProcessSpec&)>;
  explicit FakeProcessRunner(Handler handler) : handler_(std::move(handler)) {}

  Result<ProcessResult> run(const ProcessSpec& spec) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      calls_.push_back(spec);
    }
    return handler_(spec);
  }

  std::vector<ProcessSpec> calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

  static ProcessResult exited(int code, std::string out = "", std::string err = "") {
    ProcessResult r;
    r.exit_code = code;
    r.out = std::move(out);
    r.err = std::move(err);
    return r;
  }

 private:
  Handler handler_;
  mutable std::mutex mu_;
  std::vector<ProcessSpec> calls_;
};

}  // namespace cutegen
