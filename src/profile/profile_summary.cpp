#include "profile/profile_summary.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace cutegen {
namespace {

// Thresholds. Nsight Compute's own guidance calls a unit "busy" above about 60% of its peak; the
// others are where a change is worth an optimisation step rather than noise.
constexpr double kBusyPct = 60;
constexpr double kSignalShare = 0.10;        // kernels below this share of GPU time get no signals
constexpr double kLowOccupancyPct = 50;      // theoretical occupancy worth naming a limiter for
constexpr double kAchievedGap = 0.6;         // achieved below this fraction of theoretical
constexpr double kNarrowBytes = 15.5;        // below 16 B per thread: not 128-bit accesses
constexpr double kUncoalescedFactor = 1.5;   // sectors per request over the ideal
constexpr double kMinInstructions = 1000;    // too few accesses to matter
// L1 requests per SASS global access instruction above which the L1 counters hold accesses the SASS
// counters do not (cp.async copies): one request per instruction is the rule for plain loads and stores.
constexpr double kMaxRequestsPerInstruction = 1.5;
constexpr double kConflictShare = 0.10;      // conflicts as a share of shared wavefronts
constexpr double kMinConflicts = 10000;
constexpr double kLowTensorPct = 30;
constexpr double kExcessTraffic = 1.25;      // DRAM bytes over the problem's minimum
constexpr double kNearRooflinePct = 80;
constexpr double kDominantStall = 0.5;       // share of all stalls
constexpr int kMaxSignals = 12;
constexpr int kMaxSignalKernels = 3;

std::string pct(double v) { return fmt::format("{:.1f}%", v); }

std::string bytes(double b) {
  if (b < 1e3) return fmt::format("{:.0f} B", b);
  if (b < 1e6) return fmt::format("{:.1f} KB", b / 1e3);
  if (b < 1e9) return fmt::format("{:.1f} MB", b / 1e6);
  return fmt::format("{:.2f} GB", b / 1e9);
}

std::string count(double n) {
  if (n < 1e3) return fmt::format("{:.0f}", n);
  if (n < 1e6) return fmt::format("{:.2f}K", n / 1e3);
  if (n < 1e9) return fmt::format("{:.2f}M", n / 1e6);
  return fmt::format("{:.2f}G", n / 1e9);
}

std::string duration(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.1f} us", ns / 1e3);
  return fmt::format("{:.3f} ms", ns / 1e6);
}

std::string gbps(double bytes_per_second) { return fmt::format("{:.0f} GB/s", bytes_per_second / 1e9); }

bool gemm_like(const std::string& cls) { return cls == "gemm" || cls == "conv" || cls == "attention"; }

double total_ns(const std::vector<KernelProfile>& kernels) {
  double t = 0;
  for (const auto& k : kernels) t += k.duration_ns;
  return t;
}

// Where the kernel sits: the unit near its peak, or neither (latency).
enum class Bound { memory_dram, memory_onchip, compute, both, latency, unknown };
constexpr double kBalancedGap = 10;  // both busy and this close: neither side alone is the limit
Bound classify(const KernelProfile& k) {
  auto sm = kq::sm_pct(k), mem = kq::memory_pct(k);
  if (!sm || !mem) return Bound::unknown;
  if (*sm >= kBusyPct && *mem >= kBusyPct && std::abs(*sm - *mem) < kBalancedGap) return Bound::both;
  if (*mem >= kBusyPct && *mem >= *sm) {
    auto dram = kq::dram_pct(k);
    return dram && *dram >= 0.8 * *mem ? Bound::memory_dram : Bound::memory_onchip;
  }
  if (*sm >= kBusyPct) return Bound::compute;
  return Bound::latency;
}

std::string top_stall_phrase(const KernelProfile& k) {
  auto st = kq::stalls(k);
  if (st.empty() || st.front().warps <= 0) return "";
  return fmt::format("top stall {} ({:.2f} warps per issue: {})", st.front().reason, st.front().warps,
                     kq::stall_meaning(st.front().reason));
}

void bound_signals(const KernelProfile& k, const std::string& name, std::vector<Signal>& out) {
  auto sm = kq::sm_pct(k), mem = kq::memory_pct(k), dram = kq::dram_pct(k);
  switch (classify(k)) {
    case Bound::memory_dram:
      out.push_back({"memory-bound", name,
                     fmt::format("memory-bound on DRAM: memory throughput {} of peak (DRAM {}) vs SM {}", pct(*mem),
                                 pct(dram.value_or(0)), pct(*sm))});
      break;
    case Bound::memory_onchip:
      out.push_back({"memory-bound", name,
                     fmt::format("memory-bound on-chip (L1/shared/L2): memory throughput {} of peak but DRAM only "
                                 "{}; SM {}",
                                 pct(*mem), pct(dram.value_or(0)), pct(*sm))});
      break;
    case Bound::compute: {
      std::string pipes;
      if (auto t = kq::tensor_pipe_pct(k)) pipes += fmt::format("; tensor pipe {}", pct(*t));
      if (auto f = kq::fma_pipe_pct(k)) pipes += fmt::format(", FMA pipe {}", pct(*f));
      out.push_back({"compute-bound", name,
                     fmt::format("compute-bound: SM throughput {} of peak vs memory {}{}", pct(*sm), pct(*mem), pipes)});
      break;
    }
    case Bound::both:
      out.push_back({"compute-and-memory-bound", name,
                     fmt::format("compute- and memory-bound at once: SM {} and memory {} of peak (DRAM {}); less "
                                 "traffic per operation and fewer instructions both matter",
                                 pct(*sm), pct(*mem), pct(dram.value_or(0)))});
      break;
    case Bound::latency: {
      std::string stall = top_stall_phrase(k);
      out.push_back({"latency-bound", name,
                     fmt::format("latency-bound: neither SM ({}) nor memory ({}) is near its peak{}", pct(*sm),
                                 pct(*mem), stall.empty() ? "" : "; " + stall)});
      break;
    }
    case Bound::unknown: break;
  }
}

void occupancy_signals(const KernelProfile& k, const std::string& name, std::vector<Signal>& out) {
  auto theo = kq::theoretical_occupancy_pct(k);
  auto achieved = kq::achieved_occupancy_pct(k);
  auto limit = kq::occupancy_limit(k);
  if (theo && limit && *theo < kLowOccupancyPct) {
    std::string achieved_text = achieved ? fmt::format(" (achieved {})", pct(*achieved)) : "";
    if (limit->resource == "registers") {
      out.push_back({"register-limited-occupancy", name,
                     fmt::format("register-limited occupancy: {:.0f} registers/thread allow {:.0f} block(s)/SM -> "
                                 "theoretical occupancy {}{}",
                                 kq::registers_per_thread(k).value_or(0), limit->blocks, pct(*theo), achieved_text)});
    } else if (limit->resource == "shared memory") {
      double smem = kq::shared_static_bytes(k).value_or(0) + kq::shared_dynamic_bytes(k).value_or(0);
      out.push_back({"shared-memory-limited-occupancy", name,
                     fmt::format("shared-memory-limited occupancy: {} per block allows {:.0f} block(s)/SM -> "
                                 "theoretical occupancy {}{}",
                                 bytes(smem), limit->blocks, pct(*theo), achieved_text)});
    } else {
      out.push_back({"block-size-limited-occupancy", name,
                     fmt::format("block-size-limited occupancy: {:.0f} threads per block allow {:.0f} block(s)/SM "
                                 "({}) -> theoretical occupancy {}{}",
                                 kq::block_size(k).value_or(0), limit->blocks, limit->resource, pct(*theo),
                                 achieved_text)});
    }
  }
  if (theo && achieved && *theo >= 20 && *achieved < kAchievedGap * *theo) {
    std::string waves;
    if (auto w = kq::waves_per_sm(k)) waves = fmt::format("; {:.2f} waves of blocks", *w);
    out.push_back({"low-achieved-occupancy", name,
                   fmt::format("achieved occupancy {} is far below the theoretical {}: uneven or too few blocks{}",
                               pct(*achieved), pct(*theo), waves)});
  }
  auto grid = kq::grid_size(k);
  auto sms = k.get("launch__sm_count");
  auto waves = kq::waves_per_sm(k);
  if (grid && sms && waves && *waves < 0.5)
    out.push_back({"small-grid", name,
                   fmt::format("small grid: {:.0f} blocks for {:.0f} SMs ({:.2f} waves): most SMs sit idle", *grid,
                               *sms, *waves)});
}

void access_signals(const KernelProfile& k, const std::string& name, const SummaryContext& ctx,
                    std::vector<Signal>& out) {
  // Access width matters where DRAM bandwidth is the limit; in a kernel bound on-chip it is noise.
  bool bandwidth_matters = classify(k) == Bound::memory_dram || ctx.workload_class == "elementwise" ||
                           ctx.workload_class == "reduction";
  for (const char* op : {"ld", "st"}) {
    auto a = kq::global_access(k, op);
    if (!a || a->requests < kMinInstructions) continue;
    const char* what = std::string(op) == "ld" ? "loads" : "stores";
    // A warp's global access instruction is one L1 request. Many more requests than instructions means
    // cp.async copies (LDGSTS) share the L1 counters while the SASS instruction and byte counters leave
    // them out, so bytes per request says nothing about coalescing (a cp.async softmax reading 512
    // contiguous bytes per request read as "16 sectors where 1 would do; 0% used"). The price: in a
    // kernel whose copies outnumber its plain loads, uncoalesced plain loads go unreported.
    const bool counters_agree = a->requests <= kMaxRequestsPerInstruction * a->instructions;
    if (counters_agree && a->sectors_per_request() >= kUncoalescedFactor * a->ideal_sectors_per_request()) {
      out.push_back({fmt::format("uncoalesced-{}", what), name,
                     fmt::format("uncoalesced global {}: {:.1f} sectors per request where {:.0f} would do; {:.0f}% of "
                                 "fetched bytes used",
                                 what, a->sectors_per_request(), a->ideal_sectors_per_request(),
                                 100 * a->used_fraction())});
    }
    if (bandwidth_matters && a->instructions >= kMinInstructions && a->bytes_per_thread() < kNarrowBytes) {
      out.push_back({fmt::format("narrow-{}", what), name,
                     fmt::format("narrow global {}: {:.1f} B per thread per instruction ({} instructions); 16 B "
                                 "(128-bit) accesses need {:.0f}x fewer",
                                 what, a->bytes_per_thread(), count(a->instructions),
                                 16.0 / std::max(1.0, a->bytes_per_thread()))});
    }
  }
  std::string conflicts;
  double worst_ways = 1;
  double total = 0;
  for (const char* op : {"ld", "st"}) {
    auto c = kq::shared_bank_conflicts(k, op);
    if (!c || c->conflicts < kMinConflicts || c->conflicts < kConflictShare * c->wavefronts) continue;
    total += c->conflicts;
    worst_ways = std::max(worst_ways, c->ways());
    conflicts += fmt::format("{}{} {} in {} wavefronts (~{:.1f}-way)", conflicts.empty() ? "" : "; ",
                             std::string(op) == "ld" ? "loads" : "stores", count(c->conflicts), count(c->wavefronts),
                             c->ways());
  }
  if (!conflicts.empty())
    out.push_back({"bank-conflicts", name, fmt::format("shared-memory bank conflicts: {}", conflicts)});
  if (auto local = kq::local_memory_instructions(k); local && *local > 0)
    out.push_back({"register-spills", name,
                   fmt::format("register spills: {} local-memory instructions ({:.0f} registers/thread)", count(*local),
                               kq::registers_per_thread(k).value_or(0))});
}

void pipe_signals(const KernelProfile& k, const std::string& name, const SummaryContext& ctx, bool main_kernel,
                  std::vector<Signal>& out) {
  if (!gemm_like(ctx.workload_class)) return;
  auto tensor = kq::tensor_pipe_pct(k);
  if (!tensor || *tensor >= kLowTensorPct) return;
  auto fma = kq::fma_pipe_pct(k);
  // A GEMM problem's side kernels (bias, activation, conversion) do no matrix math: only the main
  // kernel, or one that does math on either pipe, is judged by its tensor-pipe use.
  if (!main_kernel && *tensor <= 0 && fma.value_or(0) < 10) return;
  std::string text = fmt::format("low tensor-pipe use in a {}: tensor pipe active {} of cycles", ctx.workload_class,
                                 pct(*tensor));
  if (fma && *tensor < 1 && *fma >= 10)
    text += fmt::format("; the math runs on the FMA pipe ({}) instead of tensor cores", pct(*fma));
  else if (fma)
    text += fmt::format(" (FMA pipe {})", pct(*fma));
  out.push_back({"low-tensor-pipe", name, text});
}

void stall_signal(const KernelProfile& k, const std::string& name, std::vector<Signal>& out) {
  auto st = kq::stalls(k);
  double total = 0;
  for (const auto& s : st) total += s.warps;
  if (st.empty() || total < 1 || st.front().warps < kDominantStall * total) return;
  out.push_back({"dominant-stall", name,
                 fmt::format("stalls dominated by {}: {:.2f} of {:.2f} stalled warps per issue ({:.0f}%): {}",
                             st.front().reason, st.front().warps, total, 100 * st.front().warps / total,
                             kq::stall_meaning(st.front().reason))});
}

std::string occupancy_line(const KernelProfile& k) {
  auto theo = kq::theoretical_occupancy_pct(k);
  auto achieved = kq::achieved_occupancy_pct(k);
  if (!theo && !achieved) return "";
  std::string s = fmt::format("  occupancy: achieved {} of theoretical {}", achieved ? pct(*achieved) : "?",
                              theo ? pct(*theo) : "?");
  if (auto regs = kq::registers_per_thread(k)) s += fmt::format("; {:.0f} regs/thread", *regs);
  auto limits = kq::occupancy_block_limits(k);
  if (auto limit = kq::occupancy_limit(k); limit && theo && *theo < 100) {
    s += fmt::format("; limited by {} ({:.0f} blocks/SM)", limit->resource, limit->blocks);
  }
  if (!limits.empty()) {
    s += "; blocks/SM allowed by";
    const std::pair<const char*, const char*> shortnames[] = {{"registers", "regs"},
                                                               {"shared memory", "smem"},
                                                               {"warps (block size)", "warps"},
                                                               {"blocks per SM (block size)", "max blocks"}};
    bool first = true;
    for (const auto& [full, shortname] : shortnames) {
      auto it = limits.find(full);
      if (it == limits.end()) continue;
      s += fmt::format("{} {} {:.0f}", first ? "" : ",", shortname, it->second);
      first = false;
    }
  }
  return s;
}

std::string access_line(const KernelProfile& k) {
  std::string s;
  for (const char* op : {"ld", "st"}) {
    auto a = kq::global_access(k, op);
    if (!a || a->instructions <= 0) continue;
    s += fmt::format("{}{}: {:.1f} B/thread, {:.1f} sectors/request (ideal {:.0f})", s.empty() ? "  global " : "; ",
                     std::string(op) == "ld" ? "loads" : "stores", a->bytes_per_thread(), a->sectors_per_request(),
                     a->ideal_sectors_per_request());
  }
  return s;
}

// The detailed view of the kernel that matters most.
std::vector<std::string> kernel_detail(const KernelProfile& k, int index, int n, double share, int calls) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("Kernel {} of {}: {} - {} launch{} ({}/call), {} each, {:.0f}% of GPU time; grid {} x "
                              "block {}",
                              index, n, short_kernel_name(k.name), k.launches, k.launches == 1 ? "" : "es",
                              fmt::format("{:.3g}", static_cast<double>(k.launches) / std::max(1, calls)),
                              duration(k.mean_duration_ns()), 100 * share, k.grid, k.block));
  auto sm = kq::sm_pct(k), mem = kq::memory_pct(k), dram = kq::dram_pct(k);
  if (sm || mem) {
    std::string s = fmt::format("  throughput: SM {}, memory {} of peak", sm ? pct(*sm) : "?", mem ? pct(*mem) : "?");
    auto b = kq::dram_bytes(k);
    auto bw = kq::dram_bytes_per_second(k);
    if (dram || b) {
      s += fmt::format(" (DRAM {}", dram ? pct(*dram) : "?");
      if (b && k.launches) s += fmt::format(": {} per launch", bytes(*b / k.launches));
      if (bw) s += fmt::format(" at {}", gbps(*bw));
      s += ")";
    }
    lines.push_back(s);
  }
  auto l1 = kq::l1_hit_pct(k), l2 = kq::l2_hit_pct(k);
  if (l1 || l2) lines.push_back(fmt::format("  caches: L1 hit {}, L2 hit {}", l1 ? pct(*l1) : "?", l2 ? pct(*l2) : "?"));
  if (auto occ = occupancy_line(k); !occ.empty()) lines.push_back(occ);
  auto ss = kq::shared_static_bytes(k), sd = kq::shared_dynamic_bytes(k);
  if (ss || sd)
    lines.push_back(fmt::format("  shared memory per block: {} static + {} dynamic", bytes(ss.value_or(0)),
                                bytes(sd.value_or(0))));
  auto t = kq::tensor_pipe_pct(k), f = kq::fma_pipe_pct(k);
  if (t || f)
    lines.push_back(fmt::format("  pipes (of active cycles): tensor {}, FMA {}", t ? pct(*t) : "?", f ? pct(*f) : "?"));
  if (auto a = access_line(k); !a.empty()) lines.push_back(a);
  std::string conflicts;
  for (const char* op : {"ld", "st"}) {
    if (auto c = kq::shared_bank_conflicts(k, op); c && c->wavefronts > 0)
      conflicts += fmt::format("{}{} {} in {} wavefronts (~{:.1f}-way)", conflicts.empty() ? "  shared bank conflicts: " : "; ",
                               std::string(op) == "ld" ? "loads" : "stores", count(c->conflicts), count(c->wavefronts),
                               c->ways());
  }
  if (!conflicts.empty()) lines.push_back(conflicts);
  auto st = kq::stalls(k);
  if (!st.empty() && st.front().warps > 0) {
    std::string s = "  top stalls (warps per issue cycle):";
    for (std::size_t i = 0; i < st.size() && i < 3; ++i)
      if (st[i].warps > 0) s += fmt::format("{} {} {:.2f}", i ? "," : "", st[i].reason, st[i].warps);
    lines.push_back(s);
  }
  return lines;
}

std::vector<std::string> kernel_brief(const KernelProfile& k, int index, int n, double share) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("Kernel {} of {}: {} - {} launch{}, {} each, {:.0f}% of GPU time; grid {} x block {}", index,
                              n, short_kernel_name(k.name), k.launches, k.launches == 1 ? "" : "es",
                              duration(k.mean_duration_ns()), 100 * share, k.grid, k.block));
  auto sm = kq::sm_pct(k), mem = kq::memory_pct(k), dram = kq::dram_pct(k);
  auto achieved = kq::achieved_occupancy_pct(k), theo = kq::theoretical_occupancy_pct(k);
  if (sm || mem)
    lines.push_back(fmt::format("  SM {}, memory {} (DRAM {}); occupancy {} of {}; {:.0f} regs/thread",
                                sm ? pct(*sm) : "?", mem ? pct(*mem) : "?", dram ? pct(*dram) : "?",
                                achieved ? pct(*achieved) : "?", theo ? pct(*theo) : "?",
                                kq::registers_per_thread(k).value_or(0)));
  return lines;
}

}  // namespace

nlohmann::json to_json(const Signal& s) { return {{"kind", s.kind}, {"kernel", s.kernel}, {"text", s.text}}; }

SummaryContext context_from_evaluation(const Evaluation& e, int calls) {
  SummaryContext ctx;
  ctx.calls = calls;
  if (e.problem) {
    ctx.workload_class = std::string(to_string(e.problem->workload_class));
    if (e.problem->min_bytes > 0) ctx.min_bytes = static_cast<double>(e.problem->min_bytes);
  }
  if (e.median_ms() > 0) ctx.measured_ms = e.median_ms();  // the worker's clock (docs/judge.md)
  if (e.floor) {
    if (e.floor->floor_ms > 0) ctx.floor_ms = e.floor->floor_ms;
    if (e.floor->hbm_gbps > 0) ctx.hbm_gbps = e.floor->hbm_gbps;  // the judge's calibration
    ctx.floor_bound = e.floor->bound;
  }
  return ctx;
}

std::string roofline_line(const SummaryContext& ctx) {
  if (!ctx.measured_ms || *ctx.measured_ms <= 0) return "";
  if (!ctx.floor_ms || *ctx.floor_ms <= 0)
    return fmt::format("Roofline: {:.4g} ms per call measured; no floor (run `cutegen calibrate` for one)", *ctx.measured_ms);
  return fmt::format("Roofline: {:.4g} ms per call measured vs floor {:.4g} ms ({}-bound problem) -> {:.0f}% of speed of "
                     "light",
                     *ctx.measured_ms, *ctx.floor_ms, ctx.floor_bound.empty() ? "?" : ctx.floor_bound,
                     100 * *ctx.floor_ms / *ctx.measured_ms);
}

// Which signals survive the cap: what decides the next step first (where the time goes, what
// bounds occupancy, whether the tensor cores work), the access-pattern defects next, then details.
int tier(const std::string& kind) {
  if (kind == "near-roofline" || kind == "excess-dram-traffic") return 0;
  if (kind == "memory-bound" || kind == "compute-bound" || kind == "compute-and-memory-bound" ||
      kind == "latency-bound" || kind == "low-tensor-pipe" ||
      kind == "register-spills" || kind.find("-limited-occupancy") != std::string::npos)
    return 1;
  if (kind.rfind("uncoalesced-", 0) == 0 || kind == "bank-conflicts" || kind == "small-grid") return 2;
  return 3;
}

std::vector<Signal> derive_signals(const std::vector<KernelProfile>& kernels, const SummaryContext& ctx) {
  std::vector<Signal> out;
  std::vector<int> kernel_rank;  // parallel to out: 0 for whole-run signals, then 1, 2, ...
  double total = total_ns(kernels);
  if (ctx.measured_ms && ctx.floor_ms && *ctx.measured_ms > 0) {
    double sol = 100 * *ctx.floor_ms / *ctx.measured_ms;
    if (sol >= kNearRooflinePct)
      out.push_back({"near-roofline", "",
                     fmt::format("near the roofline: {:.0f}% of speed of light ({:.4g} ms vs floor {:.4g} ms); further "
                                 "gains are small",
                                 sol, *ctx.measured_ms, *ctx.floor_ms)});
  }
  if (ctx.min_bytes && *ctx.min_bytes > 0 && ctx.calls > 0) {
    double moved = 0;
    bool any = false;
    for (const auto& k : kernels)
      if (auto b = kq::dram_bytes(k)) {
        moved += *b;
        any = true;
      }
    moved /= ctx.calls;
    if (any && moved > kExcessTraffic * *ctx.min_bytes && moved > 1e6)
      out.push_back({"excess-dram-traffic", "",
                     fmt::format("excess DRAM traffic: {} moved per call, {:.1f}x the {} the problem must move (inputs "
                                 "read again, or intermediates round-tripping through memory)",
                                 bytes(moved), moved / *ctx.min_bytes, bytes(*ctx.min_bytes))});
  }
  kernel_rank.assign(out.size(), 0);
  int considered = 0;
  for (const auto& k : kernels) {
    if (considered == kMaxSignalKernels) break;
    if (total > 0 && k.duration_ns < kSignalShare * total && considered > 0) continue;
    ++considered;
    std::string name = short_kernel_name(k.name, 40);
    bound_signals(k, name, out);
    occupancy_signals(k, name, out);
    access_signals(k, name, ctx, out);
    pipe_signals(k, name, ctx, considered == 1, out);
    stall_signal(k, name, out);
    kernel_rank.resize(out.size(), considered);
  }
  std::vector<std::size_t> order(out.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    int ta = tier(out[a].kind), tb = tier(out[b].kind);
    return ta != tb ? ta < tb : kernel_rank[a] < kernel_rank[b];
  });
  std::vector<Signal> sorted;
  for (std::size_t i = 0; i < order.size() && static_cast<int>(sorted.size()) < kMaxSignals; ++i)
    sorted.push_back(out[order[i]]);
  return sorted;
}

std::string summarize_profile(const std::vector<KernelProfile>& kernels, const SummaryContext& ctx,
                              const std::vector<std::string>& notes) {
  double total = total_ns(kernels);
  int launches = 0;
  for (const auto& k : kernels) launches += k.launches;
  std::vector<std::string> head;
  head.push_back(fmt::format("Nsight Compute profile: {} kernel{}, {} launch{} over {} call{}; {} kernel time per call "
                             "(clocks unlocked, caches flushed per launch)",
                             kernels.size(), kernels.size() == 1 ? "" : "s", launches, launches == 1 ? "" : "es",
                             ctx.calls, ctx.calls == 1 ? "" : "s", duration(total / std::max(1, ctx.calls))));
  if (auto r = roofline_line(ctx); !r.empty()) head.push_back(r);
  if (ctx.hbm_gbps) {
    double bw = 0;
    for (const auto& k : kernels)
      if (auto b = kq::dram_bytes(k)) bw += *b;
    // Bandwidths, no percentage: the one DRAM percentage of the summary is Nsight Compute's
    // dram__throughput per kernel, the figure the optimisation menus' thresholds and the signals use.
    if (total > 0)
      head.push_back(fmt::format("DRAM: {} achieved over all kernels; the calibrated peak is {:.0f} GB/s",
                                 gbps(bw / (total * 1e-9)), *ctx.hbm_gbps));
  }
  for (const auto& n : notes) head.push_back("Note: " + n);

  auto signals = derive_signals(kernels, ctx);
  std::vector<std::string> tail;
  if (!signals.empty()) {
    tail.push_back("Signals:");
    for (const auto& s : signals)
      tail.push_back(fmt::format("- {}{}", s.kernel.empty() ? "" : "[" + s.kernel + "] ", s.text));
  }

  // Kernels get what the header and the signals leave: the top one in detail, then briefs.
  int budget = kMaxSummaryLines - static_cast<int>(head.size() + tail.size());
  std::vector<std::string> body;
  int n = static_cast<int>(kernels.size());
  int shown = 0;
  for (int i = 0; i < n; ++i) {
    double share = total > 0 ? kernels[i].duration_ns / total : 0;
    auto lines = i == 0 ? kernel_detail(kernels[i], i + 1, n, share, ctx.calls) : kernel_brief(kernels[i], i + 1, n, share);
    int reserve = i + 1 < n ? 1 : 0;  // room for the "N more kernels" line
    if (static_cast<int>(body.size() + lines.size()) + reserve > budget) {
      if (i == 0) lines.resize(std::max(0, budget - reserve));
      else break;
    }
    body.insert(body.end(), lines.begin(), lines.end());
    ++shown;
  }
  if (shown < n) {
    double rest = 0;
    for (int i = shown; i < n; ++i) rest += kernels[i].duration_ns;
    body.push_back(fmt::format("... {} more kernel{}, {:.0f}% of GPU time", n - shown, n - shown == 1 ? "" : "s",
                               total > 0 ? 100 * rest / total : 0));
  }
  std::vector<std::string> all = head;
  all.insert(all.end(), body.begin(), body.end());
  all.insert(all.end(), tail.begin(), tail.end());
  if (static_cast<int>(all.size()) > kMaxSummaryLines) all.resize(kMaxSummaryLines);
  std::string out;
  for (const auto& l : all) out += l + "\n";
  return out;
}

std::string timing_only_summary(const SummaryContext& ctx, const std::string& why) {
  std::string s = fmt::format("No hardware counters: {}\n", why);
  if (auto r = roofline_line(ctx); !r.empty()) {
    s += "Timing only. " + r + "\n";
  } else if (ctx.measured_ms) {
    s += fmt::format("Timing only: {:.4g} ms per call measured\n", *ctx.measured_ms);
  }
  if (ctx.measured_ms && ctx.min_bytes && *ctx.measured_ms > 0)
    s += fmt::format("Effective bandwidth on the minimum bytes: {} ({} per call)\n",
                     gbps(*ctx.min_bytes / (*ctx.measured_ms * 1e-3)), bytes(*ctx.min_bytes));
  return s;
}

}  // namespace cutegen
