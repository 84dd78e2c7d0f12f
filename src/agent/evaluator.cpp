#include "agent/evaluator.h"

#include <fmt/format.h>

namespace cutegen {
namespace {

template <class T>
void put_optional(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <class T>
std::optional<T> get_optional(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

}  // namespace

nlohmann::json ProblemInfo::to_json() const {
  nlohmann::json j = {{"name", name}, {"source", source}, {"workload_class", workload_class},
                      {"metadata", metadata}, {"bound", bound}};
  put_optional(j, "eager_ms", eager_ms);
  put_optional(j, "compile_ms", compile_ms);
  put_optional(j, "floor_ms", floor_ms);
  return j;
}

Result<ProblemInfo> ProblemInfo::from_json(const nlohmann::json& j) {
  try {
    ProblemInfo p;
    p.name = j.at("name");
    p.source = j.at("source");
    p.workload_class = j.at("workload_class");
    p.metadata = j.at("metadata");
    p.bound = j.value("bound", "");
    p.eager_ms = get_optional<double>(j, "eager_ms");
    p.compile_ms = get_optional<double>(j, "compile_ms");
    p.floor_ms = get_optional<double>(j, "floor_ms");
    return p;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("recorded problem description is malformed: {}", e.what())};
  }
}

nlohmann::json Evaluation::to_json() const {
  nlohmann::json j = {{"passed", passed},       {"verdict", verdict}, {"reason", reason},
                      {"evidence", evidence},   {"median_ms", median_ms}, {"iqr_ms", iqr_ms},
                      {"library", library},     {"report", report}};
  put_optional(j, "speedup_eager", speedup_eager);
  put_optional(j, "speedup_compile", speedup_compile);
  put_optional(j, "sol_pct", sol_pct);
  return j;
}

Result<Evaluation> Evaluation::from_json(const nlohmann::json& j) {
  try {
    Evaluation e;
    e.passed = j.at("passed");
    e.verdict = j.at("verdict");
    e.reason = j.value("reason", "");
    e.evidence = j.value("evidence", "");
    e.median_ms = j.value("median_ms", 0.0);
    e.iqr_ms = j.value("iqr_ms", 0.0);
    e.library = j.value("library", "");
    e.report = j.value("report", nlohmann::json::object());
    e.speedup_eager = get_optional<double>(j, "speedup_eager");
    e.speedup_compile = get_optional<double>(j, "speedup_compile");
    e.sol_pct = get_optional<double>(j, "sol_pct");
    return e;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("recorded evaluation is malformed: {}", e.what())};
  }
}

}  // namespace cutegen
