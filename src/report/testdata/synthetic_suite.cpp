#include "synthetic_suite.h"

#include <array>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "bench/suite_dir.h"
#include "common/fs.h"

namespace cutegen::fixtures {
namespace {

// A fixed linear congruential sequence: the same suite on every machine and compiler.
struct Lcg {
  uint64_t state;
  double next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
  }
};

constexpr std::array<const char*, 10> kOps{"ReLU", "Softmax", "Matmul", "LayerNorm", "Conv2d",
                                            "GELU", "Sum_reduction", "Argmax", "RMSNorm", "BatchMatmul"};

}  // namespace

std::vector<bench::TaskRecord> synthetic_tasks(int n, bool baselines) {
  Lcg rng{static_cast<uint64_t>(n) * 7919 + (baselines ? 1 : 0)};
  std::vector<bench::TaskRecord> out;
  for (int i = 1; i <= n; ++i) {
    bench::TaskRecord r;
    r.number = i;
    r.name = fmt::format("{}_{}", i, kOps[i % kOps.size()]);
    r.problem = fmt::format("/problems/level1/{}.py", r.name);
    r.mode = baselines ? "baselines" : "optimize";
    r.device = "NVIDIA H200";
    r.lane = fmt::format("gpu{}", i % 4);
    r.host = "node1";
    r.started_at = 1.7e9 + 60.0 * i;
    r.wall_s = 30 + 600 * rng.next();
    r.finished_at = r.started_at + r.wall_s;
    r.gpu_busy_s = r.wall_s * 0.3;
    r.attempts = 1;
    r.eager_ms = 0.05 * std::pow(10, 2.5 * rng.next());
    r.compile_ms = *r.eager_ms * (0.5 + rng.next());
    if (i % 17 == 0) {
      r.compile_ms.reset();
      r.compile_error = "torch.compile failed: Unsupported: dynamic shape";
    }
    r.floor_ms = *r.eager_ms / (1.5 + 30 * rng.next());
    r.floor_bound = i % 3 ? "memory" : "compute";
    r.flops = static_cast<uint64_t>(1e6 * (1 + 1000 * rng.next()));
    r.min_bytes = static_cast<uint64_t>(1e6 * (1 + 100 * rng.next()));
    double roll = rng.next();
    if (baselines) {
      r.verdict = i % 25 == 3 ? bench::TaskVerdict::problem_error : bench::TaskVerdict::measured;
      if (r.verdict == bench::TaskVerdict::problem_error) {
        r.detail = "the problem does not import: ModuleNotFoundError: No module named 'triton'";
        r.eager_ms.reset();
        r.compile_ms.reset();
        r.floor_ms.reset();
      }
      out.push_back(r);
      continue;
    }
    r.llm_calls = 3 + static_cast<int>(20 * rng.next());
    r.tokens = 4000LL * r.llm_calls + static_cast<long long>(5000 * rng.next());
    r.cost_usd = std::round(r.tokens * 0.00001 * 1e4) / 1e4;
    r.steps = static_cast<int>(8 * rng.next());
    r.syntheses = 1;
    r.example = i % 2 ? "elementwise" : "row_softmax";
    if (i % 20 == 7) {
      r.verdict = bench::TaskVerdict::not_started;
      r.detail = "suite budget reached: $150 of --suite-max-cost 150";
      r.llm_calls = 0;
      r.tokens = 0;
      r.cost_usd = 0;
      r.steps = 0;
      r.wall_s = 0;
      r.started_at = r.finished_at = 0;
    } else if (roll < 0.72) {
      r.verdict = bench::TaskVerdict::correct;
      r.stop_reason = "steps";
      // Speedups over eager spread over 0.2x .. 20x on a log scale.
      r.best_ms = *r.eager_ms / std::pow(10, -0.7 + 2.0 * rng.next());
      r.sol_pct = 100 * *r.floor_ms / *r.best_ms;
      if (i % 31 == 0) r.sol_pct = 104.5;  // a floor model that is wrong for the problem
      if (i % 3 == 0) {  // the run started from a seed (docs/seed.md), which reached this alone
        r.seed = "pointwise chain";
        r.seed_ms = *r.best_ms * 1.25;
      }
    } else if (roll < 0.9) {
      r.verdict = bench::TaskVerdict::no_correct_kernel;
      r.stop_reason = "attempts";
      r.detail = "no correct kernel after 4 synthesis attempts: mismatch at output[0][17] (max abs error 3.2e-2)";
    } else if (roll < 0.95) {
      r.verdict = bench::TaskVerdict::crashed;
      r.detail = "killed by signal 9 after --task-timeout 3600 s";
    } else {
      r.verdict = bench::TaskVerdict::problem_error;
      r.detail = "the problem does not build: RuntimeError: CUDA out of memory <in get_inputs>";
    }
    out.push_back(r);
  }
  return out;
}

Status write_synthetic_suite(const std::filesystem::path& dir, int n, bool baselines) {
  auto tasks = synthetic_tasks(n, baselines);
  bench::Manifest m;
  m.mode = baselines ? "baselines" : "optimize";
  m.llm = baselines ? "" : "openai:gpt-5";
  m.settings = {{"steps", "8"}};
  for (const auto& t : tasks) m.tasks.push_back({t.name, t.problem, t.number});
  auto suite = bench::SuiteDir::open(dir, m);
  if (!suite) return suite.error();
  int i = 0;
  for (const auto& t : tasks) {
    ++i;
    if (auto w = suite->write_record(t); !w) return w;  // not_started too: the scheduler records a budget stop
    if (baselines || i % 7 == 0 || t.verdict == bench::TaskVerdict::not_started) continue;
    auto page = suite->task_dir(t.name) / "report.html";
    std::error_code ec;
    std::filesystem::create_directories(page.parent_path(), ec);
    if (auto w = write_file_atomic(page, "<!DOCTYPE html><title>" + t.name + "</title>\n"); !w) return w;
  }
  return ok_status();
}

}  // namespace cutegen::fixtures
