#pragma once
// One record per LLM call, appended as a JSON line to a file the caller names (the run store passes
// its own). Records never contain prompts, answers, headers or keys: only what the call cost.
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "llm/llm_types.h"
#include "llm/price_table.h"

namespace cutegen {

struct CallRecord {
  std::string time;  // UTC, ISO 8601 with milliseconds, when the call ended
  std::string task;  // the caller's label, may be empty
  std::string backend;
  std::string model;  // as reported by the server, else as configured
  std::string request_hash;
  Usage usage;
  Cost cost;
  double latency_s = 0;
  int attempts = 0;
  FinishReason finish = FinishReason::other;
  std::string finish_detail;
  bool replayed = false;
  std::optional<int> max_tokens;  // the output limit the request was sent with; empty: none stated
  bool capped_by_budget = false;  // a budget lowered max_tokens to what it had left
  std::string error;  // empty when the call was answered (a failed recording is here, with the usage)

  nlohmann::json to_json() const;
};

std::string utc_timestamp_now();

// Thread-safe; each record is one write(2) to an O_APPEND file, so lines from concurrent callers (and
// processes) never interleave.
class UsageLog {
 public:
  static Result<std::unique_ptr<UsageLog>> open(const std::filesystem::path& path);
  ~UsageLog();
  UsageLog(const UsageLog&) = delete;
  UsageLog& operator=(const UsageLog&) = delete;

  Status append(const CallRecord& record);
  const std::filesystem::path& path() const { return path_; }

 private:
  UsageLog(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_;
  std::mutex mu_;
};

}  // namespace cutegen
