#pragma once
// The boundary to the torch side (docs/worker-protocol.md). The judge talks to this interface; tests
// script it with FakeReferenceWorker, the tool uses PythonWorker.
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/file_lock.h"
#include "common/line_process.h"
#include "common/result.h"

namespace cutegen {

class ReferenceWorker {
 public:
  virtual ~ReferenceWorker() = default;
  // One request; the worker's `result` object, or an Error carrying the worker's message (for a
  // `problem` error that message tells the user what to fix in their file).
  virtual Result<nlohmann::json> call(const std::string& op, nlohmann::json args, std::chrono::seconds timeout) = 0;
};

struct PythonWorkerOptions {
  std::string python = "python3";           // $CUTEGEN_PYTHON overrides
  std::filesystem::path package_dir;        // holds cutegen_worker/; default: the source tree's python/
  std::filesystem::path log_path;           // the worker's stderr
  // Empty: `python -m cutegen_worker`, the worker cutegen runs. Tests that need the fake runner name
  // python/tests/fake_runner_worker.py, the same worker with it installed (test code stays out of the package).
  std::filesystem::path script;
};

class PythonWorker final : public ReferenceWorker {
 public:
  static Result<std::unique_ptr<PythonWorker>> start(PythonWorkerOptions options);
  ~PythonWorker() override;
  Result<nlohmann::json> call(const std::string& op, nlohmann::json args, std::chrono::seconds timeout) override;
  const std::filesystem::path& log_path() const { return options_.log_path; }

 private:
  PythonWorker(PythonWorkerOptions o, LineProcess p) : options_(std::move(o)), process_(std::move(p)) {}
  std::string log_tail() const;
  PythonWorkerOptions options_;
  LineProcess process_;
  int next_id_ = 1;
};

// Scripted stand-in: each call goes to the handler.
class FakeReferenceWorker final : public ReferenceWorker {
 public:
  using Handler = std::function<Result<nlohmann::json>(const std::string& op, const nlohmann::json& args)>;
  explicit FakeReferenceWorker(Handler h) : handler_(std::move(h)) {}
  Result<nlohmann::json> call(const std::string& op, nlohmann::json args, std::chrono::seconds) override {
    ops.push_back(op);
    return handler_(op, args);
  }
  std::vector<std::string> ops;

 private:
  Handler handler_;
};

std::filesystem::path default_worker_package_dir();

// Ends `worker` holding `lock` (null: no lock) until its process has exited. The exit tears down the CUDA
// context the worker's first `load` created (release_gpu keeps it), which the driver does on the GPU: on a
// GPU shared with other tasks (cutegen bench) that is GPU work like the load, so it waits its turn rather
// than land in another task's timed calls. Error: the lock could not be taken; the worker is ended anyway.
Status end_worker_holding(std::unique_ptr<ReferenceWorker> worker, DeviceLock* lock);

}  // namespace cutegen
