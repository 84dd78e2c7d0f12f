#include "bench/suite_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "common/fs.h"

namespace cutegen::bench {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "cutegen-bench/1";

std::string first_difference(const nlohmann::json& was, const nlohmann::json& now) {
  for (const auto& [k, v] : was.items())
    if (!now.contains(k) || now[k] != v)
      return fmt::format("{} was {}, now {}", k, v.dump(), now.contains(k) ? now[k].dump() : "unset");
  for (const auto& [k, v] : now.items())
    if (!was.contains(k)) return fmt::format("{} was unset, now {}", k, v.dump());
  return "";
}

}  // namespace

nlohmann::json Manifest::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : tasks)
    list.push_back({{"name", t.name}, {"problem", t.path.string()},
                    {"number", t.number ? nlohmann::json(*t.number) : nlohmann::json(nullptr)}});
  return {{"format", kFormat}, {"mode", mode}, {"llm", llm}, {"settings", settings}, {"tasks", list}};
}

Result<Manifest> Manifest::from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("format", "") != kFormat)
    return Error{fmt::format("suite.json is not a {} manifest", kFormat)};
  Manifest m;
  try {
    m.mode = j.at("mode").get<std::string>();
    m.llm = j.value("llm", "");
    m.settings = j.value("settings", nlohmann::json::object());
    for (const auto& t : j.at("tasks")) {
      ProblemTask task{t.at("name").get<std::string>(), t.at("problem").get<std::string>(), std::nullopt};
      if (t.contains("number") && t["number"].is_number_integer()) task.number = t["number"].get<int>();
      m.tasks.push_back(task);
    }
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("suite.json is damaged: {}", e.what())};
  }
  return m;
}

Result<SuiteDir> SuiteDir::open(const fs::path& dir, const Manifest& manifest) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    return Error{fmt::format("{} exists and is not a directory; choose another --out", dir.string())};
  if (fs::is_directory(dir, ec) && !fs::exists(dir / "suite.json", ec) && !fs::is_empty(dir, ec))
    return Error{fmt::format("{} is not empty and holds no suite.json; choose a new or empty --out, or a suite's directory",
                             dir.string())};
  for (const char* sub : {"tasks", "results", "logs", "locks"}) {
    fs::create_directories(dir / sub, ec);
    if (ec) return Error{fmt::format("cannot create {}: {}", (dir / sub).string(), ec.message())};
  }
  // Shards start together: the manifest is merged under a lock so none loses another's tasks.
  auto lock = FileLock::lock(dir / "locks" / "suite.lock");
  if (!lock) return lock.error();
  Manifest merged = manifest;
  if (fs::exists(dir / "suite.json")) {
    auto text = read_file(dir / "suite.json");
    if (!text) return text.error();
    auto was = Manifest::from_json(nlohmann::json::parse(*text, nullptr, false));
    if (!was) return Error{fmt::format("{}: {}", (dir / "suite.json").string(), was.error().message)};
    std::string diff;
    if (was->mode != manifest.mode) diff = fmt::format("mode was {}, now {}", was->mode, manifest.mode);
    else if (was->llm != manifest.llm) diff = fmt::format("--llm was {}, now {}", was->llm, manifest.llm);
    else diff = first_difference(was->settings, manifest.settings);
    if (!diff.empty())
      return Error{fmt::format("{} holds a suite started with other settings ({}); rerun with the same options, or "
                               "choose another --out", dir.string(), diff)};
    std::map<std::string, const ProblemTask*> known;
    for (const auto& t : was->tasks) known[t.name] = &t;
    merged.tasks = was->tasks;
    for (const auto& t : manifest.tasks) {
      auto it = known.find(t.name);
      if (it == known.end()) {
        merged.tasks.push_back(t);
      } else if (it->second->path != t.path) {
        return Error{fmt::format("task {} of {} is {}, not {}; choose another --out", t.name, dir.string(),
                                 it->second->path.string(), t.path.string())};
      }
    }
    std::sort(merged.tasks.begin(), merged.tasks.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  }
  if (auto w = write_file_atomic(dir / "suite.json", merged.to_json().dump(2) + "\n"); !w) return w.error();
  return SuiteDir(dir, merged);
}

Result<SuiteDir> SuiteDir::open_existing(const fs::path& dir) {
  auto text = read_file(dir / "suite.json");
  if (!text) return Error{fmt::format("{} is not a cutegen bench suite (no readable suite.json)", dir.string())};
  auto m = Manifest::from_json(nlohmann::json::parse(*text, nullptr, false));
  if (!m) return Error{fmt::format("{}: {}", (dir / "suite.json").string(), m.error().message)};
  return SuiteDir(dir, *m);
}

Result<std::optional<TaskRecord>> SuiteDir::read_record(const std::string& name) const {
  return read_task_record(result_path(name));
}

Status SuiteDir::write_record(const TaskRecord& record) const {
  return write_file_atomic(result_path(record.name), record.to_json().dump(2) + "\n");
}

Status SuiteDir::append_log(const std::string& name, const std::string& text) const {
  fs::path p = log_path(name);
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot write {}: {}", p.string(), std::strerror(errno))};
  const char* d = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t w = ::write(fd, d, left);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) break;
    d += w;
    left -= static_cast<size_t>(w);
  }
  ::close(fd);
  return ok_status();
}

bool SuiteDir::running(const std::string& name) const {
  std::error_code ec;
  if (!fs::exists(lock_path(name), ec)) return false;
  auto l = FileLock::try_lock(lock_path(name));
  return l.ok() && !l->held();
}

SuiteDir::Collected SuiteDir::collect() const {
  Collected out;
  for (const auto& t : manifest_.tasks) {
    auto r = read_record(t.name);
    if (!r) {
      // One bad file must not hide every other task's result; the caller says which one was left out.
      std::string why = r.error().message;
      const std::string prefix = result_path(t.name).string() + ": ";
      if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
      out.damaged.push_back({t.name, result_path(t.name).string(), why});
      continue;
    }
    TaskRecord rec;
    if (*r) rec = **r;
    rec.name = t.name;
    rec.problem = t.path.string();
    rec.number = t.number;
    rec.mode = manifest_.mode;
    if (!is_final(rec.verdict) && running(t.name)) rec.verdict = TaskVerdict::running;
    out.records.push_back(rec);
  }
  return out;
}

Spend SuiteDir::spend() const {
  Spend s;
  for (const auto& t : manifest_.tasks) {
    std::ifstream in(task_dir(t.name) / "usage.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object()) continue;  // a torn last line
      if (auto r = j.find("replayed"); r != j.end() && r->is_boolean() && r->get<bool>()) continue;  // cost nothing new
      // A field of another type (a damaged line) counts as 0 rather than stopping `bench status`.
      auto number = [&j](const char* key) {
        auto it = j.find(key);
        return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
      };
      ++s.calls;
      s.tokens += static_cast<long long>(number("input_tokens") + number("output_tokens"));
      s.cost_usd += number("cost_usd");
    }
  }
  return s;
}

}  // namespace cutegen::bench
