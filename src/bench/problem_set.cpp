#include "bench/problem_set.h"

#include <glob.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/fs.h"

namespace cutegen::bench {
namespace fs = std::filesystem;
namespace {

bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// Text checks, not an import: deciding what a directory holds must not run its code.
bool looks_like_problem(const fs::path& file) {
  auto text = read_file(file);
  if (!text) return false;
  return text->find("class Model") != std::string::npos && text->find("def get_inputs") != std::string::npos;
}

Status add_directory(const fs::path& dir, const std::string& argument, std::vector<fs::path>& out) {
  std::error_code ec;
  size_t before = out.size();
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".py" && looks_like_problem(e.path())) out.push_back(e.path());
  if (ec) return Error{fmt::format("cannot read the directory {}: {}", argument, ec.message())};
  if (out.size() == before)
    return Error{fmt::format("{} holds no problem files (*.py defining class Model and get_inputs)", argument)};
  return ok_status();
}

Status add_argument(const std::string& argument, std::vector<fs::path>& out) {
  std::vector<std::string> paths;
  if (has_glob_chars(argument) && !fs::exists(argument)) {
    glob_t g{};
    int rc = ::glob(argument.c_str(), 0, nullptr, &g);
    for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) paths.emplace_back(g.gl_pathv[i]);
    ::globfree(&g);
    if (paths.empty()) return Error{fmt::format("{} matches no file", argument)};
  } else {
    paths.push_back(argument);
  }
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      if (auto s = add_directory(p, p, out); !s) return s;
    } else if (fs::is_regular_file(p, ec)) {
      out.push_back(p);
    } else {
      return Error{fmt::format("{} does not exist (PROBLEMS are problem files, directories of them, or globs)", p)};
    }
  }
  return ok_status();
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::optional<int> parse_int(const std::string& s) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), ::isdigit)) return std::nullopt;
  return std::stoi(s);
}

}  // namespace

std::optional<int> task_number(const std::string& stem) {
  size_t n = 0;
  while (n < stem.size() && std::isdigit(static_cast<unsigned char>(stem[n]))) ++n;
  if (n == 0 || n > 9 || (n < stem.size() && stem[n] != '_')) return std::nullopt;
  return std::stoi(stem.substr(0, n));
}

Result<std::vector<ProblemTask>> discover_problems(const std::vector<std::string>& arguments) {
  if (arguments.empty()) return Error{"no PROBLEMS given: name problem files, directories of them, or globs"};
  std::vector<fs::path> files;
  for (const auto& a : arguments)
    if (auto s = add_argument(a, files); !s) return s.error();
  // The same file named twice (a directory and a glob inside it) is one task.
  std::set<fs::path> seen;
  std::vector<fs::path> unique;
  for (const auto& f : files) {
    fs::path abs = fs::weakly_canonical(fs::absolute(f));
    if (seen.insert(abs).second) unique.push_back(abs);
  }
  std::map<std::string, int> stems;
  for (const auto& f : unique) ++stems[f.stem().string()];
  std::vector<ProblemTask> tasks;
  std::map<std::string, fs::path> names;
  for (const auto& f : unique) {
    std::string stem = f.stem().string();
    std::string name = stems[stem] > 1 ? f.parent_path().filename().string() + "-" + stem : stem;
    if (auto [it, fresh] = names.emplace(name, f); !fresh)
      return Error{fmt::format("{} and {} would both be task {}; rename one or run them as separate suites",
                               it->second.string(), f.string(), name)};
    tasks.push_back({name, f, task_number(stem)});
  }
  std::sort(tasks.begin(), tasks.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return tasks;
}

bool TaskTerm::matches(const ProblemTask& t) const {
  if (low) return t.number && *t.number >= *low && *t.number <= *high;
  return lower(t.name).find(lower(text)) != std::string::npos;
}

Result<std::vector<TaskTerm>> parse_terms(const std::string& text) {
  std::vector<TaskTerm> terms;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) continue;
    TaskTerm t{item, std::nullopt, std::nullopt};
    if (auto n = parse_int(item)) {
      t.low = t.high = *n;
    } else if (size_t dash = item.find('-'); dash != std::string::npos && dash > 0 && parse_int(item.substr(0, dash))) {
      auto lo = parse_int(item.substr(0, dash));
      auto hi = parse_int(item.substr(dash + 1));
      if (!hi || *hi < *lo)
        return Error{fmt::format("'{}' is not a range of task numbers; write LOW-HIGH with LOW <= HIGH, e.g. 19-32", item)};
      t.low = lo;
      t.high = hi;
    }
    terms.push_back(t);
  }
  if (terms.empty()) return Error{fmt::format("'{}' names no task; give names, numbers or ranges like 19-32", text)};
  return terms;
}

std::vector<ProblemTask> select_tasks(std::vector<ProblemTask> tasks, const Selection& s) {
  auto any = [](const std::vector<TaskTerm>& terms, const ProblemTask& t) {
    return std::any_of(terms.begin(), terms.end(), [&](const TaskTerm& term) { return term.matches(t); });
  };
  std::vector<ProblemTask> out;
  for (auto& t : tasks) {
    if (!s.include.empty() && !any(s.include, t)) continue;
    if (any(s.exclude, t)) continue;
    out.push_back(std::move(t));
  }
  if (s.limit && static_cast<int>(out.size()) > *s.limit) out.resize(static_cast<size_t>(*s.limit));
  return out;
}

Result<Shard> parse_shard(const std::string& text) {
  size_t slash = text.find('/');
  auto i = slash == std::string::npos ? std::nullopt : parse_int(text.substr(0, slash));
  auto n = slash == std::string::npos ? std::nullopt : parse_int(text.substr(slash + 1));
  if (!i || !n || *n < 1 || *i >= *n)
    return Error{fmt::format("--shard {} is not I/N with 0 <= I < N (e.g. 0/4; Slurm's array index is I)", text)};
  return Shard{*i, *n};
}

std::vector<ProblemTask> shard_tasks(const std::vector<ProblemTask>& tasks, Shard s) {
  std::vector<ProblemTask> out;
  for (size_t k = static_cast<size_t>(s.index); k < tasks.size(); k += static_cast<size_t>(s.count)) out.push_back(tasks[k]);
  return out;
}

}  // namespace cutegen::bench
