#include "run/judge.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/json_text.h"

namespace cutegen {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs f and adds its wall time to report.phase_seconds[phase].
template <class F>
auto timed(EvalReport& report, const char* phase, F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  auto result = f();
  report.phase_seconds[phase] += since(t0);
  return result;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

Verdict verdict_for_check_reason(const std::string& reason) {
  if (reason == "unwritten") return Verdict::unwritten;
  if (reason == "nondeterministic") return Verdict::nondeterministic;
  if (reason == "input_mutated") return Verdict::input_mutated;
  return Verdict::mismatch;  // mismatch, shape and anything newer
}

// The mismatch evidence the diagnose step needs, from one failing check report.
std::string describe_check(const nlohmann::json& c) {
  std::string s = fmt::format("trial {} ({} inputs, seed {}): {}\n", c.value("trial", -1), c.value("kind", "?"),
                              c.value("seed", nlohmann::json()).dump(), c.value("reason", "?"));
  if (auto m = c.value("inputs_mutated", nlohmann::json::array()); !m.empty())
    s += fmt::format("  the kernel wrote into its inputs: {}\n", m.dump());
  if (c.contains("run_to_run_max_abs_diff") && c.value("reason", "") == "nondeterministic")
    s += fmt::format("  two runs on the same inputs differ by up to {} (a race or reuse of earlier results)\n",
                     c["run_to_run_max_abs_diff"].dump());
  for (const auto& o : c.value("outputs", nlohmann::json::array())) {
    if (o.value("bad_count", 0) == 0 && o.value("unwritten_count", 0) == 0) continue;
    s += fmt::format("  output {}: {} of {} elements bad ({:.3g}); max abs err {:.4g}, max rel err {:.4g}, rel L2 err "
                     "{:.3g} (limit {:.1g}); {} unwritten (still NaN), {} NaN, {} Inf\n",
                     o.value("index", 0), o.value("bad_count", 0), o.value("total", 0), o.value("bad_fraction", 0.0),
                     o.value("max_abs_err", 0.0), o.value("max_rel_err", 0.0), o.value("rel_l2_err", 0.0),
                     o.value("rel_l2_limit", 0.0), o.value("unwritten_count", 0), o.value("nan_count", 0),
                     o.value("inf_count", 0));
    std::string firsts;
    int n = 0;
    for (const auto& b : o.value("first_bad", nlohmann::json::array())) {
      if (n++ == 5) break;
      firsts += fmt::format("{}{} got {} expected {}", firsts.empty() ? "" : "; ", b.value("index", nlohmann::json()).dump(),
                            b.value("got", nlohmann::json()).dump(), b.value("expected", nlohmann::json()).dump());
    }
    if (!firsts.empty()) s += "  first bad: " + firsts + "\n";
  }
  return s;
}

}  // namespace

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
  }
  return "unknown";
}

std::string compile_failure_reason(const CompileOutcome& c) {
  if (c.verdict == CompileVerdict::timeout) return "nvcc ran past its time limit";
  const auto& d = c.diagnostic;
  if (d.errors.empty()) {
    // No error the diagnostic parser recognises (a ptxas or linker failure, say): nvcc's own last
    // words say more than a count of zero.
    std::string last, line;
    std::istringstream lines(c.log);
    while (std::getline(lines, line))
      if (line.find_first_not_of(" \t\r") != std::string::npos) last = line.substr(line.find_first_not_of(" \t"));
    return last.empty() ? "nvcc failed without output" : fmt::format("nvcc failed: {}", clip_utf8(last, 200));
  }
  const auto& first = d.errors.front();
  return fmt::format("{} compile error{}; first{}: {}", d.total_errors, d.total_errors == 1 ? "" : "s",
                     first.candidate_line > 0 ? fmt::format(" at line {}", first.candidate_line) : "", first.message);
}

RunnerOutcome classify_runner(const ProcessResult& p, const nlohmann::json& result, int) {
  std::string phase = result.value("phase", "setup");
  std::string failure = result.contains("failure") && result["failure"].is_string() ? result["failure"].get<std::string>() : "";
  std::string message = result.value("message", "");
  if (p.timed_out)
    return {Verdict::timeout, fmt::format("the kernel did not finish within {:.0f} s (during {}): a hang or an infinite loop",
                                          p.wall_seconds, phase)};
  if (p.term_signal != 0)
    return {Verdict::crash, fmt::format("the runner process was {} during {}", p.describe_end(), phase)};
  if (failure == "load") return {Verdict::load_failed, message};
  if (failure == "kernel_error") return {Verdict::kernel_error, message};
  if (failure == "cuda_error") return {Verdict::cuda_error, message};
  if (failure == "printed_output") return {Verdict::printed_output, message};
  if (failure == "result_reuse") return {Verdict::result_reuse, message};
  if (!failure.empty()) return {Verdict::crash, fmt::format("runner {} failure: {}", failure, message)};
  std::string printed = p.out + p.err;
  if (!printed.empty())
    return {Verdict::printed_output,
            fmt::format("the kernel printed {}{} bytes (first line: \"{}\"): remove printf and other output",
                        p.output_truncated ? "more than " : "", printed.size(), first_line(printed).substr(0, 120))};
  if (p.exit_code != 0 || phase != "done")
    return {Verdict::crash, fmt::format("the runner stopped during {} with {}", phase, p.describe_end())};
  return {Verdict::pass, ""};
}

double EvalReport::median_ms() const {
  if (timing.is_object() && timing.contains("event")) return timing["event"].value("median_ms", 0.0);
  return 0;
}

nlohmann::json EvalReport::to_json() const {
  nlohmann::json j;
  j["verdict"] = to_string(verdict);
  j["reason"] = reason;
  j["evidence"] = evidence;
  j["problem"] = problem;
  j["compile"] = compile.to_json();
  j["checks"] = checks;
  j["timing"] = timing;
  j["baselines"] = baselines;
  j["seeds"] = seeds;
  j["seconds"] = seconds;
  j["phase_seconds"] = phase_seconds;
  if (floor) {
    j["roofline"] = {{"floor_ms", floor->floor_ms}, {"memory_ms", floor->memory_ms}, {"compute_ms", floor->compute_ms},
                     {"bound", floor->bound}, {"rate", floor->rate}, {"hbm_gbps", floor->hbm_gbps}};
    if (median_ms() > 0) j["sol_pct"] = 100.0 * floor->floor_ms / median_ms();
  }
  double t = median_ms();
  for (const char* mode : {"eager", "compile"}) {
    if (t > 0 && baselines.contains(mode) && baselines[mode].contains("median_ms"))
      j["speedup"][mode] = baselines[mode]["median_ms"].get<double>() / t;
  }
  return j;
}

std::string EvalReport::summary() const {
  // A compile failure never loads the problem, so there may be no metadata at all.
  std::string name = problem.is_object() ? problem.value("name", "problem") : "problem";
  std::string s;
  if (!passed()) {
    s = fmt::format("FAIL {}: {} ({})\n", name, to_string(verdict), reason);
    if (!evidence.empty()) s += evidence;
    return s;
  }
  const auto& ev = timing["event"];
  s = fmt::format("PASS {}  [{} checks passed]\n", name, checks.size());
  s += fmt::format("  time      {:.4g} ms median (min {:.4g}, IQR {:.3g}, {} runs)\n", ev.value("median_ms", 0.0),
                   ev.value("min_ms", 0.0), ev.value("iqr_ms", 0.0), ev.value("runs", 0));
  auto j = to_json();
  for (const char* mode : {"eager", "compile"}) {
    if (!baselines.contains(mode)) continue;
    if (baselines[mode].contains("error")) {
      s += fmt::format("  {:<9} unavailable: {}\n", mode, first_line(baselines[mode]["error"].get<std::string>()));
    } else if (j.contains("speedup") && j["speedup"].contains(mode)) {
      s += fmt::format("  {:<9} {:.4g} ms -> speedup {:.2f}x\n", mode == std::string("eager") ? "eager" : "compile",
                       baselines[mode]["median_ms"].get<double>(), j["speedup"][mode].get<double>());
    }
  }
  if (floor)
    s += fmt::format("  floor     {:.4g} ms ({}-bound, {} rate) -> SOL {:.1f}%\n", floor->floor_ms, floor->bound,
                     floor->rate, j.value("sol_pct", 0.0));
  if (seconds > 0) {
    std::string parts;
    for (const auto& [phase, sec] : phase_seconds) parts += fmt::format("{}{} {:.1f}", parts.empty() ? "" : ", ", phase, sec);
    s += fmt::format("  eval      {:.1f} s wall ({})\n", seconds, parts);
  }
  return s;
}

Judge::Judge(Compiler& compiler, ReferenceWorker& worker, ProcessRunner& runner, EvalOptions options)
    : compiler_(compiler), worker_(worker), runner_(runner), options_(std::move(options)) {}

Result<EvalReport> Judge::describe(const fs::path& problem) {
  auto t0 = std::chrono::steady_clock::now();
  EvalReport report;
  auto meta = load_problem(problem);
  if (!meta) return meta.error();
  report.problem = *meta;
  if (options_.baselines) {
    // Baselines are timed on the timing sets, so they need a prepare (without correctness trials).
    if (auto r = prepare_timing_inputs(); !r) return r.error();
    if (auto r = measure_baselines(report); !r) return r.error();
  }
  if (auto r = place_on_roofline(report); !r) return r.error();
  report.seconds = since(t0);
  return report;
}

Status Judge::prepare_timing_inputs() {
  std::mt19937_64 rng(options_.seed ? options_.seed : std::random_device{}());
  auto prepared = worker_.call("prepare",
                               {{"trials", nlohmann::json::array()}, {"timing_sets", options_.timing_sets},
                                {"timing_seed", rng() & 0x7fffffff}},
                               600s);
  if (!prepared) return prepared.error();
  prepared_ = *prepared;
  return ok_status();
}

Result<nlohmann::json> Judge::load_problem(const fs::path& problem) {
  if (!loaded_.is_null() && loaded_problem_ == problem) return loaded_;
  auto meta = worker_.call("load", {{"problem", fs::absolute(problem).string()}, {"device", "cuda"}, {"seed", 0}}, 600s);
  if (!meta) return meta.error();
  loaded_ = *meta;
  loaded_problem_ = problem;
  return loaded_;
}

Result<EvalReport> Judge::evaluate(const fs::path& problem, const std::string& kernel_source, const std::string& kernel_name) {
  auto t0 = std::chrono::steady_clock::now();
  EvalReport report;
  auto compiled = timed(report, "compile", [&] { return compiler_.compile({kernel_source, kernel_name}); });
  if (!compiled) return compiled.error();
  report.compile = *compiled;
  if (!compiled->ok()) {
    report.verdict = compiled->verdict == CompileVerdict::rejected ? Verdict::rejected : Verdict::compile_error;
    report.reason = compiled->verdict == CompileVerdict::rejected ? compiled->violations.front().message
                                                                   : compile_failure_reason(*compiled);
    report.evidence = compiled->feedback();
    report.seconds = since(t0);
    return report;
  }
  auto meta = timed(report, "load", [&] { return load_problem(problem); });
  if (!meta) return meta.error();
  report.problem = *meta;

  // Fresh, recorded seeds: a kernel tuned to one input set cannot pass by luck of the draw.
  std::mt19937_64 rng(options_.seed ? options_.seed : std::random_device{}());
  nlohmann::json trials = nlohmann::json::array();
  auto add_trial = [&](const char* kind, double scale) {
    uint64_t seed = rng() & 0x7fffffff;
    report.seeds.push_back(seed);
    nlohmann::json t = {{"seed", seed}, {"kind", kind}};
    if (scale != 0) t["scale"] = scale;
    trials.push_back(t);
  };
  for (int i = 0; i < options_.trials; ++i) add_trial("problem", 0);
  add_trial("signed", 0);
  add_trial("scaled", robustness_scale(meta->value("dtype", "float32")));
  uint64_t timing_seed = rng() & 0x7fffffff;

  // Large problems do not fit every trial at once: run them in batches, the timing sets with the last.
  const int timing_sets = options_.runs > 0 ? options_.timing_sets : 0;
  const int per_batch = trials_per_batch(meta->value("memory", nlohmann::json::object()), timing_sets);
  for (size_t first = 0; first < trials.size() && report.passed(); first += per_batch) {
    size_t count = std::min(trials.size() - first, static_cast<size_t>(per_batch));
    bool last = first + count == trials.size();
    nlohmann::json batch(trials.begin() + first, trials.begin() + first + count);
    auto prepared = timed(report, "prepare", [&] {
      return worker_.call("prepare", {{"trials", batch}, {"timing_sets", last ? timing_sets : 0}, {"timing_seed", timing_seed}},
                          600s);
    });
    if (!prepared) return prepared.error();
    prepared_ = *prepared;
    if (auto r = timed(report, "runner", [&] { return run_candidate(*prepared, *compiled, report); }); !r) return r.error();
    if (report.passed()) {
      if (auto r = timed(report, "check", [&] { return check_trials(*prepared, first, report); }); !r) return r.error();
    }
    if (last && report.passed()) check_timing(report);
    if (last && report.passed() && timing_sets > 0) {
      if (auto r = timed(report, "check", [&] { return check_timing_outputs(report); }); !r) return r.error();
    }
  }
  if (report.passed() && options_.baselines) {
    if (auto r = timed(report, "baselines", [&] { return measure_baselines(report); }); !r) return r.error();
  }
  if (report.passed()) {
    if (auto r = timed(report, "roofline", [&] { return place_on_roofline(report); }); !r) return r.error();
  }
  report.seconds = since(t0);
  return report;
}

Status Judge::run_candidate(const nlohmann::json& prepared, const CompileOutcome& compiled, EvalReport& report) {
  nlohmann::json job = {{"library", compiled.library.string()}, {"device", 0}, {"trials", nlohmann::json::array()}};
  for (const auto& t : prepared.at("trials")) job["trials"].push_back({{"inputs", t.at("inputs")}, {"outputs", t.at("outputs")}});
  job["timing"] = {{"warmup", options_.warmup}, {"runs", options_.runs}, {"sets", prepared.value("timing", nlohmann::json::array())}};
  std::error_code ec;
  fs::create_directories(options_.work_dir, ec);
  fs::path job_path = options_.work_dir / "runner-job.json";
  fs::path result_path = options_.work_dir / "runner-result.json";
  fs::remove(result_path, ec);
  if (auto w = write_file_atomic(job_path, job.dump()); !w) return w.error();
  auto proc = runner_.run({.argv = {options_.runner.string(), "--job", job_path.string(), "--result", result_path.string()},
                           .timeout = options_.runner_timeout,
                           .max_output_bytes = 1 << 20});
  if (!proc) return Error{fmt::format("cannot start the runner: {}", proc.error().message)};
  nlohmann::json result = nlohmann::json::object();
  if (auto text = read_file(result_path); text) {
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (!j.is_discarded()) result = j;
  }
  auto outcome = classify_runner(*proc, result, static_cast<int>(prepared.at("trials").size()));
  if (result.value("failure", nlohmann::json()).is_string() && result["failure"] == "setup")
    return Error{fmt::format("the runner could not set up the buffers: {}", result.value("message", ""))};
  report.verdict = outcome.verdict;
  report.reason = outcome.reason;
  report.evidence = outcome.reason.empty() ? "" : outcome.reason + "\n";
  report.timing = result.value("timing", nlohmann::json());
  return ok_status();
}

Result<Judge::RunnerInvocation> Judge::profiling_run(const fs::path& problem, const fs::path& library, int calls) {
  if (prepared_.is_null() || prepared_.value("timing", nlohmann::json::array()).empty()) {
    if (auto meta = load_problem(problem); !meta) return meta.error();
    if (auto r = prepare_timing_inputs(); !r) return r.error();
    if (prepared_.value("timing", nlohmann::json::array()).empty())
      return Error{"the reference worker prepared no timing inputs to profile on"};
  }
  nlohmann::json job = {{"library", library.string()}, {"device", 0}, {"trials", nlohmann::json::array()}};
  // No reuse check under the profiler: its two extra calls would show up as launches of the kernel.
  job["timing"] = {{"warmup", 0},       {"runs", std::max(1, calls)}, {"flush_bytes", 0},
                   {"reuse_check", false}, {"sets", prepared_["timing"]}};
  std::error_code ec;
  fs::create_directories(options_.work_dir, ec);
  RunnerInvocation inv;
  inv.job = options_.work_dir / "profile-job.json";
  inv.result = options_.work_dir / "profile-result.json";
  fs::remove(inv.result, ec);
  if (auto w = write_file_atomic(inv.job, job.dump()); !w) return w.error();
  inv.argv = {options_.runner.string(), "--job", inv.job.string(), "--result", inv.result.string()};
  return inv;
}

Status Judge::check_trials(const nlohmann::json& prepared, size_t first_index, EvalReport& report) {
  for (std::size_t i = 0; i < prepared.at("trials").size(); ++i) {
    auto c = worker_.call("check", {{"trial", i}, {"precision", options_.precision}}, 600s);
    if (!c) return c.error();
    report.checks.push_back(*c);
    if (report.passed() && !c->value("pass", false)) {
      report.verdict = verdict_for_check_reason(c->value("reason", "mismatch"));
      report.reason = fmt::format("trial {} ({} inputs) failed: {}", first_index + i, c->value("kind", "?"),
                                  c->value("reason", "mismatch"));
      report.evidence = describe_check(*c);
    }
  }
  return ok_status();
}

// The timed runs must also be right: a kernel that is only correct when it is not being timed, or
// that touches its inputs while timed, fails here.
Status Judge::check_timing_outputs(EvalReport& report) {
  auto c = worker_.call("check_timing", {{"precision", options_.precision}}, 600s);
  if (!c) return c.error();
  report.checks.push_back(*c);
  if (!c->value("pass", false)) {
    report.verdict = verdict_for_check_reason(c->value("reason", "mismatch"));
    report.reason = fmt::format("the outputs of the timed runs failed: {}", c->value("reason", "mismatch"));
    report.evidence = report.reason + "\n";
  }
  return ok_status();
}

int trials_per_batch(const nlohmann::json& memory, int timing_sets) {
  auto get = [&](const char* k) { return memory.value(k, 0.0); };
  double per_trial = get("bytes_per_trial");
  if (per_trial <= 0 || get("device_free_bytes") <= 0) return 1 << 20;  // no estimate (CPU, old worker): one batch
  // 80 %: the allocator rounds up and fragments, and other processes may allocate meanwhile.
  double avail = 0.8 * get("device_free_bytes") - get("bytes_params") - get("check_workspace_bytes") -
                 timing_sets * get("bytes_per_timing_set");
  return std::max(1, static_cast<int>(avail / per_trial));
}

double robustness_scale(const std::string& dtype) {
  // fp16 tops out at 65504: x100 on both operands of a GEMM overflows nearly everything.
  if (dtype == "float16") return 4.0;
  return 100.0;
}

void Judge::check_timing(EvalReport& report) {
  if (!report.timing.is_object() || !report.timing.contains("event")) return;
  double ev = report.timing["event"].value("median_ms", 0.0);
  double host = report.timing["host"].value("median_ms", 0.0);
  // Host time spans launch and a device-wide sync; it exceeds the event time by launch overhead only,
  // unless the kernel did work the launch stream's events did not see (another stream).
  if (host > 1.5 * ev + 0.05) {
    report.verdict = Verdict::hidden_work;
    report.reason = fmt::format("the host clock saw {:.3f} ms per call but the stream's events only {:.3f} ms: work runs "
                                "outside the given stream", host, ev);
    report.evidence = report.reason + "\n";
  }
}

Status Judge::measure_baselines(EvalReport& report) {
  auto b = worker_.call("time_baselines",
                        {{"modes", {"eager", "compile"}}, {"warmup_ms", 100}, {"runs", options_.runs},
                         {"precision", options_.precision},
                         {"cache_dir", (options_.cache_root / "baselines").string()}},
                        1800s);
  if (!b) return b.error();
  report.baselines = *b;
  return ok_status();
}

Status Judge::place_on_roofline(EvalReport& report) {
  // The calibration is per GPU; the worker names the GPU in its load answer.
  std::string gpu = report.problem.value("gpu", "");
  fs::path path = calibration_path(options_.cache_root, gpu.empty() ? "unknown" : gpu);
  nlohmann::json cal;
  if (auto text = read_file(path); text) cal = nlohmann::json::parse(*text, nullptr, false);
  if (cal.is_null() || cal.is_discarded()) {
    auto measured = worker_.call("calibrate", nlohmann::json::object(), 900s);
    if (!measured) return measured.error();
    cal = *measured;
    if (auto w = write_file_atomic(path, cal.dump(2)); !w) return w.error();
  }
  auto c = calibration_from_json(cal);
  if (!c) return c.error();
  report.floor = roofline_floor(*c, report.problem.value("min_bytes", uint64_t{0}), report.problem.value("flops", uint64_t{0}),
                                report.problem.value("dtype", "float32"), options_.precision);
  return ok_status();
}

}  // namespace cutegen
