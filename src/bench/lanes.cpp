#include "bench/lanes.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace cutegen::bench {
namespace fs = std::filesystem;
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// A lock file name from a device key (UUIDs and indices are safe; anything else is made so).
std::string file_name(std::string key) {
  for (char& c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  return key + ".lock";
}

}  // namespace

std::vector<GpuListing> parse_nvidia_smi_list(const std::string& text) {
  static const std::regex line(R"(^GPU (\d+): (.*?)(?: \(UUID: ([^)]+)\))?\s*$)");
  std::vector<GpuListing> out;
  std::stringstream ss(text);
  std::string l;
  while (std::getline(ss, l)) {
    std::smatch m;
    if (std::regex_match(l, m, line)) out.push_back({std::stoi(m[1]), m[2], m[3]});
  }
  return out;
}

fs::path device_lock_dir() {
  if (const char* d = std::getenv("CUTEGEN_LOCK_DIR"); d && *d) return d;
  return "/tmp/cutegen-device-locks";
}

Status ensure_device_lock_dir(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return ok_status();
  fs::create_directories(dir, ec);
  if (ec) return Error{fmt::format("cannot create the device lock directory {}: {} (set CUTEGEN_LOCK_DIR)", dir.string(),
                                   ec.message())};
  ::chmod(dir.c_str(), 01777);
  return ok_status();
}

Result<std::vector<Lane>> resolve_lanes(const std::string& device, const std::string& gpus, const char* visible_env,
                                        const std::string& smi) {
  const fs::path dir = device_lock_dir();
  if (device == "cpu") {
    if (gpus != "all") return Error{"--gpus does not apply to --device cpu (it has one lane, the CPU)"};
    return std::vector<Lane>{{"cpu", "", "cpu", "cpu", dir / "cpu.lock"}};
  }
  if (device != "cuda") return Error{fmt::format("--device {} is not cuda or cpu", device)};
  auto listed = parse_nvidia_smi_list(smi);
  // The devices this process may use, in CUDA's order: CUDA_VISIBLE_DEVICES's entries, else nvidia-smi's.
  std::vector<std::string> visible;
  bool from_env = visible_env != nullptr;
  if (from_env) {
    visible = split(visible_env, ',');
  } else {
    for (const auto& g : listed) visible.push_back(std::to_string(g.index));
  }
  if (visible.empty())
    return Error{from_env ? std::string("CUDA_VISIBLE_DEVICES is empty: this process may use no GPU")
                          : std::string("no GPU visible (nvidia-smi -L lists none); --baselines-only --device cpu "
                                        "runs a CPU-only smoke suite")};
  std::vector<size_t> chosen;
  if (gpus == "all") {
    for (size_t i = 0; i < visible.size(); ++i) chosen.push_back(i);
  } else {
    std::set<size_t> seen;
    for (const auto& item : split(gpus, ',')) {
      if (!std::all_of(item.begin(), item.end(), ::isdigit) || item.size() > 6)
        return Error{fmt::format("--gpus {} is not 'all' or a list of GPU indices like 0,2", gpus)};
      size_t i = std::stoul(item);
      if (i >= visible.size())
        return Error{fmt::format("--gpus {}: GPU {} does not exist here ({} visible{})", gpus, i, visible.size(),
                                 from_env ? ", counted in CUDA_VISIBLE_DEVICES" : "")};
      if (seen.insert(i).second) chosen.push_back(i);
    }
    if (chosen.empty()) return Error{fmt::format("--gpus {} names no GPU", gpus)};
  }
  std::vector<Lane> lanes;
  for (size_t i : chosen) {
    const std::string& entry = visible[i];
    // The lock is named after the physical GPU, so processes that see it under different indices
    // (two Slurm jobs on one node) still share it.
    std::string key = entry;
    for (const auto& g : listed)
      if (!g.uuid.empty() && (std::to_string(g.index) == entry || g.uuid == entry || g.uuid.rfind(entry, 0) == 0)) key = g.uuid;
    lanes.push_back({fmt::format("gpu{}", i), entry, fmt::format("cuda:{}", i), key, dir / file_name(key)});
  }
  return lanes;
}

std::string list_gpus(ProcessRunner& runner) {
  ProcessSpec spec;
  spec.argv = {"nvidia-smi", "-L"};
  spec.timeout = std::chrono::seconds(30);
  auto r = runner.run(spec);
  if (!r || !r->succeeded()) return "";
  return r->out;
}

std::optional<std::string> cpu_oversubscription_warning(int jobs, int lanes, long cpus) {
  // A compile is nvcc and the analysis compile beside it; from 4 CPUs nvcc's front end also runs beside
  // its device compile (compile/nvcc_plan.h), three processes.
  const long per_compile = cpus >= 4 ? 3 : 2;
  const long busy = 2L * lanes + per_compile * std::max(0, jobs - lanes);
  if (busy <= cpus) return std::nullopt;
  const long fits = std::max<long>(lanes, lanes + (cpus - 2L * lanes) / per_compile);
  return fmt::format("-j {} on {} CPUs: compiles beside the timing can make the judge refuse busy measurements (it "
                     "retries, then fails the task); -j {} or fewer leaves each of the {} lane(s) its CPUs",
                     jobs, cpus, fits, lanes);
}

}  // namespace cutegen::bench
