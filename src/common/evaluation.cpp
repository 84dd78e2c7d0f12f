#include "common/evaluation.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/json_text.h"

namespace cutegen {
namespace {

using json = nlohmann::json;

// Readers that name the field when it has the wrong type: the messages end up in "cannot resume"
// errors and worker-bug reports, where the key is what a person needs.
struct Reader {
  const json& j;
  std::string what;  // "evaluation", "problem", ...

  Error bad(std::string_view key, std::string_view want) const {
    return Error{fmt::format("the {}'s \"{}\" is {} where {} was expected", what, key,
                             j.contains(std::string(key)) ? j.at(std::string(key)).type_name() : "missing", want)};
  }
  template <class T>
  Status number(std::string_view key, T& out, bool required = false) const {
    auto it = j.find(std::string(key));
    if (it == j.end() || it->is_null()) return required ? Status(bad(key, "a number")) : ok_status();
    if (!it->is_number()) return bad(key, "a number");
    out = it->get<T>();
    return ok_status();
  }
  Status optional_number(std::string_view key, std::optional<double>& out) const {
    auto it = j.find(std::string(key));
    if (it == j.end() || it->is_null()) return ok_status();
    if (!it->is_number()) return bad(key, "a number");
    out = it->get<double>();
    return ok_status();
  }
  Status text(std::string_view key, std::string& out, bool required = false) const {
    auto it = j.find(std::string(key));
    if (it == j.end() || it->is_null()) return required ? Status(bad(key, "a string")) : ok_status();
    if (!it->is_string()) return bad(key, "a string");
    out = it->get<std::string>();
    return ok_status();
  }
  Status flag(std::string_view key, bool& out) const {
    auto it = j.find(std::string(key));
    if (it == j.end() || it->is_null()) return ok_status();
    if (!it->is_boolean()) return bad(key, "true or false");
    out = it->get<bool>();
    return ok_status();
  }
  // An object or array field, absent allowed; `out` is nullptr when absent.
  Status child(std::string_view key, json::value_t kind, const json*& out) const {
    out = nullptr;
    auto it = j.find(std::string(key));
    if (it == j.end() || it->is_null()) return ok_status();
    if (it->type() != kind) return bad(key, kind == json::value_t::object ? "an object" : "an array");
    out = &*it;
    return ok_status();
  }
};

Status not_object(const json& j, std::string_view what) {
  if (j.is_object()) return ok_status();
  return Error{fmt::format("the {} is {} where an object was expected", what, j.type_name())};
}

#define CG_TRY(expr)                   \
  do {                                 \
    if (auto _s = (expr); !_s) return _s.error(); \
  } while (0)

Result<std::vector<ValueFacts>> value_list(const Reader& r, std::string_view key) {
  const json* list = nullptr;
  CG_TRY(r.child(key, json::value_t::array, list));
  std::vector<ValueFacts> out;
  if (!list) return out;
  for (const auto& e : *list) {
    auto v = ValueFacts::from_json(e);
    if (!v) return Error{fmt::format("{} {}: {}", r.what, key, v.error().message)};
    out.push_back(std::move(*v));
  }
  return out;
}

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

}  // namespace

// --- enums -----------------------------------------------------------------------------------------

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::pass: return "pass";
    case Verdict::compile_error: return "compile_error";
    case Verdict::rejected: return "rejected";
    case Verdict::load_failed: return "load_failed";
    case Verdict::kernel_error: return "kernel_error";
    case Verdict::cuda_error: return "cuda_error";
    case Verdict::crash: return "crash";
    case Verdict::timeout: return "timeout";
    case Verdict::printed_output: return "printed_output";
    case Verdict::mismatch: return "mismatch";
    case Verdict::unwritten: return "unwritten";
    case Verdict::nondeterministic: return "nondeterministic";
    case Verdict::input_mutated: return "input_mutated";
    case Verdict::hidden_work: return "hidden_work";
    case Verdict::result_reuse: return "result_reuse";
    case Verdict::forbidden_call: return "forbidden_call";
    case Verdict::tampering: return "tampering";
    case Verdict::host_compute: return "host_compute";
    case Verdict::shape_specific: return "shape_specific";
  }
  return "unknown";
}

std::optional<Verdict> parse_verdict(std::string_view word) {
  for (int v = static_cast<int>(Verdict::pass); v <= static_cast<int>(kLastVerdict); ++v)
    if (to_string(static_cast<Verdict>(v)) == word) return static_cast<Verdict>(v);
  return std::nullopt;
}

std::string to_string(Precision p) {
  switch (p) {
    case Precision::strict: return "strict";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
  }
  return "strict";
}

const std::vector<Precision>& all_precisions() {
  static const std::vector<Precision> policies = {Precision::strict, Precision::tf32, Precision::bf16};
  return policies;
}

std::vector<std::string> precision_names() {
  std::vector<std::string> names;
  for (Precision p : all_precisions()) names.push_back(to_string(p));
  return names;
}

Result<Precision> parse_precision(std::string_view word) {
  for (Precision p : all_precisions())
    if (to_string(p) == word) return p;
  return Error{fmt::format("unknown precision policy \"{}\"; use one of {}", word, fmt::join(precision_names(), ", "))};
}

const std::vector<WorkloadClass>& all_workload_classes() {
  static const std::vector<WorkloadClass> classes = {WorkloadClass::gemm,      WorkloadClass::elementwise,
                                                     WorkloadClass::reduction, WorkloadClass::conv,
                                                     WorkloadClass::attention, WorkloadClass::other};
  return classes;
}

std::string_view to_string(WorkloadClass c) {
  switch (c) {
    case WorkloadClass::gemm: return "gemm";
    case WorkloadClass::elementwise: return "elementwise";
    case WorkloadClass::reduction: return "reduction";
    case WorkloadClass::conv: return "conv";
    case WorkloadClass::attention: return "attention";
    case WorkloadClass::other: return "other";
  }
  return "other";
}

Result<WorkloadClass> parse_workload_class(std::string_view name) {
  std::string known;
  for (WorkloadClass c : all_workload_classes()) {
    if (name == to_string(c)) return c;
    known += fmt::format("{}{}", known.empty() ? "" : ", ", to_string(c));
  }
  return Error{fmt::format("unknown workload class \"{}\"; use one of: {}", name, known)};
}

// --- values and problems ---------------------------------------------------------------------------

nlohmann::json ValueFacts::to_json() const {
  json j = json::object();
  if (!name.empty()) j["name"] = name;
  switch (kind) {
    case Kind::tensor:
      j["kind"] = "tensor";
      j["dtype"] = dtype;
      j["shape"] = shape;
      break;
    case Kind::scalar:
      j["kind"] = "scalar";
      j["dtype"] = dtype;
      j["value"] = value;
      break;
    case Kind::other:
      j["kind"] = "other";
      j["value"] = value;
      break;
  }
  if (buffer) j["buffer"] = true;
  if (is_default) j["default"] = true;
  return j;
}

Result<ValueFacts> ValueFacts::from_json(const nlohmann::json& j) {
  CG_TRY(not_object(j, "value description"));
  Reader r{j, "value"};
  ValueFacts v;
  std::string kind = "tensor";
  CG_TRY(r.text("name", v.name));
  CG_TRY(r.text("kind", kind));
  CG_TRY(r.text("dtype", v.dtype));
  CG_TRY(r.flag("buffer", v.buffer));
  CG_TRY(r.flag("default", v.is_default));
  if (kind == "tensor") {
    v.kind = Kind::tensor;
    const json* shape = nullptr;
    CG_TRY(r.child("shape", json::value_t::array, shape));
    if (!shape) return Error{fmt::format("tensor '{}' has no shape", v.name)};
    for (const auto& d : *shape) {
      if (!d.is_number_integer()) return Error{fmt::format("tensor '{}' has a shape that is not integers", v.name)};
      v.shape.push_back(d.get<int64_t>());
    }
  } else if (kind == "scalar" || kind == "other") {
    v.kind = kind == "scalar" ? Kind::scalar : Kind::other;
    if (j.contains("value")) v.value = scalar_text(j.at("value"));
  } else {
    return Error{fmt::format("value '{}' has kind \"{}\" (tensor, scalar or other expected)", v.name, kind)};
  }
  return v;
}

nlohmann::json ProblemFacts::to_json() const {
  auto list = [](const std::vector<ValueFacts>& vs) {
    json a = json::array();
    for (const auto& v : vs) a.push_back(v.to_json());
    return a;
  };
  json j = {{"name", name},
            {"workload_class", std::string(to_string(workload_class))},
            {"dtype", dtype},
            {"reference_dtype", reference_dtype},
            {"gpu", gpu},
            {"torch_version", torch_version},
            {"flops", flops},
            {"min_bytes", min_bytes},
            {"inputs", list(inputs)},
            {"params", list(params)},
            {"outputs", list(outputs)},
            {"init_inputs", list(init_inputs)},
            {"aten_ops", aten_ops}};
  if (!reference_note.empty()) j["reference_note"] = reference_note;
  return j;
}

Result<ProblemFacts> ProblemFacts::from_json(const nlohmann::json& j) {
  CG_TRY(not_object(j, "problem description"));
  Reader r{j, "problem"};
  ProblemFacts p;
  CG_TRY(r.text("name", p.name, true));
  std::string workload = "other";
  CG_TRY(r.text("workload_class", workload));
  auto w = parse_workload_class(workload);
  if (!w) return Error{"the problem's " + w.error().message};
  p.workload_class = *w;
  CG_TRY(r.text("dtype", p.dtype));
  CG_TRY(r.text("reference_dtype", p.reference_dtype));
  CG_TRY(r.text("gpu", p.gpu));
  CG_TRY(r.text("torch_version", p.torch_version));
  CG_TRY(r.number("flops", p.flops));
  CG_TRY(r.number("min_bytes", p.min_bytes));
  CG_TRY(r.text("reference_note", p.reference_note));
  for (auto [key, out] : {std::pair{"inputs", &p.inputs}, std::pair{"params", &p.params},
                          std::pair{"outputs", &p.outputs}, std::pair{"init_inputs", &p.init_inputs}}) {
    auto list = value_list(r, key);
    if (!list) return list.error();
    *out = std::move(*list);
  }
  const json* ops = nullptr;
  CG_TRY(r.child("aten_ops", json::value_t::array, ops));
  if (ops)
    for (const auto& op : *ops)
      if (op.is_string()) p.aten_ops.push_back(op.get<std::string>());
  return p;
}

// --- times -------------------------------------------------------------------------------------------

nlohmann::json TimeStats::to_json() const {
  json j = {{"median_ms", median_ms}, {"iqr_ms", iqr_ms}, {"min_ms", min_ms}, {"max_ms", max_ms}, {"runs", runs}};
  if (disturbed_runs > 0) j["disturbed_runs"] = disturbed_runs;
  return j;
}

Result<TimeStats> TimeStats::from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("median_ms") || !j.at("median_ms").is_number())
    return Error{"a time statistic without median_ms"};
  Reader r{j, "time statistic"};
  TimeStats t;
  CG_TRY(r.number("median_ms", t.median_ms, true));
  CG_TRY(r.number("iqr_ms", t.iqr_ms));
  CG_TRY(r.number("min_ms", t.min_ms));
  CG_TRY(r.number("max_ms", t.max_ms));
  CG_TRY(r.number("runs", t.runs));
  CG_TRY(r.number("disturbed_runs", t.disturbed_runs));
  return t;
}

nlohmann::json CandidateTime::to_json() const {
  json t = stats.to_json();
  t["slower_kind"] = slower_kind;
  t["per_kind"] = json::object();
  for (const auto& [kind, s] : per_kind) t["per_kind"][kind] = s.to_json();
  t["overhead_ms"] = overhead_ms;
  t["overrun_ms"] = overrun_ms;
  t["event_median_ms"] = event_median_ms ? json(*event_median_ms) : json();
  t["span_median_ms"] = span_median_ms ? json(*span_median_ms) : json();
  t["disturbed_calls"] = disturbed_calls;
  return t;
}

Result<CandidateTime> CandidateTime::from_json(const nlohmann::json& j) {
  CandidateTime t;
  auto stats = TimeStats::from_json(j);
  if (!stats) return stats.error();
  t.stats = *stats;
  Reader r{j, "time record"};
  CG_TRY(r.text("slower_kind", t.slower_kind));
  CG_TRY(r.number("overhead_ms", t.overhead_ms));
  CG_TRY(r.number("overrun_ms", t.overrun_ms));
  CG_TRY(r.optional_number("event_median_ms", t.event_median_ms));
  CG_TRY(r.optional_number("span_median_ms", t.span_median_ms));
  CG_TRY(r.number("disturbed_calls", t.disturbed_calls));
  const json* per_kind = nullptr;
  CG_TRY(r.child("per_kind", json::value_t::object, per_kind));
  if (per_kind)
    for (const auto& [kind, v] : per_kind->items()) {
      auto k = TimeStats::from_json(v);
      if (!k) return Error{fmt::format("the time record's {} inputs: {}", kind, k.error().message)};
      t.per_kind[kind] = *k;
    }
  return t;
}

nlohmann::json Baselines::to_json() const {
  json j = json::object();
  for (auto [mode, b] : {std::pair{"eager", &eager}, std::pair{"compile", &compile}}) {
    if (!*b) continue;
    if ((*b)->stats) j[mode] = (*b)->stats->to_json();
    else j[mode] = {{"error", (*b)->error}};
  }
  if (!j.empty()) j["cached"] = cached;
  if (!seconds.empty()) j["seconds"] = seconds;
  return j;
}

Result<Baselines> Baselines::from_json(const nlohmann::json& j) {
  Baselines out;
  if (j.is_null()) return out;
  CG_TRY(not_object(j, "baselines answer"));
  Reader r{j, "baselines answer"};
  CG_TRY(r.flag("cached", out.cached));
  for (auto [mode, b] : {std::pair{"eager", &out.eager}, std::pair{"compile", &out.compile}}) {
    const json* m = nullptr;
    CG_TRY(r.child(mode, json::value_t::object, m));
    if (!m) continue;
    BaselineTime t;
    if (m->contains("error")) {
      t.error = scalar_text(m->at("error"));
    } else {
      auto stats = TimeStats::from_json(*m);
      if (!stats) return Error{fmt::format("the {} baseline: {}", mode, stats.error().message)};
      t.stats = *stats;
    }
    *b = t;
  }
  if (j.contains("seconds")) {
    auto seconds = seconds_by_name(j["seconds"], "the baselines answer's seconds");
    if (!seconds) return seconds.error();
    out.seconds = std::move(*seconds);
  }
  return out;
}

Result<std::map<std::string, double>> seconds_by_name(const json& j, std::string_view what) {
  if (!j.is_object()) return Error{fmt::format("{} is {} where an object was expected", what, j.type_name())};
  std::map<std::string, double> out;
  for (const auto& [name, s] : j.items()) {
    if (!s.is_number()) return Error{fmt::format("{}.{} is not a number", what, name)};
    out[name] = s.get<double>();
  }
  return out;
}

nlohmann::json Floor::to_json() const {
  return {{"floor_ms", floor_ms}, {"memory_ms", memory_ms}, {"compute_ms", compute_ms},
          {"bound", bound},       {"rate", rate},           {"hbm_gbps", hbm_gbps}};
}

Result<Floor> Floor::from_json(const nlohmann::json& j) {
  CG_TRY(not_object(j, "roofline"));
  Reader r{j, "roofline"};
  Floor f;
  CG_TRY(r.number("floor_ms", f.floor_ms, true));
  CG_TRY(r.number("memory_ms", f.memory_ms));
  CG_TRY(r.number("compute_ms", f.compute_ms));
  CG_TRY(r.text("bound", f.bound));
  CG_TRY(r.text("rate", f.rate));
  CG_TRY(r.number("hbm_gbps", f.hbm_gbps));
  return f;
}

// --- shapes at other configurations -----------------------------------------------------------------

namespace {

Result<std::vector<int64_t>> shape_of(const json& j, std::string_view what) {
  if (!j.is_array()) return Error{fmt::format("{} is {} where a shape (a list of integers) was expected", what, j.type_name())};
  std::vector<int64_t> shape;
  for (const auto& d : j) {
    if (!d.is_number_integer()) return Error{fmt::format("{} has a dimension that is not an integer", what)};
    shape.push_back(d.get<int64_t>());
  }
  return shape;
}

// A list of shapes; with `nullable`, null entries (a Python scalar argument) are allowed.
Status shape_list(const Reader& r, std::string_view key, std::vector<std::optional<std::vector<int64_t>>>& out) {
  const json* list = nullptr;
  CG_TRY(r.child(key, json::value_t::array, list));
  if (!list) return ok_status();
  for (const auto& e : *list) {
    if (e.is_null()) {
      out.emplace_back(std::nullopt);
      continue;
    }
    auto s = shape_of(e, fmt::format("the {}'s {}", r.what, key));
    if (!s) return s.error();
    out.emplace_back(std::move(*s));
  }
  return ok_status();
}

Status dense_shape_list(const Reader& r, std::string_view key, std::vector<std::vector<int64_t>>& out) {
  std::vector<std::optional<std::vector<int64_t>>> shapes;
  CG_TRY(shape_list(r, key, shapes));
  for (auto& s : shapes) {
    if (!s) return r.bad(key, "a list of shapes without nulls");
    out.push_back(std::move(*s));
  }
  return ok_status();
}

Status config_of(const Reader& r, std::map<std::string, int64_t>& out) {
  const json* config = nullptr;
  CG_TRY(r.child("config", json::value_t::object, config));
  if (!config) return ok_status();
  for (const auto& [name, value] : config->items()) {
    if (!value.is_number_integer()) return r.bad("config", "an object of integers");
    out[name] = value.get<int64_t>();
  }
  return ok_status();
}

json shapes_json(const std::vector<std::optional<std::vector<int64_t>>>& shapes) {
  json a = json::array();
  for (const auto& s : shapes) a.push_back(s ? json(*s) : json());
  return a;
}

}  // namespace

nlohmann::json VerifiedShape::to_json() const {
  return {{"config", config}, {"inputs", shapes_json(inputs)}, {"outputs", outputs}};
}

Result<VerifiedShape> VerifiedShape::from_json(const nlohmann::json& j) {
  CG_TRY(not_object(j, "verified shape"));
  Reader r{j, "verified shape"};
  VerifiedShape v;
  CG_TRY(config_of(r, v.config));
  CG_TRY(shape_list(r, "inputs", v.inputs));
  CG_TRY(dense_shape_list(r, "outputs", v.outputs));
  return v;
}

std::string to_string(ShapeOutcome o) {
  switch (o) {
    case ShapeOutcome::pass: return "pass";
    case ShapeOutcome::refused: return "refused";
    case ShapeOutcome::mismatch: return "mismatch";
    case ShapeOutcome::crash: return "crash";
  }
  return "crash";
}

nlohmann::json ShapeTrial::to_json() const {
  return {{"kind", kind},       {"config", config},   {"inputs", shapes_json(inputs)},
          {"outputs", outputs}, {"outcome", to_string(outcome)}, {"verdict", to_string(verdict)},
          {"reason", reason},   {"seconds", seconds}};
}

Result<ShapeTrial> ShapeTrial::from_json(const nlohmann::json& j) {
  CG_TRY(not_object(j, "shape trial"));
  Reader r{j, "shape trial"};
  ShapeTrial t;
  CG_TRY(r.text("kind", t.kind));
  CG_TRY(config_of(r, t.config));
  CG_TRY(shape_list(r, "inputs", t.inputs));
  CG_TRY(dense_shape_list(r, "outputs", t.outputs));
  std::string word;
  CG_TRY(r.text("outcome", word, true));
  bool known = false;
  for (ShapeOutcome o : {ShapeOutcome::pass, ShapeOutcome::refused, ShapeOutcome::mismatch, ShapeOutcome::crash})
    if (to_string(o) == word) t.outcome = o, known = true;
  if (!known) return Error{fmt::format("a shape trial's outcome is \"{}\" (pass, refused, mismatch or crash expected)", word)};
  CG_TRY(r.text("verdict", word, true));
  auto verdict = parse_verdict(word);
  if (!verdict) return Error{fmt::format("a shape trial names an unknown verdict \"{}\"", word)};
  t.verdict = *verdict;
  CG_TRY(r.text("reason", t.reason));
  CG_TRY(r.number("seconds", t.seconds));
  return t;
}

int Generalization::refused() const {
  return static_cast<int>(std::count_if(trials.begin(), trials.end(),
                                        [](const ShapeTrial& t) { return t.outcome == ShapeOutcome::refused; }));
}

std::string Generalization::changes(const std::map<std::string, int64_t>& config) const {
  std::string s;
  for (const auto& [name, value] : config) {
    if (!verified.empty()) {
      auto it = verified.front().config.find(name);
      if (it != verified.front().config.end() && it->second == value) continue;
    }
    s += fmt::format("{}{}={}", s.empty() ? "" : ", ", name, value);
  }
  return s.empty() ? "the problem's own sizes" : s;
}

std::string Generalization::verified_text() const {
  std::string s = "the problem's own";
  for (std::size_t i = 1; i < verified.size(); ++i) s += "; " + changes(verified[i].config);
  return s;
}

nlohmann::json Generalization::to_json() const {
  json j = {{"asked", asked}, {"varied", varied}, {"notes", notes}, {"seconds", seconds}};
  if (skipped_bar_ms) j["skipped_bar_ms"] = *skipped_bar_ms;
  j["trials"] = json::array();
  for (const auto& t : trials) j["trials"].push_back(t.to_json());
  j["verified"] = json::array();
  for (const auto& v : verified) j["verified"].push_back(v.to_json());
  return j;
}

Result<Generalization> Generalization::from_json(const nlohmann::json& j) {
  CG_TRY(not_object(j, "generalization record"));
  Reader r{j, "generalization record"};
  Generalization g;
  CG_TRY(r.number("asked", g.asked));
  CG_TRY(r.number("seconds", g.seconds));
  CG_TRY(r.optional_number("skipped_bar_ms", g.skipped_bar_ms));
  for (auto [key, out] : {std::pair{"varied", &g.varied}, std::pair{"notes", &g.notes}}) {
    const json* list = nullptr;
    CG_TRY(r.child(key, json::value_t::array, list));
    if (list)
      for (const auto& e : *list) {
        if (!e.is_string()) return r.bad(key, "a list of strings");
        out->push_back(e.get<std::string>());
      }
  }
  const json* list = nullptr;
  CG_TRY(r.child("trials", json::value_t::array, list));
  if (list)
    for (const auto& e : *list) {
      auto t = ShapeTrial::from_json(e);
      if (!t) return t.error();
      g.trials.push_back(std::move(*t));
    }
  CG_TRY(r.child("verified", json::value_t::array, list));
  if (list)
    for (const auto& e : *list) {
      auto v = VerifiedShape::from_json(e);
      if (!v) return v.error();
      g.verified.push_back(std::move(*v));
    }
  return g;
}

// --- the evaluation ----------------------------------------------------------------------------------

namespace {

// The keys Evaluation types; everything else in its JSON is `details`. `speedup` and `sol_pct` are
// derived: written for readers, recomputed rather than read.
constexpr std::string_view kTypedKeys[] = {"verdict",  "reason",           "evidence", "precision",
                                           "problem",  "time",             "baselines", "roofline",
                                           "roofline_warning", "library",  "compile_key", "speedup",
                                           "sol_pct",  "workspace_bytes", "generalization", "compiler_notes",
                                           "skipped_checks_bar_ms"};

bool typed_key(std::string_view key) {
  for (auto k : kTypedKeys)
    if (k == key) return true;
  return false;
}

}  // namespace

std::optional<double> Evaluation::speedup_over(const std::optional<BaselineTime>& b) const {
  double t = median_ms();
  if (t <= 0 || !b || !b->median_ms()) return std::nullopt;
  return *b->median_ms() / t;
}

std::optional<double> Evaluation::sol_pct() const {
  double t = median_ms();
  if (t <= 0 || !floor || !roofline_warning.empty() || floor->floor_ms <= 0) return std::nullopt;
  return 100.0 * floor->floor_ms / t;
}

std::string Evaluation::verdict_line() const {
  const std::string why = first_line(reason);
  return why.empty() ? to_string(verdict) : fmt::format("{}: {}", to_string(verdict), why);
}

nlohmann::json Evaluation::to_json() const {
  json j = json::object();
  if (details.is_object())
    for (const auto& [key, value] : details.items())
      if (!typed_key(key)) j[key] = value;
  j["verdict"] = to_string(verdict);
  j["reason"] = reason;
  j["evidence"] = evidence;
  j["precision"] = to_string(precision);
  if (problem) j["problem"] = problem->to_json();
  if (time) j["time"] = time->to_json();
  j["baselines"] = baselines.to_json();
  if (floor) j["roofline"] = floor->to_json();
  if (!roofline_warning.empty()) j["roofline_warning"] = roofline_warning;
  if (auto s = sol_pct()) j["sol_pct"] = *s;
  if (auto s = speedup_eager()) j["speedup"]["eager"] = *s;
  if (auto s = speedup_compile()) j["speedup"]["compile"] = *s;
  if (!library.empty()) j["library"] = library;
  if (!compile_key.empty()) j["compile_key"] = compile_key;
  if (workspace_bytes) j["workspace_bytes"] = workspace_bytes;
  if (!compiler_notes.empty()) j["compiler_notes"] = compiler_notes;
  if (generalization) j["generalization"] = generalization->to_json();
  if (skipped_checks_bar_ms) j["skipped_checks_bar_ms"] = *skipped_checks_bar_ms;
  return j;
}

Result<Evaluation> Evaluation::from_json(const nlohmann::json& j) {
  CG_TRY(not_object(j, "evaluation"));
  Reader r{j, "evaluation"};
  Evaluation e;
  std::string word;
  CG_TRY(r.text("verdict", word, true));
  auto verdict = parse_verdict(word);
  if (!verdict) return Error{fmt::format("the evaluation names an unknown verdict \"{}\"", word)};
  e.verdict = *verdict;
  CG_TRY(r.text("reason", e.reason));
  CG_TRY(r.text("evidence", e.evidence));
  std::string precision = to_string(kDefaultPrecision);  // absent in records from before the policies
  CG_TRY(r.text("precision", precision));
  auto p = parse_precision(precision);
  if (!p) return Error{"the evaluation's " + p.error().message};
  e.precision = *p;
  CG_TRY(r.text("roofline_warning", e.roofline_warning));
  CG_TRY(r.text("library", e.library));
  CG_TRY(r.text("compile_key", e.compile_key));
  CG_TRY(r.number("workspace_bytes", e.workspace_bytes));  // absent: none (and every record before v2)
  const json* child = nullptr;
  CG_TRY(r.child("compiler_notes", json::value_t::array, child));  // absent: none
  if (child)
    for (const auto& note : *child) {
      if (!note.is_string()) return Error{"the evaluation's compiler_notes must be strings"};
      e.compiler_notes.push_back(note.get<std::string>());
    }
  CG_TRY(r.child("problem", json::value_t::object, child));
  if (child) {
    auto facts = ProblemFacts::from_json(*child);
    if (!facts) return facts.error();
    e.problem = std::move(*facts);
  }
  CG_TRY(r.child("time", json::value_t::object, child));
  if (child) {
    auto t = CandidateTime::from_json(*child);
    if (!t) return Error{"the evaluation's time: " + t.error().message};
    e.time = std::move(*t);
  }
  CG_TRY(r.child("baselines", json::value_t::object, child));
  if (child) {
    auto b = Baselines::from_json(*child);
    if (!b) return b.error();
    e.baselines = std::move(*b);
  }
  CG_TRY(r.child("roofline", json::value_t::object, child));
  if (child) {
    auto f = Floor::from_json(*child);
    if (!f) return f.error();
    e.floor = *f;
  }
  CG_TRY(r.child("generalization", json::value_t::object, child));
  if (child) {
    auto g = Generalization::from_json(*child);
    if (!g) return Error{"the evaluation's " + g.error().message};
    e.generalization = std::move(*g);
  }
  CG_TRY(r.optional_number("skipped_checks_bar_ms", e.skipped_checks_bar_ms));  // absent: every check ran
  if (e.passed() && !e.time) return Error{"the evaluation passed a kernel without a time"};
  for (const auto& [key, value] : j.items())
    if (!typed_key(key)) e.details[key] = value;
  return e;
}

#undef CG_TRY

}  // namespace cutegen
