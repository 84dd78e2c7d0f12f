#include "run/judge.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/json_text.h"
#include "compile/entry_points.h"
#include "compile/library_checks.h"
#include "run/runner_job.h"

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

}  // namespace

std::string shapes_line(const Generalization& g) {
  if (g.asked == 0) return "  shapes    only the problem's own verified (generalization trials off: --generalize 0)\n";
  if (g.varied.empty())
    return "  shapes    only the problem's own verified: get_inputs() reads no size of its own to vary\n";
  if (g.skipped_bar_ms)
    return fmt::format("  shapes    only the problem's own verified: not below {:.4g} ms, the time it had to beat to be "
                       "kept, so no other shape was tried\n", *g.skipped_bar_ms);
  std::string s = fmt::format("  shapes    {} verified: {}", g.verified.size(), g.verified_text());
  std::string refused;
  for (const auto& t : g.trials)
    if (t.outcome == ShapeOutcome::refused) refused += (refused.empty() ? "" : "; ") + g.changes(t.config);
  if (!refused.empty()) s += fmt::format(" -- refused by the kernel: {}", refused);
  if (!g.notes.empty()) s += fmt::format(" ({} not tried: {})", g.notes.size(), first_line(g.notes.front()));
  return s + fmt::format(" [{:.1f} s]\n", g.seconds);
}

// The mismatch evidence the diagnose step needs, from one failing check report.
std::string describe_check(const nlohmann::json& c) {
  std::string where = c.contains("timed_call") ? fmt::format("timed call {}", c["timed_call"].dump())
                                              : fmt::format("trial {}", c.value("trial", -1));
  if (c.contains("shape_trial") && c.value("config", nlohmann::json()).is_object())
    where = fmt::format("at another shape ({}), {}", c["config"].dump(), where);
  std::string s = fmt::format("{} ({} inputs, {} parameters, seed {}){}: {}\n", where, c.value("kind", "?"),
                              c.value("params", "own"), c.value("seed", nlohmann::json()).dump(),
                              c.value("sampled", false) ? ", at the secretly chosen positions" : "", c.value("reason", "?"));
  if (auto m = c.value("inputs_mutated", nlohmann::json::array()); !m.empty())
    s += fmt::format("  the kernel wrote into its inputs: {}\n", m.dump());
  if (c.contains("run_to_run_max_abs_diff") && c.value("reason", "") == "nondeterministic")
    s += fmt::format("  two runs on the same inputs differ by up to {} (a race or reuse of earlier results)\n",
                     c["run_to_run_max_abs_diff"].dump());
  for (const auto& o : c.value("outputs", nlohmann::json::array())) {
    if (o.value("bad_count", 0) == 0 && o.value("unwritten_count", 0) == 0) continue;
    s += fmt::format("  output {}: {} of {} elements bad ({:.3g}); max abs err {:.4g}, max rel err {:.4g}, rel L2 err "
                     "{:.3g} (limit {:.2g}); {} unwritten (still NaN), {} NaN, {} Inf\n",
                     o.value("index", 0), o.value("bad_count", 0), o.value("total", 0), o.value("bad_fraction", 0.0),
                     o.value("max_abs_err", 0.0), o.value("max_rel_err", 0.0), o.value("rel_l2_err", 0.0),
                     o.value("rel_l2_limit", 0.0), o.value("unwritten_count", 0), o.value("nan_count", 0),
                     o.value("inf_count", 0));
    if (o.contains("torch") && o["torch"].is_object())
      s += fmt::format("  PyTorch in the problem's precision is at rel L2 {:.3g} on the same inputs: the limit allows {:.0f}x "
                       "that\n", o["torch"].value("rel_l2_err", 0.0), 5.0);
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

Evaluation EvalReport::record() const {
  Evaluation e = *this;
  e.details = {{"compile", compile.to_json()}, {"checks", checks},   {"session", session},
               {"seeds", seeds},               {"seconds", seconds}, {"phase_seconds", phase_seconds}};
  if (screened) e.details["screening"] = true;
  return e;
}

// What the first refused attempt's line says was too busy ("the GPU was too busy to time on"), the part
// before its first colon; the CPU's wording for a record that kept no reason.
static std::string busy_cause(const nlohmann::json& session) {
  const auto& reasons = session.value("busy_reasons", nlohmann::json::array());
  if (reasons.empty() || !reasons[0].is_string()) return "the CPU was too busy to time on";
  auto line = reasons[0].get<std::string>();
  return line.substr(0, line.find(':'));
}

// The worker checks that no other program works on the GPU around the timed calls (docs/judge.md, "A shared
// GPU is neither a verdict nor a number"); a WARNING line where it could not (status partial or unavailable)
// or was turned off, "" otherwise (checked, or no GPU at all).
static std::string gpu_share_warning(const nlohmann::json& session) {
  const auto& share = session.value("gpu_share", nlohmann::json());
  if (!share.is_object()) return "";
  auto status = share.value("status", "checked");
  if (status == "checked") return "";
  auto note = share.value("note", "");
  if (status == "off")
    return "  WARNING   timed with CUTEGEN_GPU_SHARE_CHECK=off: another program's work on the GPU was not looked for\n";
  return fmt::format("  WARNING   another program's work on the GPU could not be ruled out{}: {}\n",
                     status == "partial" ? " in full" : "", note.empty() ? "no reason given" : note);
}

// ", fitted to 0.8 s of staging at 16 ms a call (100 asked)" when the staging budget cut the timed calls.
static std::string timed_budget_note(const nlohmann::json& audits) {
  const auto budget = audits.value("timed_budget", nlohmann::json());
  if (!budget.is_object()) return "";
  return fmt::format(", fitted to {:g} s of staging at {:.3g} ms a call ({} asked)", budget.value("seconds", 0.0),
                     budget.value("staging_ms", 0.0), budget.value("asked", 0));
}

std::string EvalReport::summary() const {
  // A compile failure never loads the problem, so there may be no metadata at all.
  std::string name = problem ? problem->name : "problem";
  std::string s;
  if (!passed()) {
    s = fmt::format("FAIL {}: {} ({})\n", name, to_string(verdict), reason);
    if (!evidence.empty() && evidence != reason + "\n") s += evidence;
    // Another program's work on the GPU reads as hidden work: where it could not be ruled out, say so.
    if (verdict == Verdict::hidden_work) s += gpu_share_warning(session);
    return s;
  }
  auto audits = session.value("audits", nlohmann::json::object());
  s = fmt::format("PASS {}  [{} full checks, {} of {} timed calls compared{}{}]\n", name, checks.size(),
                  audits.value("sampled", 0), audits.value("timed_calls", 0),
                  audits.value("screened", 0) > 0
                      ? fmt::format(", {} of them settled by PyTorch's own result", audits.value("screened", 0))
                      : "",
                  timed_budget_note(audits));
  if (time) {
    const auto& st = time->stats;
    s += fmt::format("  time      {:.4g} ms median (min {:.4g}, IQR {:.3g}, {} calls on {} inputs, the slower)", st.median_ms,
                     st.min_ms, st.iqr_ms, st.runs, time->slower_kind);
    if (time->event_median_ms) s += fmt::format("; events {:.4g} ms", *time->event_median_ms);
    if (time->span_median_ms) s += fmt::format("; GPU span {:.4g} ms", *time->span_median_ms);
    s += "\n";
    if (int busy = session.value("busy_retries", 0); busy > 0)
      s += fmt::format("  NOTE      timed again {} time(s): {} the first time\n", busy, busy_cause(session));
    if (time->disturbed_calls > 0)
      s += fmt::format("  NOTE      in {} of the timed calls a process waited for a CPU (a busy machine): they count in "
                       "the time, which errs high\n", time->disturbed_calls);
  }
  for (auto [mode, b, speedup] : {std::tuple{"eager", &baselines.eager, speedup_eager()},
                                  std::tuple{"compile", &baselines.compile, speedup_compile()}}) {
    if (!*b) continue;
    if (!(*b)->stats) s += fmt::format("  {:<9} unavailable: {}\n", mode, first_line((*b)->error));
    else if (speedup) s += fmt::format("  {:<9} {:.4g} ms -> speedup {:.2f}x\n", mode, *(*b)->median_ms(), *speedup);
    if (*b && (*b)->stats && (*b)->stats->disturbed_runs > 0)
      s += fmt::format("  {:<9} {} runs left out: the worker waited for a CPU in them (a busy machine)\n", "",
                       (*b)->stats->disturbed_runs);
  }
  if (auto sol = sol_pct()) {
    // What the floor assumes, so the SOL can be checked: the bytes and the bandwidth for the traffic's mix
    // of reads and writes (run/roofline.h), or the FLOPs' rate.
    const std::string basis = floor->bound == "memory" && floor->hbm_gbps > 0
                                  ? fmt::format("memory-bound: {:.4g} GB at {:.0f} GB/s", floor->memory_ms * floor->hbm_gbps / 1e3,
                                                floor->hbm_gbps)
                                  : fmt::format("{}-bound, {} rate", floor->bound, floor->rate);
    s += fmt::format("  floor     {:.4g} ms ({}) -> SOL {:.1f}%\n", floor->floor_ms, basis, *sol);
  }
  if (workspace_bytes) s += fmt::format("  workspace {} bytes, poisoned before every call\n", workspace_bytes);
  if (generalization) s += shapes_line(*generalization);
  if (skipped_checks_bar_ms)
    s += fmt::format("  checks    the scaled trial and the full audits not run: not below {:.4g} ms, the time it had "
                     "to beat to be kept\n", *skipped_checks_bar_ms);
  if (!roofline_warning.empty()) s += fmt::format("  WARNING   {}\n", roofline_warning);
  for (const auto& w : compiler_notes) s += fmt::format("  WARNING   ptxas: {}\n", w);
  if (auto sandbox = session.value("runner", nlohmann::json::object()).value("sandbox", "full"); sandbox != "full")
    s += fmt::format("  WARNING   the runner ran with CUTEGEN_RUNNER_SANDBOX={} (not the whole sandbox)\n", sandbox);
  // The timing experiments' switches (docs/judge.md, "Known limits"): a time taken under one is not the
  // default judge's.
  auto calibration = session.value("calibration", nlohmann::json::object());
  if (auto check = calibration.value("overrun_check", "probe"); check != "probe")
    s += fmt::format("  WARNING   timed with CUTEGEN_OVERRUN_CHECK={} (an experiment, not the default)\n", check);
  if (auto sweep = calibration.value("sweep", "own"); sweep != "own")
    s += fmt::format("  WARNING   calibrated with CUTEGEN_CALIBRATION_SWEEP={} (an experiment, not the default)\n", sweep);
  // Records from before 2026-12-06 name no wait: theirs was `block`, then the default.
  if (calibration.contains("runner_wait") && calibration.value("runner_wait", "hybrid") == "block")
    s += "  WARNING   timed with CUTEGEN_RUNNER_WAIT=block (the A/B setting, not the default: a wake-up per call)\n";
  // Host computing is judged by the runner's CPU time (docs/judge.md); a session that could not is named.
  if (auto host = calibration.value("host_cpu", "checked"); host == "spin") {
    s += "  WARNING   timed with CUTEGEN_RUNNER_WAIT=spin (an experiment): host computing was not judged\n";
  } else if (host == "costly_wait") {
    auto share_j = calibration.value("wait_share", nlohmann::json());
    double share = share_j.is_number() ? share_j.get<double>() : 0.0;
    s += fmt::format("  WARNING   the runner's wait for the GPU costs {:.0f}% of the time waited in CPU on this machine, "
                     "too much to tell host computing from it: host computing was not judged\n", 100 * share);
  } else if (host != "checked") {
    s += "  WARNING   the runner's CPU time could not be read on this machine: host computing was not judged\n";
  }
  s += gpu_share_warning(session);
  if (problem && !problem->reference_note.empty()) s += fmt::format("  note      {}\n", problem->reference_note);
  if (seconds > 0) {
    std::string parts;
    for (const auto& [phase, sec] : phase_seconds) parts += fmt::format("{}{} {:.1f}", parts.empty() ? "" : ", ", phase, sec);
    s += fmt::format("  eval      {:.1f} s wall ({})\n", seconds, parts);
  }
  // Where the worker's session went (its phase clock) and which engine ran the full checks' comparisons.
  if (auto phases = session.value("phase_seconds", nlohmann::json::object()); phases.is_object() && !phases.empty()) {
    // In the session's own order (JSON objects come back sorted by name), then anything a newer worker adds.
    static const std::vector<std::string> kOrder = {"runner_start",  "trials",      "timed_staging", "timed_calls",
                                                    "timed_compare", "full_audits", "runner_end"};
    std::vector<std::string> names = kOrder;
    for (const auto& [phase, sec] : phases.items())
      if (std::find(kOrder.begin(), kOrder.end(), phase) == kOrder.end()) names.push_back(phase);
    std::string parts;
    for (const auto& phase : names)
      if (auto it = phases.find(phase); it != phases.end() && it->is_number())
        parts += fmt::format("{}{} {:.2f}", parts.empty() ? "" : ", ", phase, it->get<double>());
    // Which engine compared the floating outputs: fused on a GPU unless CUTEGEN_COMPARE=torch, eager on the CPU.
    const std::string engine = audits.value("compare", "");
    s += fmt::format("  session   {} s{}\n", parts,
                     engine.empty() ? "" : fmt::format(" (comparisons: {})", engine == "torch" ? "eager" : engine));
  }
  return s;
}

Status apply_session_record(const nlohmann::json& record, EvalReport& report) {
  if (!record.is_object() || !record.contains("verdict") || !record["verdict"].is_string())
    return Error{"the worker's evaluate_candidate answer has no verdict (a worker bug)"};
  auto verdict = parse_verdict(record["verdict"].get<std::string>());
  if (!verdict) return Error{fmt::format("the worker named an unknown verdict `{}`", record["verdict"].get<std::string>())};
  report.verdict = *verdict;
  report.reason = record.value("reason", "");
  report.checks = record.value("checks", nlohmann::json::array());
  // The workspace a kernel of contract v2 asked for (the worker validated it): the profile job needs it.
  if (const auto& ws = record.value("workspace", nlohmann::json()); ws.is_object()) {
    const auto& bytes = ws.value("bytes", nlohmann::json());
    if (!bytes.is_number_integer() || bytes.get<int64_t>() <= 0)
      return Error{"the worker's workspace record has no positive `bytes` (a worker bug)"};
    report.workspace_bytes = bytes.get<uint64_t>();
  }
  report.session = {{"runner", record.value("runner", nlohmann::json::object())},
                    {"calibration", record.value("calibration", nlohmann::json::object())},
                    {"audits", record.value("audits", nlohmann::json::object())},
                    {"calls", record.value("calls", nlohmann::json::array())}};
  if (const auto& share = record.value("gpu_share", nlohmann::json()); share.is_object()) report.session["gpu_share"] = share;
  // A screening group's record (screen_candidates): how many were screened together, and whose calibration.
  if (const auto& group = record.value("screening_group", nlohmann::json()); group.is_object())
    report.session["screening_group"] = group;
  // The worker's phase clock (where the session's wall time went): evidence for the turnaround, kept with the rest.
  if (const auto& phases = record.value("phase_seconds", nlohmann::json()); phases.is_object())
    report.session["phase_seconds"] = phases;
  const auto& failed = record.value("failed_check", nlohmann::json());
  if (failed.is_number_integer() && failed.get<int>() >= 0 && failed.get<std::size_t>() < report.checks.size())
    report.evidence = report.reason + "\n" + describe_check(report.checks[failed.get<std::size_t>()]);
  else
    report.evidence = report.reason.empty() ? "" : report.reason + "\n";
  if (const auto& g = record.value("generalization", nlohmann::json()); g.is_object()) {
    auto generalization = Generalization::from_json(g);
    if (!generalization) return Error{"the worker's " + generalization.error().message + " (a worker bug)"};
    if (generalization->verified.empty())
      return Error{"the worker's generalization record verifies no shape, not even the problem's own (a worker bug)"};
    report.generalization = std::move(*generalization);
  }
  // The checks only a kept kernel needs, left out for one not below the loop's bar (docs/worker-protocol.md).
  if (const auto& deferred = record.value("audits", nlohmann::json::object()).value("deferred", nlohmann::json());
      !deferred.is_null()) {
    const auto& bar = deferred.is_object() ? deferred.value("bar_ms", nlohmann::json()) : nlohmann::json();
    if (!bar.is_number() || !(bar.get<double>() > 0))
      return Error{"the worker's audits.deferred has no positive `bar_ms` (a worker bug)"};
    report.skipped_checks_bar_ms = bar.get<double>();
  }
  const auto& t = record.value("time", nlohmann::json());
  if (report.passed() && !t.is_object()) return Error{"the worker passed a kernel without timing it (a worker bug)"};
  if (t.is_object()) {
    auto time = CandidateTime::from_json(t);
    if (!time) return Error{"the worker's time record: " + time.error().message};
    report.time = *time;
  }
  return ok_status();
}

// The trials' generator: the user's --seed (reproducible trials), else 64 bits from the OS — one
// random_device draw is 32 bits, few enough to recover from a trial's inputs by brute force.
static std::mt19937_64 trial_rng(uint64_t seed) {
  if (seed) return std::mt19937_64(seed);
  std::random_device os;
  std::seed_seq fresh{os(), os(), os(), os()};
  return std::mt19937_64(fresh);
}

nlohmann::json trial_plan(int problem_trials, const std::string& dtype, std::mt19937_64& rng, std::vector<uint64_t>& seeds,
                          bool robustness) {
  nlohmann::json trials = nlohmann::json::array();
  auto add = [&](const char* kind, const char* params, double scale) {
    uint64_t seed = rng() & 0x7fffffff;
    seeds.push_back(seed);
    nlohmann::json t = {{"seed", seed}, {"kind", kind}, {"params", params}};
    if (scale != 0) t["scale"] = scale;
    trials.push_back(t);
  };
  for (int i = 0; i < problem_trials; ++i) add("problem", i == 0 ? "own" : "random", 0);
  if (robustness) {
    add("signed", "random", 0);
    add("scaled", "random", robustness_scale(dtype));
  }
  // A random order: which trial comes when tells the candidate nothing.
  std::vector<nlohmann::json> order(trials.begin(), trials.end());
  std::shuffle(order.begin(), order.end(), rng);
  return nlohmann::json(order);
}

Judge::Judge(Compiler& compiler, ReferenceWorker& worker, EvalOptions options)
    : compiler_(compiler), worker_(worker), options_(std::move(options)) {}

Result<EvalReport> Judge::describe(const fs::path& problem) {
  auto t0 = std::chrono::steady_clock::now();
  return on_gpu([&]() -> Result<EvalReport> {
    EvalReport report;
    // Where the description's time goes, all of it holding the GPU (cutegen bench serialises it across tasks):
    // the problem's load, the baselines (torch.compile's compile and first run inside), the roofline.
    auto meta = timed(report, "load", [&] { return load_problem(problem); });
    if (!meta) return meta.error();
    report.problem = *meta;
    report.precision = options_.precision;
    std::mt19937_64 rng = trial_rng(options_.seed);
    if (options_.baselines)
      if (auto r = timed(report, "baselines", [&] { return measure_baselines(report, rng() & 0x7fffffff); }); !r)
        return r.error();
    if (auto r = timed(report, "roofline", [&] { return place_on_roofline(report); }); !r) return r.error();
    report.seconds = since(t0);
    return report;
  });
}

template <class Body>
auto Judge::on_gpu(Body&& body) -> decltype(body()) {
  auto gpu = hold_device(options_.device_lock);
  if (!gpu) return gpu.error();
  auto result = body();
  // A GPU shared with other tasks (cutegen bench) goes to the next one with this worker's device memory
  // given back: idle workers keeping their KernelBench problems loaded (19-55 GiB each) left the task
  // whose turn it was out of memory on an H200. The next evaluation loads the problem again.
  if (options_.device_lock) {
    auto released = give_back_gpu();
    if (!released && result) return released.error();  // on a failed body its own error is the one to see
  }
  return result;
}

Status Judge::give_back_gpu() {
  loaded_.reset();
  auto released = worker_.call("release_gpu", nlohmann::json::object(), 120s);
  if (!released) return released.error();
  return ok_status();
}

Result<ProblemFacts> Judge::load_problem(const fs::path& problem) {
  if (loaded_ && loaded_problem_ == problem) return *loaded_;
  auto meta = worker_.call("load", {{"problem", fs::absolute(problem).string()}, {"device", options_.device}, {"seed", 0}},
                           600s);
  if (!meta) return meta.error();
  auto facts = ProblemFacts::from_json(*meta);
  if (!facts) return Error{"the worker's load answer: " + facts.error().message + " (a worker bug)"};
  loaded_ = std::move(*facts);
  loaded_problem_ = problem;
  return *loaded_;
}

Result<fs::path> Judge::fresh_work_dir(const std::string& what) {
  std::error_code ec;
  fs::create_directories(options_.work_dir, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", options_.work_dir.string(), ec.message())};
  return make_unique_dir(options_.work_dir, what + "-");
}

void record_compile_failure(const CompileOutcome& compiled, Evaluation& e) {
  e.verdict = compiled.verdict == CompileVerdict::rejected ? Verdict::rejected : Verdict::compile_error;
  e.reason = compiled.verdict == CompileVerdict::rejected ? compiled.violations.front().message
                                                          : compile_failure_reason(compiled);
  e.evidence = compiled.feedback();
}

EvalOptions screening_options(EvalOptions full) {
  full.trials = 1;
  full.warmup = std::min(full.warmup, 3);
  full.runs = std::min(full.runs, std::max(10, full.runs / 5));
  full.baselines = false;
  full.generalize = 0;  // the variant chosen is evaluated again in full, other shapes included
  full.screening = true;
  return full;
}

Result<EvalReport> Judge::screen(const fs::path& problem, const std::string& kernel_source, const std::string& kernel_name,
                                 const std::vector<Define>& defines) {
  auto reports = screen_all(problem, {{kernel_source, kernel_name, defines}});
  if (!reports) return reports.error();
  return std::move(reports->front());
}

Result<EvalReport> Judge::evaluate_below(const fs::path& problem, const std::string& kernel_source,
                                         const std::string& kernel_name, double bar_ms) {
  const auto before = options_.keep_bar_ms;
  options_.keep_bar_ms = bar_ms;
  auto report = evaluate(problem, kernel_source, kernel_name);
  options_.keep_bar_ms = before;
  return report;
}

Result<EvalReport> Judge::evaluate(const fs::path& problem, const std::string& kernel_source, const std::string& kernel_name,
                                   const std::vector<Define>& defines) {
  auto t0 = std::chrono::steady_clock::now();
  EvalReport report;
  report.screened = options_.screening;
  // With no shared GPU to wait for (one `cutegen eval`), the worker loads the problem while nvcc builds: the two
  // are independent, and a KernelBench-size load (inputs drawn, the reference measured) is seconds of the cold
  // path. On a shared GPU (cutegen bench) the load waits for the GPU after the build, as before: it is GPU work.
  std::future<Result<ProblemFacts>> loading;
  // With the problem loaded, the worker frees what the last evaluation left on the device (its shared buffers,
  // torch's cached blocks: 0.5-0.8 s at KernelBench sizes) while nvcc builds, instead of at the session's start.
  std::future<Result<nlohmann::json>> freeing;
  if (!options_.device_lock && !(loaded_ && loaded_problem_ == problem))
    loading = std::async(std::launch::async, [this, problem] { return load_problem(problem); });
  else if (!options_.device_lock)
    freeing = std::async(std::launch::async, [this] {
      return worker_.call("free_buffers", nlohmann::json::object(), std::chrono::seconds(300));
    });
  auto freed = [&]() -> Status {  // a worker that cannot free its buffers is the error
    if (freeing.valid())
      if (auto f = freeing.get(); !f) return f.error();
    return ok_status();
  };
  // The worker's part beside the build, settled: what is left of it once the build is done is the `load` phase.
  auto worker_ready = [&]() -> Result<ProblemFacts> {
    if (loading.valid()) return loading.get();
    if (auto f = freed(); !f) return f.error();
    return load_problem(problem);
  };
  auto compiled = timed(report, "compile", [&] { return compiler_.compile({kernel_source, kernel_name, defines}); });
  if (!compiled) return compiled.error();
  report.compile = *compiled;
  report.precision = options_.precision;
  if (!compiled->ok()) {
    // A load beside a failed build is waited for by its future and, if it failed, done again by the next
    // evaluation that needs the problem, which reports its error.
    if (auto f = freed(); !f) return f.error();
    record_compile_failure(*compiled, report);
    report.seconds = since(t0);
    return report;
  }
  // From here on the GPU is used: wait for it (the wait is part of no phase).
  return on_gpu([&]() -> Result<EvalReport> {
    auto meta = timed(report, "load", worker_ready);
    if (!meta) return meta.error();
    report.problem = *meta;
    report.library = compiled->library.string();
    report.compile_key = compiled->key;
    report.compiler_notes = compiled->performance_warnings();
    // Fresh, recorded seeds: a kernel tuned to one input set cannot pass by luck of the draw.
    std::mt19937_64 rng = trial_rng(options_.seed);
    if (auto r = timed(report, "session", [&] { return run_session(*compiled, rng, report); }); !r) return r.error();
    if (report.generalization) {  // the worker ran them inside the session: a phase of their own
      report.phase_seconds["generalize"] = report.generalization->seconds;
      report.phase_seconds["session"] = std::max(0.0, report.phase_seconds["session"] - report.generalization->seconds);
    }
    if (report.passed() && options_.baselines) {
      if (auto r = timed(report, "baselines", [&] { return measure_baselines(report, report.seeds.back()); }); !r)
        return r.error();
    }
    if (report.passed()) {
      if (auto r = timed(report, "roofline", [&] { return place_on_roofline(report); }); !r) return r.error();
    }
    report.seconds = since(t0);
    return report;
  });
}

// Whether the library the checks passed exports the workspace pair: the worker then does not calibrate the
// runner that only asks the size (docs/worker-protocol.md, `workspace`). A hint: a library that cannot be read
// here gets none, and the worker calibrates both runners as it must when untold; the verdict never rests on it.
static bool exports_workspace_pair(const fs::path& library) {
  auto entries = library_entry_points(library);
  if (!entries) return false;
  auto form = entry_form(*entries);
  return form && *form == EntryForm::workspace;
}

nlohmann::json Judge::session_request(const nlohmann::json& trials, const fs::path& dir) const {
  // No seed for the timed calls: the worker draws each one from the OS as the call comes, so that no
  // input a kernel sees, nor the user's --seed, predicts the next (docs/judge.md, guarantee 2).
  nlohmann::json request = {{"runner", {options_.runner.string()}},
                            {"trials", trials},
                            {"warmup", options_.warmup},
                            {"runs", options_.runs},
                            {"precision", to_string(options_.precision)},
                            {"call_timeout_s", static_cast<double>(options_.runner_timeout.count())},
                            {"work_dir", dir.string()},
                            {"generalize", options_.generalize}};
  // The loop's bar: what only a kept kernel needs runs only for one below it (docs/worker-protocol.md).
  if (options_.keep_bar_ms && !options_.screening) {
    request["keep_bar_ms"] = *options_.keep_bar_ms;
  }
  if (options_.timed_budget_s) request["timed_budget_s"] = *options_.timed_budget_s;
  if (options_.screening) request["screening"] = true;  // a rank, not a result: no idle window for other users
  return request;
}

std::chrono::seconds Judge::session_limit(std::size_t trials, std::size_t candidates) const {
  // Every call may take up to the per-call limit; the worker enforces it and ends the session. A
  // generalization trial is two correctness trials (four calls) in a runner of its own.
  const auto calls = static_cast<long>(candidates) *
                     static_cast<long>(2 * trials + options_.warmup + options_.runs + 4 + 4 * options_.generalize);
  return std::chrono::seconds(600) + options_.runner_timeout * std::min(calls, 20L) + std::chrono::seconds(calls);
}

Result<nlohmann::json> Judge::with_busy_retries(const std::function<Result<nlohmann::json>()>& attempt,
                                                BusyRetries& busy) {
  // A busy machine is no fact about the kernel: measure again once the load may have passed, each time
  // a whole new session (fresh runner, calibration, trials and timed calls).
  auto record = attempt();
  for (auto pause : options_.busy_retry_pauses) {
    if (record || record.error().kind != ErrorKind::machine_busy) break;
    busy.reasons.push_back(record.error().message);
    if (options_.on_busy_retry)
      options_.on_busy_retry(fmt::format("{}; measuring again in {} s (attempt {} of {})", record.error().message,
                                         pause.count(), busy.retries + 2, options_.busy_retry_pauses.size() + 1));
    std::this_thread::sleep_for(pause);
    ++busy.retries;
    record = attempt();
  }
  if (!record && record.error().kind == ErrorKind::machine_busy && busy.retries > 0)
    return Error{fmt::format("{} (tried {} times)", record.error().message, busy.retries + 1), ErrorKind::machine_busy};
  return record;
}

static void note_busy_retries(const Judge::BusyRetries& busy, EvalReport& report) {
  if (busy.retries == 0) return;
  report.session["busy_retries"] = busy.retries;
  report.session["busy_reasons"] = busy.reasons;  // the worker's line for each refused attempt
}

Status Judge::run_session(const CompileOutcome& compiled, std::mt19937_64& rng, EvalReport& report) {
  // One attempt: a fresh work directory (the runner's private one inside) and fresh seeds for the trials
  // and the timed calls. A second attempt must not see the first one's inputs again, nor any file it
  // left: a kernel that cached answers during a refused attempt would find them (guarantee 2).
  const std::vector<uint64_t> seeds_before = report.seeds;
  const bool workspace_pair = exports_workspace_pair(compiled.library);
  const auto asked = workspace_asked_.find(workspace_asked_key(compiled.key));
  auto attempt = [&]() -> Result<nlohmann::json> {
    report.seeds = seeds_before;
    auto dir = fresh_work_dir("eval");
    if (!dir) return dir.error();
    nlohmann::json trials = trial_plan(options_.trials, report.problem->dtype, rng, report.seeds);
    nlohmann::json request = session_request(trials, *dir);
    request["library"] = compiled.library.string();
    if (workspace_pair) request["workspace"] = true;
    if (asked != workspace_asked_.end()) request["workspace_bytes"] = asked->second;
    else if (auto last = workspace_last_.find(loaded_problem_.string()); workspace_pair && last != workspace_last_.end())
      request["workspace_guess_bytes"] = last->second;
    if (!options_.fake_runner.is_null()) request["fake_runner"] = options_.fake_runner;
    return worker_.call("evaluate_candidate", request, session_limit(trials.size(), 1));
  };
  BusyRetries busy;
  auto record = with_busy_retries(attempt, busy);
  if (!record) return record.error();
  auto applied = apply_session_record(*record, report);
  if (applied) remember_workspace(report);
  note_busy_retries(busy, report);
  return applied;
}

std::string Judge::workspace_asked_key(const std::string& compile_key) const {
  return loaded_problem_.string() + '\n' + compile_key;
}

void Judge::remember_workspace(const EvalReport& report) {
  if (report.workspace_bytes > 0 && !report.compile_key.empty())
    workspace_asked_[workspace_asked_key(report.compile_key)] = report.workspace_bytes;
  if (report.workspace_bytes > 0) workspace_last_[loaded_problem_.string()] = report.workspace_bytes;
}

Result<std::vector<EvalReport>> Judge::screen_all(const fs::path& problem, const std::vector<CompileRequest>& kernels) {
  // The same judge (its loaded problem, worker and compiler) under other settings for these calls.
  EvalOptions full = options_;
  options_ = screening_options(full);
  auto reports = screen_all_now(problem, kernels);
  options_ = std::move(full);
  return reports;
}

Result<std::vector<EvalReport>> Judge::screen_all_now(const fs::path& problem, const std::vector<CompileRequest>& kernels) {
  std::vector<EvalReport> reports(kernels.size());
  std::vector<CompileOutcome> built(kernels.size());
  std::vector<std::size_t> grouped, alone;
  std::vector<bool> workspace(kernels.size(), false);
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    if (kernels.size() == 1) {  // nothing to group it with: screened alone as it is, compiled once there
      alone.push_back(i);
      break;
    }
    EvalReport& r = reports[i];
    r.screened = true;
    r.precision = options_.precision;
    auto t0 = std::chrono::steady_clock::now();
    auto compiled = timed(r, "compile", [&] { return compiler_.compile(kernels[i]); });
    if (!compiled) return compiled.error();
    r.compile = *compiled;
    if (!compiled->ok()) {
      record_compile_failure(*compiled, r);
      r.seconds = since(t0);
      continue;
    }
    built[i] = *compiled;
    // The group asks a workspace kernel's size first, in a runner of its own, as a session does: it must know which
    // have one. A library whose exports cannot be read here is screened alone, where no hint is needed.
    auto entries = library_entry_points(compiled->library);
    auto form = entries ? entry_form(*entries) : Result<EntryForm>(entries.error());
    (form ? grouped : alone).push_back(i);
    workspace[i] = form && *form == EntryForm::workspace;
  }
  if (grouped.size() < 2) {
    alone.insert(alone.end(), grouped.begin(), grouped.end());
    std::sort(alone.begin(), alone.end());
    grouped.clear();
  }
  const nlohmann::json fakes = options_.fake_runner;  // the test hook: one per source when an array
  for (std::size_t i : alone) {
    if (fakes.is_array()) options_.fake_runner = fakes.at(i);
    auto r = evaluate(problem, kernels[i].source, kernels[i].display_name, kernels[i].defines);
    options_.fake_runner = fakes;
    if (!r) return r.error();
    reports[i] = std::move(*r);
  }
  // At most kMaxScreeningGroup in one request (the worker's limit), the groups as even as can be, so none has fewer
  // than two (nine kernels: five and four); the worker splits a group further where the GPU's free memory holds
  // fewer runners.
  const std::size_t groups = (grouped.size() + kMaxScreeningGroup - 1) / kMaxScreeningGroup;
  for (std::size_t g = 0, at = 0; g < groups; ++g) {
    const std::size_t size = (grouped.size() - at) / (groups - g);
    const std::vector<std::size_t> part(grouped.begin() + at, grouped.begin() + at + size);
    if (auto s = run_group(problem, built, workspace, part, reports); !s) return s.error();
    at += size;
  }
  return reports;
}

Status Judge::run_group(const fs::path& problem, const std::vector<CompileOutcome>& built, const std::vector<bool>& workspace,
                        const std::vector<std::size_t>& grouped, std::vector<EvalReport>& reports) {
  return on_gpu([&]() -> Status {
    auto t0 = std::chrono::steady_clock::now();
    auto meta = load_problem(problem);
    if (!meta) return meta.error();
    const double load_s = since(t0);
    std::mt19937_64 rng = trial_rng(options_.seed);
    std::vector<uint64_t> seeds;
    auto attempt = [&]() -> Result<nlohmann::json> {
      seeds.clear();
      auto dir = fresh_work_dir("screen");
      if (!dir) return dir.error();
      // Only the problem trial: the timed calls are compared at their secret positions, half of them on signed
      // inputs, and the chosen kernel's full evaluation runs the signed and scaled trials. Each candidate's three
      // full checks were a third of the group's time (1.7 s of 5.5 for four at KernelBench 19's size on an H100).
      nlohmann::json trials = trial_plan(options_.trials, meta->dtype, rng, seeds, /*robustness=*/false);
      nlohmann::json request = session_request(trials, *dir);
      request["libraries"] = nlohmann::json::array();
      request["workspaces"] = nlohmann::json::array();
      if (!options_.fake_runner.is_null()) request["fake_runners"] = nlohmann::json::array();  // the test hook
      for (std::size_t i : grouped) {
        request["libraries"].push_back(built[i].library.string());
        request["workspaces"].push_back(static_cast<bool>(workspace[i]));
        if (options_.fake_runner.is_array()) request["fake_runners"].push_back(options_.fake_runner.at(i));
        else if (!options_.fake_runner.is_null()) request["fake_runners"].push_back(options_.fake_runner);
      }
      return worker_.call("screen_candidates", request, session_limit(trials.size(), grouped.size()));
    };
    BusyRetries busy;
    auto answer = with_busy_retries(attempt, busy);
    if (!answer) return answer.error();
    const auto& records = answer->value("records", nlohmann::json());
    if (!records.is_array() || records.size() != grouped.size())
      return Error{fmt::format("the worker's screen_candidates answer does not hold one record for each of the {} "
                               "libraries (a worker bug)", grouped.size())};
    const double session_s = since(t0) - load_s;
    for (std::size_t k = 0; k < grouped.size(); ++k) {
      EvalReport& r = reports[grouped[k]];
      const CompileOutcome& compiled = built[grouped[k]];
      r.problem = *meta;
      r.library = compiled.library.string();
      r.compile_key = compiled.key;
      r.compiler_notes = compiled.performance_warnings();
      r.seeds = seeds;
      if (auto applied = apply_session_record(records[k], r); !applied) return applied.error();
      remember_workspace(r);
      note_busy_retries(busy, r);
      r.session["group_phase_seconds"] = answer->value("phase_seconds", nlohmann::json::object());
      // The group's load and session, shared by all its kernels: each report has them whole.
      r.phase_seconds["load"] += load_s;
      r.phase_seconds["session"] += session_s;
      r.seconds = r.phase_seconds["compile"] + load_s + session_s;
    }
    return ok_status();
  });
}

Result<Judge::RunnerInvocation> Judge::profiling_run(const fs::path& problem, const Evaluation& passed, int calls) {
  if (passed.library.empty()) return Error{"internal: profiling needs an evaluation that built a library"};
  // The caller runs the command under the same lock (the buffers staged here are on the GPU).
  auto gpu = hold_device(options_.device_lock);
  if (!gpu) return gpu.error();
  if (auto meta = load_problem(problem); !meta) return meta.error();
  auto refs = worker_.call("prepare_profile", {{"seed", 1}, {"workspace_bytes", passed.workspace_bytes}}, 600s);
  if (!refs) return refs.error();
  auto dir = fresh_work_dir("profile");
  if (!dir) return dir.error();
  // The same diagnosis knob as the judge's runner (docs/sandbox.md): which part of the sandbox a
  // machine's profiler trips on.
  const char* preset_name = std::getenv("CUTEGEN_RUNNER_SANDBOX");
  auto sandbox = runner_sandbox_preset(preset_name && *preset_name ? preset_name : "full");
  if (!sandbox) return sandbox.error();
  // Nsight Compute's injected library talks TCP and starts threads (runner_sandbox.cpp).
  (*sandbox)["network"] = true;
  nlohmann::json job = {{"library", passed.library}, {"device", 0}, {"private_dir", dir->string()},
                        {"inputs", refs->value("inputs", nlohmann::json::array())},
                        {"outputs", refs->value("outputs", nlohmann::json::array())},
                        {"workspace", refs->value("workspace", nlohmann::json())},
                        {"calls", std::max(1, calls)},
                        {"sandbox", *sandbox}};
  RunnerInvocation inv;
  inv.job = *dir / "profile-job.json";
  inv.result = *dir / "profile-result.json";
  if (auto w = write_file_atomic(inv.job, job.dump()); !w) return w.error();
  inv.argv = {options_.runner.string(), "--job", inv.job.string(), "--result", inv.result.string()};
  return inv;
}

double robustness_scale(const std::string& dtype) {
  // fp16 tops out at 65504: x100 on both operands of a GEMM overflows nearly everything.
  if (dtype == "float16") return 4.0;
  return 100.0;
}

Status Judge::measure_baselines(EvalReport& report, uint64_t seed) {
  auto b = worker_.call("time_baselines",
                        {{"modes", {"eager", "compile"}}, {"warmup_ms", 100}, {"runs", options_.runs},
                         {"precision", to_string(options_.precision)}, {"sets", 2}, {"seed", seed & 0x7fffffff},
                         {"cache_dir", (options_.cache_root / "baselines").string()}},
                        1800s);
  if (!b) return b.error();
  auto baselines = Baselines::from_json(*b);
  if (!baselines) return Error{"the worker's time_baselines answer: " + baselines.error().message + " (a worker bug)"};
  report.baselines = *baselines;
  return ok_status();
}

Status Judge::place_on_roofline(EvalReport& report) {
  // The calibration is per GPU; the worker names the GPU in its load answer.
  const ProblemFacts& problem = *report.problem;
  const std::string& gpu = problem.gpu;
  fs::path path = calibration_path(options_.cache_root, gpu.empty() ? "unknown" : gpu);
  auto c = cached_calibration(path, [&] { return worker_.call("calibrate", nlohmann::json::object(), 900s); });
  if (!c) return c.error();
  report.floor = roofline_floor(*c, problem.min_bytes, written_bytes(problem), problem.flops, problem.dtype,
                                to_string(options_.precision));
  // Faster than the physics allows: the time is the worker's own, so it is the floor's model of the
  // problem that does not fit the kernel -- it counts forward()'s operations as written, and a kernel may
  // compute the same function with less (the seeds' folds move a row sum through a product, a global average
  // pooling through a convolution), or bytes are counted that need not move. Never printed as a record.
  double t = report.median_ms();
  if (t > 0 && report.floor->floor_ms > 0 && t < 0.95 * report.floor->floor_ms)
    report.roofline_warning = fmt::format(
        "the kernel took {:.4g} ms, below the physical floor of {:.4g} ms ({}-bound) of forward()'s operations as "
        "written: the kernel computes the same function with less work (an algebraic rewrite, such as a sum moved "
        "through a product by linearity) or the floor's count of bytes or FLOPs is wrong for this problem, so no "
        "SOL% is given", t, report.floor->floor_ms, report.floor->bound);
  return ok_status();
}

}  // namespace cutegen
