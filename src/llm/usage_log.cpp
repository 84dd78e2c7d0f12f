#include "llm/usage_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

namespace cutegen {

nlohmann::json CallRecord::to_json() const {
  nlohmann::json j = {{"time", time},
                      {"task", task},
                      {"backend", backend},
                      {"model", model},
                      {"request_hash", request_hash},
                      {"input_tokens", usage.input_tokens},
                      {"cached_input_tokens", usage.cached_input_tokens},
                      {"cache_write_tokens", usage.cache_write_tokens},
                      {"output_tokens", usage.output_tokens},
                      {"reasoning_tokens", usage.reasoning_tokens},
                      {"usage_reported", usage.reported},
                      {"cost_usd", cost.usd},
                      {"price_unknown", cost.price_unknown},
                      {"priced_as", cost.priced_as},
                      {"latency_s", latency_s},
                      {"attempts", attempts},
                      {"finish", to_string(finish)},
                      {"finish_detail", finish_detail},
                      {"replayed", replayed},
                      {"max_tokens", max_tokens ? nlohmann::json(*max_tokens) : nlohmann::json(nullptr)},
                      {"capped_by_budget", capped_by_budget}};
  j["error"] = error.empty() ? nlohmann::json(nullptr) : nlohmann::json(error);
  return j;
}

std::string utc_timestamp_now() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, static_cast<int>(ms));
}

Result<std::unique_ptr<UsageLog>> UsageLog::open(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("usage log: cannot open {}: {}", path.string(), std::strerror(errno))};
  return std::unique_ptr<UsageLog>(new UsageLog(path, fd));
}

UsageLog::~UsageLog() { ::close(fd_); }

Status UsageLog::append(const CallRecord& record) {
  std::string line = dump_json(record.to_json()) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t w = ::write(fd_, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return Error{fmt::format("usage log: cannot append to {}: {}", path_.string(), std::strerror(errno))};
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  return ok_status();
}

}  // namespace cutegen
