#include "profile/kernel_profile.h"

#include <algorithm>
#include <cmath>

namespace cutegen {
namespace {

bool starts_with(const std::string& s, std::string_view p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, std::string_view p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

enum class Combine { attribute, sum, weighted_mean, max, min };

// How launches of one kernel combine, from the metric's name (ncu's naming is systematic:
// `.sum` counters add, `pct`/`ratio`/`per_second` are rates, `launch__` and `device__` describe the
// launch rather than measure it).
Combine combine_rule(const std::string& m) {
  for (std::string_view p : {"launch__", "device__", "nvlink__", "numa__", "c2clink__", "profiler__"})
    if (starts_with(m, p)) return Combine::attribute;
  if (m.find("pct") != std::string::npos || ends_with(m, ".ratio") || m.find("per_second") != std::string::npos ||
      m.find("per_cycle") != std::string::npos)
    return Combine::weighted_mean;
  if (ends_with(m, ".max")) return Combine::max;
  if (ends_with(m, ".min")) return Combine::min;
  if (ends_with(m, ".sum")) return Combine::sum;
  return Combine::weighted_mean;
}

const char* kDuration = "gpu__time_duration.sum";

std::optional<double> first_of(const KernelProfile& k, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (auto v = k.get(n)) return v;
  return std::nullopt;
}

}  // namespace

std::optional<double> KernelProfile::get(const std::string& metric) const {
  auto it = metrics.find(metric);
  if (it == metrics.end()) return std::nullopt;
  return it->second;
}

nlohmann::json KernelProfile::to_json() const {
  nlohmann::json j;
  j["name"] = name;
  j["launches"] = launches;
  j["duration_ns"] = duration_ns;
  j["block"] = block;
  j["grid"] = grid;
  j["metrics"] = metrics;
  if (!text.empty()) j["text"] = text;
  if (!varying.empty()) j["varying_between_launches"] = varying;
  return j;
}

std::vector<KernelProfile> aggregate_by_kernel(const NcuCsv& csv) {
  struct Acc {
    KernelProfile k;
    std::map<std::string, double> weighted;  // sum of value * weight
    std::map<std::string, double> weights;
  };
  std::vector<Acc> accs;
  for (const auto& launch : csv.launches) {
    auto it = std::find_if(accs.begin(), accs.end(), [&](const Acc& a) { return a.k.name == launch.kernel; });
    if (it == accs.end()) {
      accs.push_back({});
      it = accs.end() - 1;
      it->k.name = launch.kernel;
      it->k.block = launch.block;
      it->k.grid = launch.grid;
    }
    Acc& a = *it;
    KernelProfile& k = a.k;
    bool first = k.launches == 0;
    ++k.launches;
    if (!first && launch.block != k.block) k.varying.insert("Block Size");
    if (!first && launch.grid != k.grid) k.varying.insert("Grid Size");
    double duration = 0;
    if (auto d = launch.values.find(kDuration); d != launch.values.end()) duration = d->second;
    k.duration_ns += duration;
    double weight = duration > 0 ? duration : 1.0;
    for (const auto& [m, v] : launch.values) {
      switch (combine_rule(m)) {
        case Combine::attribute:
          if (auto e = k.metrics.find(m); e == k.metrics.end()) {
            k.metrics[m] = v;
          } else if (e->second != v) {
            k.varying.insert(m);
            e->second = std::max(e->second, v);  // the most demanding launch describes the kernel
          }
          break;
        case Combine::sum: k.metrics[m] += v; break;
        case Combine::max: k.metrics[m] = k.metrics.count(m) ? std::max(k.metrics[m], v) : v; break;
        case Combine::min: k.metrics[m] = k.metrics.count(m) ? std::min(k.metrics[m], v) : v; break;
        case Combine::weighted_mean:
          a.weighted[m] += v * weight;
          a.weights[m] += weight;
          break;
      }
    }
    for (const auto& [m, t] : launch.text) k.text.emplace(m, t);
  }
  std::vector<KernelProfile> out;
  for (auto& a : accs) {
    for (const auto& [m, w] : a.weighted) a.k.metrics[m] = w / a.weights[m];
    out.push_back(std::move(a.k));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const KernelProfile& x, const KernelProfile& y) { return x.duration_ns > y.duration_ns; });
  return out;
}

std::string short_kernel_name(const std::string& name, std::size_t max_chars) {
  std::string s = name;
  if (starts_with(s, "void ")) s = s.substr(5);
  for (std::string_view anon : {"(anonymous namespace)::", "<unnamed>::"}) {
    for (auto p = s.find(anon); p != std::string::npos; p = s.find(anon)) s.erase(p, anon.size());
  }
  std::string out;
  int angle = 0, paren = 0;
  for (char c : s) {
    if (c == '<') {
      if (angle == 0 && paren == 0) out += "<...>";
      ++angle;
    } else if (c == '>') {
      if (angle > 0) --angle;
    } else if (c == '(') {
      ++paren;
    } else if (c == ')') {
      if (paren > 0) --paren;
    } else if (angle == 0 && paren == 0) {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.empty()) out = s;
  if (out.size() > max_chars) out = out.substr(0, max_chars - 3) + "...";
  return out;
}

namespace kq {

std::optional<double> sm_pct(const KernelProfile& k) {
  return first_of(k, {"sm__throughput.avg.pct_of_peak_sustained_elapsed"});
}
std::optional<double> memory_pct(const KernelProfile& k) {
  return first_of(k, {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"});
}
std::optional<double> dram_pct(const KernelProfile& k) {
  return first_of(k, {"dram__throughput.avg.pct_of_peak_sustained_elapsed",
                      "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"});
}
std::optional<double> dram_bytes(const KernelProfile& k) {
  if (auto total = k.get("dram__bytes.sum")) return total;
  auto r = k.get("dram__bytes_read.sum");
  auto w = k.get("dram__bytes_write.sum");
  if (!r && !w) return std::nullopt;
  return r.value_or(0) + w.value_or(0);
}
std::optional<double> dram_bytes_per_second(const KernelProfile& k) {
  auto b = dram_bytes(k);
  if (!b || k.duration_ns <= 0) return first_of(k, {"dram__bytes.sum.per_second"});
  return *b / (k.duration_ns * 1e-9);
}
std::optional<double> l1_hit_pct(const KernelProfile& k) { return first_of(k, {"l1tex__t_sector_hit_rate.pct"}); }
std::optional<double> l2_hit_pct(const KernelProfile& k) { return first_of(k, {"lts__t_sector_hit_rate.pct"}); }
std::optional<double> achieved_occupancy_pct(const KernelProfile& k) {
  return first_of(k, {"sm__warps_active.avg.pct_of_peak_sustained_active"});
}
std::optional<double> theoretical_occupancy_pct(const KernelProfile& k) {
  return first_of(k, {"sm__maximum_warps_per_active_cycle_pct"});
}
std::optional<double> registers_per_thread(const KernelProfile& k) { return k.get("launch__registers_per_thread"); }
std::optional<double> shared_static_bytes(const KernelProfile& k) { return k.get("launch__shared_mem_per_block_static"); }
std::optional<double> shared_dynamic_bytes(const KernelProfile& k) {
  return k.get("launch__shared_mem_per_block_dynamic");
}
std::optional<double> grid_size(const KernelProfile& k) { return k.get("launch__grid_size"); }
std::optional<double> block_size(const KernelProfile& k) { return k.get("launch__block_size"); }
std::optional<double> waves_per_sm(const KernelProfile& k) { return k.get("launch__waves_per_multiprocessor"); }
std::optional<double> tensor_pipe_pct(const KernelProfile& k) {
  return first_of(k, {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                      "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"});
}
std::optional<double> fma_pipe_pct(const KernelProfile& k) {
  return first_of(k, {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"});
}

std::map<std::string, double> occupancy_block_limits(const KernelProfile& k) {
  std::map<std::string, double> limits;
  const std::pair<const char*, const char*> names[] = {
      {"registers", "launch__occupancy_limit_registers"},
      {"shared memory", "launch__occupancy_limit_shared_mem"},
      {"warps (block size)", "launch__occupancy_limit_warps"},
      {"blocks per SM (block size)", "launch__occupancy_limit_blocks"},
  };
  for (const auto& [resource, metric] : names)
    if (auto v = k.get(metric)) limits[resource] = *v;
  return limits;
}

std::optional<OccupancyLimit> occupancy_limit(const KernelProfile& k) {
  auto limits = occupancy_block_limits(k);
  if (limits.empty()) return std::nullopt;
  // Ties go to the resource a kernel author controls most directly: registers, then shared memory.
  const char* order[] = {"registers", "shared memory", "warps (block size)", "blocks per SM (block size)"};
  std::optional<OccupancyLimit> best;
  for (const char* r : order) {
    auto it = limits.find(r);
    if (it == limits.end()) continue;
    if (!best || it->second < best->blocks) best = OccupancyLimit{r, it->second};
  }
  return best;
}

double GlobalAccess::bytes_per_thread() const { return instructions > 0 ? bytes / instructions / 32.0 : 0; }
double GlobalAccess::sectors_per_request() const { return requests > 0 ? sectors / requests : 0; }
double GlobalAccess::ideal_sectors_per_request() const {
  if (requests <= 0) return 0;
  return std::max(1.0, std::ceil(bytes / requests / 32.0));
}
double GlobalAccess::used_fraction() const { return sectors > 0 ? bytes / (sectors * 32.0) : 0; }

std::optional<GlobalAccess> global_access(const KernelProfile& k, const std::string& op) {
  auto inst = k.get("smsp__sass_inst_executed_op_global_" + op + ".sum");
  auto bytes = k.get("smsp__sass_data_bytes_mem_global_op_" + op + ".sum");
  auto sectors = k.get("l1tex__t_sectors_pipe_lsu_mem_global_op_" + op + ".sum");
  auto requests = k.get("l1tex__t_requests_pipe_lsu_mem_global_op_" + op + ".sum");
  if (!inst || !bytes || !sectors || !requests) return std::nullopt;
  return GlobalAccess{*inst, *bytes, *sectors, *requests};
}

double BankConflicts::ways() const {
  double clean = wavefronts - conflicts;
  return clean > 0 ? wavefronts / clean : 1.0;
}

std::optional<BankConflicts> shared_bank_conflicts(const KernelProfile& k, const std::string& op) {
  auto c = k.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_" + op + ".sum");
  auto w = k.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_" + op + ".sum");
  if (!c || !w) return std::nullopt;
  return BankConflicts{*c, *w};
}

std::optional<double> local_memory_instructions(const KernelProfile& k) {
  auto l = k.get("smsp__sass_inst_executed_op_local_ld.sum");
  auto s = k.get("smsp__sass_inst_executed_op_local_st.sum");
  if (!l && !s) return std::nullopt;
  return l.value_or(0) + s.value_or(0);
}

std::vector<Stall> stalls(const KernelProfile& k) {
  static const std::string prefix = "smsp__average_warps_issue_stalled_";
  static const std::string suffix = "_per_issue_active.ratio";
  std::vector<Stall> out;
  for (const auto& [m, v] : k.metrics) {
    if (!starts_with(m, prefix) || !ends_with(m, suffix)) continue;
    std::string reason = m.substr(prefix.size(), m.size() - prefix.size() - suffix.size());
    if (reason == "selected") continue;
    out.push_back({reason, v});
  }
  std::stable_sort(out.begin(), out.end(), [](const Stall& a, const Stall& b) { return a.warps > b.warps; });
  return out;
}

std::string stall_meaning(const std::string& reason) {
  static const std::map<std::string, std::string> meanings = {
      {"long_scoreboard", "waiting for global/local memory (L1TEX) results"},
      {"short_scoreboard", "waiting for shared memory or special-function results"},
      {"barrier", "waiting at a block barrier (__syncthreads)"},
      {"membar", "waiting at a memory fence"},
      {"mio_throttle", "shared-memory/special instruction queue full"},
      {"lg_throttle", "global/local memory instruction queue full (many narrow accesses)"},
      {"tex_throttle", "texture/L1TEX queue full"},
      {"math_pipe_throttle", "math pipe busy (compute-saturated)"},
      {"wait", "fixed-latency dependency between instructions"},
      {"not_selected", "eligible but another warp issued (enough parallelism)"},
      {"dispatch_stall", "dispatcher stall"},
      {"drain", "waiting for stores to drain at exit"},
      {"no_instruction", "instruction fetch (cache miss or branch)"},
      {"imc_miss", "constant cache miss"},
      {"branch_resolving", "branch target computation"},
      {"sleeping", "warps sleeping (nanosleep)"},
      {"misc", "miscellaneous"},
  };
  auto it = meanings.find(reason);
  return it == meanings.end() ? reason : it->second;
}

}  // namespace kq
}  // namespace cutegen
