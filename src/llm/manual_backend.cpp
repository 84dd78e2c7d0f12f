#include "llm/manual_backend.h"

#include <sys/stat.h>

#include <thread>

#include <fmt/format.h>

#include "common/fs.h"
#include "llm/request_key.h"

namespace cutegen {
namespace fs = std::filesystem;

namespace {

struct FileState {
  bool present = false;
  off_t size = 0;
  timespec mtime{};
  bool operator==(const FileState& o) const {
    return present == o.present && size == o.size && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
  }
};

FileState state_of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {true, st.st_size, st.st_mtim};
}

Result<LlmResponse> answer_from(const fs::path& path, const std::string& model) {
  auto text = read_file(path);
  if (!text) return Error{fmt::format("manual: {}", text.error().message)};
  LlmResponse r;
  r.text = *text;
  r.finish = FinishReason::stop;
  r.finish_detail = "response file";
  r.model = model;
  r.usage.reported = false;
  return r;
}

}  // namespace

ManualBackend::ManualBackend(ManualOptions options) : options_(std::move(options)) {}

fs::path ManualBackend::prompt_path(const LlmRequest& request) const {
  return options_.dir / (request_hash(kind(), model(), request) + ".prompt.md");
}

fs::path ManualBackend::response_path(const LlmRequest& request) const {
  return options_.dir / (request_hash(kind(), model(), request) + ".response.md");
}

Result<LlmResponse> ManualBackend::complete(const LlmRequest& request) {
  auto prompt = prompt_path(request);
  auto response = response_path(request);
  if (auto s = state_of(response); s.present && s.size > 0) return answer_from(response, model());

  if (auto written = write_file_atomic(prompt, render_as_text(request.messages)); !written)
    return Error{fmt::format("manual: {}", written.error().message)};
  auto say = [this](const std::string& line) {
    if (options_.progress) options_.progress(line);
  };
  say(fmt::format("manual: prompt in {}; waiting for the answer in {}", prompt.string(), response.string()));

  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  auto last_progress = start;
  FileState previous;
  for (;;) {
    std::this_thread::sleep_for(options_.poll_interval);
    FileState now = state_of(response);
    if (now.present && now.size > 0 && now == previous) return answer_from(response, model());
    previous = now;
    auto t = clock::now();
    if (t - start >= options_.timeout)
      return Error{fmt::format("manual: no answer in {} after {:.0f} s; write it there and run again (the prompt is {})",
                               response.string(), std::chrono::duration<double>(t - start).count(), prompt.string())};
    if (t - last_progress >= options_.progress_every) {
      last_progress = t;
      say(fmt::format("manual: still waiting for {} ({:.0f} s)", response.string(),
                      std::chrono::duration<double>(t - start).count()));
    }
  }
}

}  // namespace cutegen
