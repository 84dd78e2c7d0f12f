// Records the report stage's fixture run directory (README.md here says what is real and what is
// scripted): the real loop, the real prompts and the real journal, driven by the relu demo
// cassette's answers plus four written here, a scripted judge with H200-like numbers, and the
// profile summary the profile stage makes from a real Nsight Compute capture of a relu kernel.
//
//   cmake --build build --target record-report-fixture
//   build/src/record-report-fixture src/report/testdata/relu-run
//
// Not part of the test suite (the fixture is committed); run it again when the run-log format changes.
#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "agent/loop.h"
#include "agent/template_prompter.h"
#include "common/fs.h"
#include "common/json_text.h"
#include "llm/llm_client.h"
#include "llm/price_table.h"
#include "profile/kernel_profile.h"
#include "profile/ncu_csv_parser.h"
#include "profile/profile_summary.h"
#include "store/event_log.h"

using namespace cutegen;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const fs::path kSource = CUTEGEN_SOURCE_DIR;

// The answers after the demo's five: a step that breaks the kernel and is "repaired" by undoing it,
// and a last step that is kept.
const char* kStep3 = R"(OPTIMIZATION: drop the tail kernel: round the tile count up so the last tile covers the remainder
EXPECTED: one launch instead of two saves the tail kernel's launch gap (a few microseconds per call).

```
<<<<<<< SEARCH
  const int64_t num_tiles = aligned ? n / kTile : 0;
=======
  const int64_t num_tiles = aligned ? (n + kTile - 1) / kTile : 0;  // the last tile covers the tail
>>>>>>> REPLACE
```
)";

const char* kDiagnose3 = R"(DIAGNOSIS: the rounded-up last tile reads and writes past the end of x and y: the tile layout has no bound, so the threads of the last tile copy 16-byte vectors beyond n; with the problem's shape (a multiple of the tile) the judge's signed trial, whose size is not, shows the corrupted tail.
LOCATION: the host launcher, num_tiles.
FIX: go back to whole tiles plus the separate tail kernel; a predicated last tile would need a bounds-checked copy.
)";

const char* kRepair3 = R"(CHANGES: back to whole tiles; the tail kernel handles the remainder.

```
<<<<<<< SEARCH
  const int64_t num_tiles = aligned ? (n + kTile - 1) / kTile : 0;  // the last tile covers the tail
=======
  const int64_t num_tiles = aligned ? n / kTile : 0;
>>>>>>> REPLACE
```
)";

const char* kStep4 = R"(OPTIMIZATION: evict-first (streaming) stores for y, which is written once and never read again
EXPECTED: the profile shows L2 hit rate near zero and DRAM at ~88% of peak; marking the output as streaming frees L2 for the loads' prefetch and should bring the kernel a few percent closer to the bandwidth floor.

```
<<<<<<< SEARCH
    copy_aligned(frag, tY);
=======
    // y is written once and never read again: evict-first stores leave L2 to the loads.
    CUTE_UNROLL
    for (int u = 0; u < kUnroll; ++u)
      __stcs(reinterpret_cast<float4*>(&tY(0, u)), *reinterpret_cast<const float4*>(&frag(0, u)));
>>>>>>> REPLACE
```
)";

// Answers in order, each priced as a real model's would be: tokens estimated from the text (about
// 3.6 characters a token), so the cost column of the page has realistic magnitudes.
class FixtureLlm : public LlmBackend {
 public:
  explicit FixtureLlm(std::deque<std::string> answers) : answers_(std::move(answers)) {}
  std::string kind() const override { return "anthropic"; }
  std::string model() const override { return "claude-sonnet-4-5"; }
  Result<LlmResponse> complete(const LlmRequest& request) override {
    if (answers_.empty()) return Error{"the fixture has no answer left"};
    long long chars = 0;
    for (const auto& m : request.messages) chars += static_cast<long long>(m.text.size());
    LlmResponse r;
    r.text = answers_.front();
    answers_.pop_front();
    r.model = model();
    r.finish = FinishReason::stop;
    r.usage.input_tokens = chars * 10 / 36;
    r.usage.output_tokens = static_cast<long long>(r.text.size()) * 10 / 34 + 900;  // + thinking
    r.usage.reasoning_tokens = 900;
    return r;
  }

 private:
  std::deque<std::string> answers_;
};

constexpr double kHbmGbps = 4300, kFp32Tflops = 51.2;
constexpr uint64_t kMinBytes = 2147483648ULL, kFlops = 268435456ULL;

Floor floor() {
  Floor f;
  f.memory_ms = kMinBytes / (kHbmGbps * 1e6);
  f.compute_ms = kFlops / (kFp32Tflops * 1e9);
  f.floor_ms = std::max(f.memory_ms, f.compute_ms);
  f.bound = "memory";
  f.rate = "fp32";
  f.hbm_gbps = kHbmGbps;
  return f;
}

ProblemFacts facts() {
  auto f = ProblemFacts::from_json(json::parse(R"({"name": "relu", "workload_class": "elementwise",
      "dtype": "float32", "reference_dtype": "float64", "gpu": "NVIDIA H200", "torch_version": "2.9.0+cu130",
      "inputs": [{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [4096, 65536]}],
      "params": [], "outputs": [{"kind": "tensor", "dtype": "float32", "shape": [4096, 65536]}],
      "aten_ops": ["aten::relu"], "min_bytes": 2147483648, "flops": 268435456})"));
  if (!f) throw std::runtime_error(f.error().message);
  return *f;
}

Baselines baselines() {
  Baselines b;
  b.eager = BaselineTime{TimeStats{.median_ms = 0.5573, .iqr_ms = 0.0021, .min_ms = 0.5541, .max_ms = 0.5702, .runs = 100}, ""};
  b.compile = BaselineTime{TimeStats{.median_ms = 0.5561, .iqr_ms = 0.0018, .min_ms = 0.5530, .max_ms = 0.5688, .runs = 100}, ""};
  return b;
}

// The kernel versions, told apart by what each edit introduced.
class FixtureJudge : public Evaluator {
 public:
  Result<ProblemInfo> describe() override {
    ProblemInfo p;
    auto src = read_file(kSource / "problems/relu.py");
    if (!src) return src.error();
    p.source = *src;
    p.facts = facts();
    p.baselines = baselines();
    p.floor = floor();
    return p;
  }
  Result<std::string> fingerprint() override { return std::string("report-fixture"); }
  Result<Evaluation> evaluate(const std::string& source, const std::string&, std::optional<double>) override {
    Evaluation e;
    e.problem = facts();
    e.baselines = baselines();
    e.floor = floor();
    auto has = [&](const char* s) { return source.find(s) != std::string::npos; };
    if (has("gX(_, _, t)")) {
      e.verdict = Verdict::compile_error;
      e.reason = "22 compile errors";
      e.evidence = "22 compile errors\n[1] kernel.cu:24: error: static assertion failed with \"Mismatched Ranks\"\n"
                   "    Tensor tX = local_partition(gX(_, _, t), thread_layout, threadIdx.x);  // (1)\n"
                   "  in: cute::Tensor::operator() <- relu_tiles\n"
                   "[2] kernel.cu:24: error: no instance of function template \"cute::local_partition\" matches";
      return e;
    }
    if (has("(n + kTile - 1) / kTile")) {
      e.verdict = Verdict::mismatch;
      e.reason = "trial 2 (signed, shape 4096x65535): output 0 differs at 2816 of 268431360 elements";
      e.evidence = e.reason + "\nfirst bad index 268428544: got 0.0, expected 0.7316 (|diff| 0.7316 > tolerance 0)\n"
                              "bad indices cluster in the last 4096 elements; trial 1 (the problem's own shape) passed";
      return e;
    }
    double ms = 1.8412, iqr = 0.0062;
    if (has("copy_aligned")) ms = 0.5427, iqr = 0.0023;
    if (has("kThreads = 64")) ms = 1.1196, iqr = 0.0049;
    if (has("__stcs")) ms = 0.5262, iqr = 0.0019;
    e.time = CandidateTime{.stats = {.median_ms = ms, .iqr_ms = iqr, .min_ms = ms * 0.994, .max_ms = ms * 1.03, .runs = 100},
                           .slower_kind = "signed",
                           .overhead_ms = 0.0121};
    e.details = {{"phase_seconds", {{"compile", 14.2}, {"session", 7.9}, {"baselines", 0.6}}}};
    return e;
  }
  Result<Library> rebuild_library(const std::string&, const std::string&) override {
    return Error{"the fixture judge builds no libraries"};
  }
  // The fixture run has one candidate per step: no compile or screening alone.
  Result<std::optional<Evaluation>> compile(const std::string&, const std::string&) override {
    return Error{"the fixture judge has no compile of its own"};
  }
  Result<Evaluation> screen(const std::string&, const std::string&) override {
    return Error{"the fixture judge has no screening"};
  }
};

// The summary the profile stage writes for the H200 capture of a vectorized relu_tiles.
class FixtureProfiler : public ProfileSource {
 public:
  Result<std::string> summary(const std::string&, const Evaluation& e) override {
    auto text = read_file(kSource / "src/profile/testdata/ncu_runner_relu_h200.csv");
    if (!text) return text.error();
    auto csv = parse_ncu_csv(*text);
    if (!csv) return csv.error();
    return summarize_profile(aggregate_by_kernel(*csv), context_from_evaluation(e, 2));
  }
};

// The fakes answer at once; the log gets the durations a real run on an H200 would have (an
// evaluation ~25 s, a profile ~40 s, an answer at ~55 tokens a second), so the page's times read true.
Status simulate_clock(const fs::path& events) {
  auto loaded = load_event_log(events);
  if (!loaded) return loaded.error();
  double t = 1796047200.0;  // 2026-11-30 14:00 UTC
  std::string out;
  for (auto e : loaded->events) {
    const std::string type = e.value("type", "");
    double d = 0.02;
    if (type == "problem") d = 38.4;
    if (type == "profile") d = 41.7;
    if (type == "eval") d = e["evaluation"].value("verdict", "") == "compile_error" ? 16.3 : 27.5;
    if (type == "llm") {
      d = 3.0 + e["response"]["usage"].value("output_tokens", 0) / 55.0;
      e["response"]["latency_s"] = std::round(d * 1000) / 1000;
    }
    t += d;
    e["t"] = std::round(t * 1000) / 1000;
    out += dump_json(e) + "\n";
  }
  return write_file_atomic(events, out);
}

std::string answer_text(const char* file) {
  auto text = read_file(kSource / "examples/cassettes/relu-demo" / file);
  if (!text) throw std::runtime_error(text.error().message);
  return json::parse(*text)["response"]["text"].get<std::string>();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: record-report-fixture OUT_DIR (it must not exist)\n";
    return 2;
  }
  const fs::path out = argv[1];
  if (fs::exists(out)) {
    std::cerr << "record-report-fixture: " << out << " exists; remove it first\n";
    return 1;
  }
  std::deque<std::string> answers;
  for (const char* f : {"01-synthesize.json", "02-diagnose.json", "03-repair.json", "04-optimize.json", "05-optimize.json"})
    answers.push_back(answer_text(f));
  for (const char* a : {kStep3, kDiagnose3, kRepair3, kStep4}) answers.push_back(a);

  auto prices = PriceTable::load(PriceTable::default_path());
  if (!prices) return std::cerr << prices.error().message << "\n", 1;
  auto client = LlmClient::create(std::make_unique<FixtureLlm>(answers), *prices, {});
  if (!client) return std::cerr << client.error().message << "\n", 1;
  auto prompter = TemplatePrompter::create();
  if (!prompter) return std::cerr << prompter.error().message << "\n", 1;
  FixtureJudge judge;
  FixtureProfiler profiler;
  auto journal = Journal::open(out / "events.jsonl", false);
  if (!journal) return std::cerr << journal.error().message << "\n", 1;
  RunFiles files(out);
  LoopOptions options;
  options.max_steps = 4;
  options.profile = *ProfilePolicy::parse("2");
  Loop loop(**client, judge, **prompter, &profiler, *journal, files, options,
            {.progress = [](const LoopStatus&, const std::string& line) { std::cerr << line << "\n"; }});
  auto result = loop.run();
  if (!result) return std::cerr << result.error().message << "\n", 1;

  // What `cutegen optimize` writes around the loop, as it would for this run.
  json marker = {{"format", "cutegen-run/1"}, {"created", "2026-11-30T14:00:00Z"}, {"cutegen", "report fixture"}};
  json config = {{"problem", "problems/relu.py"}, {"llm", "anthropic:claude-sonnet-4-5"}, {"steps", 4},
                 {"repair_budget", 4}, {"restarts", 2}, {"plateau", 4}, {"target_sol", 0}, {"profile_from", "2"},
                 {"precision", "strict"}, {"trials", 3}, {"runs", 100}, {"seed", 0}, {"runner_timeout_s", 10},
                 {"arch", "sm_90a"}, {"cutegen", "report fixture"}};
  if (auto w = write_file_atomic(out / ".cutegen-run", marker.dump(2) + "\n"); !w) return 1;
  if (auto w = write_file_atomic(out / "config.json", config.dump(2)); !w) return 1;
  if (auto w = simulate_clock(out / "events.jsonl"); !w) return std::cerr << w.error().message << "\n", 1;
  // The page reads only the kernels from steps/; prompts (the whole CuTe guide each) stay out of git.
  for (const auto& d : fs::directory_iterator(out / "steps"))
    for (const auto& f : fs::directory_iterator(d.path()))
      if (f.path().filename() != "kernel.cu") fs::remove(f.path());
  for (const auto& d : fs::directory_iterator(out / "steps"))
    if (fs::is_empty(d.path())) fs::remove(d.path());
  std::cerr << "stopped: " << result->stop_reason << "; " << result->history.size() << " steps\n";
  return 0;
}
