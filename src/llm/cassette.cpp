#include "llm/cassette.h"

#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/fs.h"
#include "llm/request_key.h"

namespace cutegen {
namespace fs = std::filesystem;
using nlohmann::json;

json cassette_entry(const std::string& kind, const std::string& model, const LlmRequest& request,
                    const LlmResponse& response) {
  return {{"cutegen_cassette", kCassetteFormat},
          {"hash", request_hash(kind, model, request)},
          {"request", request_identity(kind, model, request)},
          {"response", to_json(response)}};
}

RecordingBackend::RecordingBackend(std::unique_ptr<LlmBackend> inner, fs::path dir)
    : inner_(std::move(inner)), dir_(std::move(dir)) {}

Result<LlmResponse> RecordingBackend::complete(const LlmRequest& request) {
  auto start = std::chrono::steady_clock::now();
  auto response = inner_->complete(request);
  if (!response) return response;
  response->latency_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  json entry = cassette_entry(inner_->kind(), inner_->model(), request, *response);
  auto path = dir_ / (entry["hash"].get<std::string>() + ".json");
  if (auto written = write_file_atomic(path, dump_json(entry, 2) + "\n"); !written) {
    response->recording_error = fmt::format("record: {}", written.error().message);
    return response;
  }
  std::lock_guard lock(order_mu_);
  std::string order_text;
  if (auto existing = read_file(dir_ / "recorded-order"); existing) order_text = *existing;
  order_text += path.filename().string() + "\n";
  if (auto written = write_file_atomic(dir_ / "recorded-order", order_text); !written)
    response->recording_error = fmt::format("record: {}", written.error().message);
  return response;
}

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (!line.empty()) out.push_back(line);
    pos = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<ReplayBackend>> ReplayBackend::open(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Error{fmt::format("replay: cassette directory {} does not exist; record one with --record {}", dir.string(),
                             dir.string())};
  std::set<std::pair<std::string, std::string>> identities;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    auto text = read_file(entry.path());
    if (!text) return Error{fmt::format("replay: {}", text.error().message)};
    auto j = json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("request") || !j["request"].is_object() ||
        !j["request"].contains("backend") || !j["request"]["backend"].is_string() ||
        !j["request"].contains("model") || !j["request"]["model"].is_string())
      return Error{fmt::format("replay: {} is not a cassette entry (no request.backend/request.model)",
                               entry.path().string())};
    identities.emplace(j["request"]["backend"].get<std::string>(), j["request"]["model"].get<std::string>());
  }
  if (ec) return Error{fmt::format("replay: cannot list {}: {}", dir.string(), ec.message())};
  std::vector<std::string> order;
  if (fs::exists(dir / "match-in-order", ec)) {
    auto text = read_file(dir / "match-in-order");
    if (!text) return Error{fmt::format("replay: {}", text.error().message)};
    order = split_lines(*text);
    for (const auto& name : order)
      if (!fs::exists(dir / name, ec))
        return Error{fmt::format("replay: {} names {}, which is not in the cassette", (dir / "match-in-order").string(),
                                 name)};
  }
  return std::unique_ptr<ReplayBackend>(new ReplayBackend(dir, {identities.begin(), identities.end()}, std::move(order)));
}

ReplayBackend::ReplayBackend(fs::path dir, std::vector<std::pair<std::string, std::string>> identities,
                             std::vector<std::string> order)
    : dir_(std::move(dir)), identities_(std::move(identities)), order_(std::move(order)) {}

Result<LlmResponse> ReplayBackend::load_entry(const fs::path& path) const {
  auto text = read_file(path);
  if (!text) return Error{fmt::format("replay: {}", text.error().message)};
  auto j = json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("response"))
    return Error{fmt::format("replay: {} is not a cassette entry", path.string())};
  auto response = response_from_json(j["response"]);
  if (!response) return Error{fmt::format("replay: {}: {}", path.string(), response.error().message)};
  response->replayed = true;
  return response;
}

Result<std::string> ReplayBackend::first_line_at_cursor() const {
  auto text = read_file(dir_ / order_[cursor_]);
  if (!text) return Error{fmt::format("replay: {}", text.error().message)};
  auto j = json::parse(*text, nullptr, false);
  std::string recorded_first;
  if (!j.is_discarded() && j.contains("request") && j["request"].contains("messages")) {
    auto messages = messages_from_json(j["request"]["messages"]);
    if (messages) recorded_first = first_user_line(*messages);
  }
  return recorded_first;
}

void ReplayBackend::answered_from_log(const LlmRequest& request) {
  std::lock_guard lock(mu_);
  if (cursor_ >= order_.size()) return;
  for (const auto& [kind, model] : identities_)
    if (order_[cursor_] == request_hash(kind, model, request) + ".json") {
      ++cursor_;
      return;
    }
  // The log is the authority on what was asked: a question of another kind than the entry at the
  // cursor leaves the cursor where it is (complete() reports going off the script if it matters).
  auto recorded = first_line_at_cursor();
  if (recorded && *recorded == first_user_line(request.messages)) ++cursor_;
}

std::string ReplayBackend::model() const { return identities_.size() == 1 ? identities_.front().second : "replay"; }

Result<LlmResponse> ReplayBackend::complete(const LlmRequest& request) {
  std::lock_guard lock(mu_);
  std::vector<std::string> tried;
  for (const auto& [kind, model] : identities_) {
    std::string hash = request_hash(kind, model, request);
    std::string name = hash + ".json";
    std::error_code ec;
    if (!fs::exists(dir_ / name, ec)) {
      tried.push_back(identities_.size() == 1 ? hash : fmt::format("{} ({} {})", hash, kind, model));
      continue;
    }
    if (cursor_ < order_.size() && order_[cursor_] == name) ++cursor_;  // an exact hit keeps the order in step
    return load_entry(dir_ / name);
  }
  const std::string first_line = first_user_line(request.messages);
  if (cursor_ < order_.size()) {
    const fs::path path = dir_ / order_[cursor_];
    auto recorded = first_line_at_cursor();
    if (!recorded) return recorded.error();
    const std::string& recorded_first = *recorded;
    if (recorded_first != first_line)
      return Error{fmt::format("replay: the loop went off the cassette's script at entry {} of {}: it asked \"{}\" but "
                               "the cassette recorded \"{}\" next",
                               cursor_ + 1, (dir_ / "match-in-order").string(), first_line, recorded_first)};
    ++cursor_;
    return load_entry(path);
  }
  std::string what = identities_.empty()
                         ? fmt::format("{} holds no recordings", dir_.string())
                         : fmt::format("no recording of request {} in {}", fmt::join(tried, ", "), dir_.string());
  return Error{fmt::format("replay: {} (first user line: \"{}\"); record it with --record {}", what, first_line,
                           dir_.string())};
}

}  // namespace cutegen
