#include "bench/task_record.h"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/json_text.h"
#include "common/terminal_text.h"

namespace cutegen::bench {
namespace {

constexpr std::array<std::pair<TaskVerdict, std::string_view>, 7> kVerdicts{{
    {TaskVerdict::correct, "correct"},
    {TaskVerdict::no_correct_kernel, "no_correct_kernel"},
    {TaskVerdict::measured, "measured"},
    {TaskVerdict::problem_error, "problem_error"},
    {TaskVerdict::crashed, "crashed"},
    {TaskVerdict::not_started, "not_started"},
    {TaskVerdict::running, "running"},
}};

std::optional<double> ratio(const std::optional<double>& num, const std::optional<double>& den) {
  if (!num || !den || *num <= 0 || *den <= 0) return std::nullopt;
  return *num / *den;
}

// Reads `key` into `out` when present; a present value of the wrong type is an error naming it.
template <class T>
Status field(const nlohmann::json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return ok_status();
  try {
    out = it->get<T>();
  } catch (const nlohmann::json::exception&) {
    return Error{fmt::format("task record: field '{}' has the wrong type ({})", key, it->dump())};
  }
  return ok_status();
}
template <class T>
Status field(const nlohmann::json& j, const char* key, std::optional<T>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return ok_status();
  T v{};
  if (auto s = field(j, key, v); !s) return s;
  out = v;
  return ok_status();
}

}  // namespace

std::string_view to_string(TaskVerdict v) {
  for (const auto& [k, w] : kVerdicts)
    if (k == v) return w;
  return "?";
}

Result<TaskVerdict> parse_task_verdict(std::string_view word) {
  for (const auto& [k, w] : kVerdicts)
    if (w == word) return k;
  return Error{fmt::format("unknown task verdict '{}'", word)};
}

bool is_final(TaskVerdict v) {
  return v == TaskVerdict::correct || v == TaskVerdict::no_correct_kernel || v == TaskVerdict::measured ||
         v == TaskVerdict::problem_error || v == TaskVerdict::crashed;
}

std::optional<double> TaskRecord::speedup_eager() const { return ratio(eager_ms, best_ms); }
std::optional<double> TaskRecord::speedup_compile() const { return ratio(compile_ms, best_ms); }
std::optional<double> TaskRecord::physics_speedup() const { return ratio(eager_ms, floor_ms); }

nlohmann::json TaskRecord::to_json() const {
  return {{"format", "cutegen-task/1"},
          {"name", name}, {"problem", problem}, {"number", number ? nlohmann::json(*number) : nlohmann::json(nullptr)},
          {"mode", mode}, {"verdict", std::string(to_string(verdict))}, {"detail", detail},
          {"stop_reason", stop_reason}, {"device", device},
          {"best_ms", value_or_null(best_ms)}, {"eager_ms", value_or_null(eager_ms)},
          {"compile_ms", value_or_null(compile_ms)},
          {"floor_ms", value_or_null(floor_ms)}, {"sol_pct", value_or_null(sol_pct)},
          {"eager_error", eager_error}, {"compile_error", compile_error}, {"floor_bound", floor_bound},
          {"flops", flops}, {"min_bytes", min_bytes},
          {"speedup_eager", value_or_null(speedup_eager())},
          {"speedup_compile", value_or_null(speedup_compile())},
          {"physics_speedup", value_or_null(physics_speedup())},
          {"steps", steps}, {"syntheses", syntheses}, {"llm_calls", llm_calls}, {"tokens", tokens},
          {"cost_usd", cost_usd}, {"example", example}, {"seed", seed}, {"seed_ms", value_or_null(seed_ms)},
          {"lane", lane}, {"host", host}, {"shard", shard}, {"started_at", started_at}, {"finished_at", finished_at},
          {"wall_s", wall_s}, {"gpu_busy_s", gpu_busy_s}, {"gpu_wait_s", gpu_wait_s}, {"attempts", attempts}};
}

Result<TaskRecord> TaskRecord::from_json(const nlohmann::json& j) {
  if (!j.is_object()) return Error{"task record: not a JSON object"};
  TaskRecord r;
  std::string verdict;
  for (Status s : {field(j, "name", r.name), field(j, "problem", r.problem), field(j, "number", r.number),
                   field(j, "mode", r.mode), field(j, "verdict", verdict), field(j, "detail", r.detail),
                   field(j, "stop_reason", r.stop_reason), field(j, "device", r.device),
                   field(j, "best_ms", r.best_ms), field(j, "eager_ms", r.eager_ms), field(j, "compile_ms", r.compile_ms),
                   field(j, "floor_ms", r.floor_ms), field(j, "sol_pct", r.sol_pct),
                   field(j, "eager_error", r.eager_error), field(j, "compile_error", r.compile_error),
                   field(j, "floor_bound", r.floor_bound), field(j, "flops", r.flops), field(j, "min_bytes", r.min_bytes),
                   field(j, "steps", r.steps), field(j, "syntheses", r.syntheses), field(j, "llm_calls", r.llm_calls),
                   field(j, "tokens", r.tokens), field(j, "cost_usd", r.cost_usd), field(j, "example", r.example),
                   field(j, "seed", r.seed), field(j, "seed_ms", r.seed_ms),
                   field(j, "lane", r.lane), field(j, "host", r.host), field(j, "shard", r.shard),
                   field(j, "started_at", r.started_at), field(j, "finished_at", r.finished_at),
                   field(j, "wall_s", r.wall_s), field(j, "gpu_busy_s", r.gpu_busy_s),
                   field(j, "gpu_wait_s", r.gpu_wait_s), field(j, "attempts", r.attempts)})
    if (!s) return s.error();
  if (verdict.empty()) return Error{"task record: field 'verdict' is missing"};
  auto v = parse_task_verdict(verdict);
  if (!v) return Error{"task record: " + v.error().message};
  r.verdict = *v;
  return r;
}

Result<std::optional<TaskRecord>> read_task_record(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::optional<TaskRecord>();
  auto text = read_file(file);
  if (!text) return text.error();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Error{fmt::format("{}: not JSON (cut short or edited?)", file.string())};
  auto r = TaskRecord::from_json(j);
  if (!r) return Error{fmt::format("{}: {}", file.string(), r.error().message)};
  return std::optional<TaskRecord>(*r);
}

std::string DamagedRecord::line() const { return terminal_safe(fmt::format("{}: {}", path, why)); }

}  // namespace cutegen::bench
