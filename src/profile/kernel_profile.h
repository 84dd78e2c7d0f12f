#pragma once
// One kernel's profile, aggregated over its launches: counters (`.sum`) add up, rates and
// percentages are averaged weighted by each launch's duration (a long launch says more about where
// the time goes than a short one), launch attributes (registers, grid, ...) are kept once and marked
// when launches disagree. The named accessors below are the quantities the summary reasons about,
// each read from its ncu metric (see ncu_metrics.txt) so the mapping lives in one place.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/ncu_csv_parser.h"

namespace cutegen {

struct KernelProfile {
  std::string name;                        // as ncu printed it (demangled)
  int launches = 0;
  double duration_ns = 0;                  // all launches together
  std::string block, grid;                 // "(256, 1, 1)"
  std::map<std::string, double> metrics;   // aggregated, canonical units
  std::map<std::string, std::string> text;
  std::set<std::string> varying;           // launch attributes that differ between launches

  std::optional<double> get(const std::string& metric) const;
  double mean_duration_ns() const { return launches ? duration_ns / launches : 0; }
  nlohmann::json to_json() const;
};

// Kernels in order of total duration, longest first.
std::vector<KernelProfile> aggregate_by_kernel(const NcuCsv& csv);

// "void cute::gemm_kernel<cute::tuple<...>, ...>(Params)" -> "cute::gemm_kernel<…>": template
// arguments and parameters removed, at most `max_chars` long. The full name stays in the JSON.
std::string short_kernel_name(const std::string& name, std::size_t max_chars = 60);

// The quantities the summary uses (nullopt when ncu did not report the metric).
namespace kq {
std::optional<double> sm_pct(const KernelProfile& k);            // SM throughput, % of peak
std::optional<double> memory_pct(const KernelProfile& k);        // memory throughput (DRAM, L2, L1, shared), % of peak
std::optional<double> dram_pct(const KernelProfile& k);          // DRAM throughput, % of peak
std::optional<double> dram_bytes(const KernelProfile& k);        // read + written, all launches
std::optional<double> dram_bytes_per_second(const KernelProfile& k);
std::optional<double> l1_hit_pct(const KernelProfile& k);
std::optional<double> l2_hit_pct(const KernelProfile& k);
std::optional<double> achieved_occupancy_pct(const KernelProfile& k);
std::optional<double> theoretical_occupancy_pct(const KernelProfile& k);
std::optional<double> registers_per_thread(const KernelProfile& k);
std::optional<double> shared_static_bytes(const KernelProfile& k);
std::optional<double> shared_dynamic_bytes(const KernelProfile& k);
std::optional<double> grid_size(const KernelProfile& k);
std::optional<double> block_size(const KernelProfile& k);
std::optional<double> waves_per_sm(const KernelProfile& k);
std::optional<double> tensor_pipe_pct(const KernelProfile& k);   // of active cycles
std::optional<double> fma_pipe_pct(const KernelProfile& k);

// What limits theoretical occupancy: the resource allowing the fewest blocks per SM.
struct OccupancyLimit {
  std::string resource;   // "registers", "shared memory", "warps (block size)", "blocks per SM (block size)"
  double blocks = 0;      // blocks per SM that resource allows
};
std::optional<OccupancyLimit> occupancy_limit(const KernelProfile& k);
std::map<std::string, double> occupancy_block_limits(const KernelProfile& k);  // resource -> blocks

// Global loads or stores: `op` is "ld" or "st".
struct GlobalAccess {
  double instructions = 0;       // warp-level
  double bytes = 0;              // bytes the threads asked for
  double sectors = 0, requests = 0;
  double bytes_per_thread() const;    // per instruction, assuming full warps (16 = 128-bit access)
  double sectors_per_request() const;
  double ideal_sectors_per_request() const;  // what a fully coalesced access of that width needs
  double used_fraction() const;              // bytes asked for / bytes of sectors fetched
};
std::optional<GlobalAccess> global_access(const KernelProfile& k, const std::string& op);

// Shared-memory loads or stores (`op` "ld" or "st") through the LSU pipe (ld/st.shared, ldmatrix).
struct BankConflicts {
  double conflicts = 0, wavefronts = 0;  // wavefronts include the extra ones conflicts cause
  double ways() const;  // wavefronts per conflict-free wavefront: 1 = none, 32 = fully serialized
};
std::optional<BankConflicts> shared_bank_conflicts(const KernelProfile& k, const std::string& op);

std::optional<double> local_memory_instructions(const KernelProfile& k);  // spills: local ld + st

struct Stall {
  std::string reason;   // "long_scoreboard"
  double warps = 0;     // warps stalled for this reason per issue-active cycle
};
// Stall reasons, largest first ("selected" excluded: that is issuing, not stalling).
std::vector<Stall> stalls(const KernelProfile& k);
std::string stall_meaning(const std::string& reason);
}  // namespace kq

}  // namespace cutegen
