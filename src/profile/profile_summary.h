#pragma once
// The profile as the LLM reads it: at most 40 lines, the numbers that matter for the next
// optimisation step, the roofline position from `cutegen calibrate`, and derived signals
// (memory-, compute- or latency-bound; what limits occupancy; narrow or uncoalesced accesses; bank
// conflicts; low tensor-pipe use in a GEMM; ...), each quoting the number that triggered it, so the
// LLM can weigh the evidence instead of trusting a label.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/evaluation.h"
#include "profile/kernel_profile.h"

namespace cutegen {

constexpr int kMaxSummaryLines = 40;

// What the judge knows about the run that the counters do not.
struct SummaryContext {
  std::string workload_class;          // gemm | conv | attention | reduction | elementwise | other
  int calls = 1;                       // forward calls ncu profiled (for per-call numbers)
  std::optional<double> measured_ms;   // the judge's median per call (events, L2 flushed)
  std::optional<double> floor_ms;      // roofline floor per call
  std::string floor_bound;             // "memory" | "compute"
  std::optional<double> hbm_gbps;      // calibrated DRAM bandwidth, GB/s (bytes read + written)
  std::optional<double> min_bytes;     // bytes the problem must move per call
};

struct Signal {
  std::string kind;    // stable identifier: "memory-bound", "register-limited-occupancy", ...
  std::string kernel;  // short kernel name
  std::string text;    // one line, with its evidence number(s)
};

// The context from the evaluation record (common/evaluation.h): the problem's class and minimum
// bytes, the judge's time, the roofline floor and the calibrated DRAM bandwidth behind it. The record
// lives below both stages, so the profile stage reads the judge's findings as types without
// depending on the run stage.
SummaryContext context_from_evaluation(const Evaluation& evaluation, int calls);

// Signals for the kernels that take a noticeable share of the time (largest first).
std::vector<Signal> derive_signals(const std::vector<KernelProfile>& kernels, const SummaryContext& ctx);

// The prompt text. `notes` are short lines about the profile itself (e.g. metrics ncu did not report).
std::string summarize_profile(const std::vector<KernelProfile>& kernels, const SummaryContext& ctx,
                              const std::vector<std::string>& notes = {});

// When there are no counters: why, and what the judge measured.
std::string timing_only_summary(const SummaryContext& ctx, const std::string& why);

// The roofline sentence both summaries share; empty when there is no floor or measurement.
std::string roofline_line(const SummaryContext& ctx);

nlohmann::json to_json(const Signal& s);

}  // namespace cutegen
