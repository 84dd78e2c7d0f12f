#include "compile/built_cute.h"

#include <unistd.h>

#include <cstdlib>
#include <functional>

#include <fmt/format.h>

#include "compile/demangle.h"

#ifndef CUTEGEN_BUNDLED_NVDISASM
#define CUTEGEN_BUNDLED_NVDISASM ""
#endif

namespace cutegen {
namespace fs = std::filesystem;
namespace {

struct KernelEvidence {
  bool any_cute = false;
  int stores = 0;
  int cute_stores = 0;
  std::set<int> raw_store_lines;  // the outermost line of each store that is not CuTe's
};

// The kernel's own code and that of every function it calls (a __noinline__ device function keeps
// its own section).
struct Evidence {
  const std::set<SourcePosition>& sites;
  std::vector<std::string> tensor_code;  // <CUTLASS include>/cute/algorithm/ and /atom/, with a '/'
};

// CuTe's: a position of the chain is a CuTe site, or the instruction is CuTe's tensor algorithms' or
// atoms' own (copy, gemm, fill ... and the Copy_Atom/MMA_Atom calls they make over tensors), where a
// store of cute::copy(frag, gY(_, i)) lands whatever line the call is on. Not CuTe's arch/ wrappers
// (UniversalCopy::copy(v, y[i]) stores through a plain reference) nor its headers as such.
bool is_cute(const SassInstruction& ins, const Evidence& ev) {
  for (const auto& p : ins.chain) {
    std::string file = fs::path(p.file).lexically_normal().string();
    if (ev.sites.count({file, p.line})) return true;
    for (const auto& dir : ev.tensor_code)
      if (file.rfind(dir, 0) == 0) return true;
  }
  return false;
}

void collect(const std::map<std::string, SassFunction>& sass, const std::string& name, const Evidence& ev,
             std::set<std::string>& seen, KernelEvidence& e) {
  auto it = sass.find(name);
  if (it == sass.end() || !seen.insert(name).second) return;
  for (const auto& ins : it->second.instructions) {
    const bool cute = is_cute(ins, ev);
    e.any_cute |= cute;
    if (!is_global_store(ins.opcode)) continue;
    ++e.stores;
    if (cute) ++e.cute_stores;
    else if (!ins.chain.empty()) e.raw_store_lines.insert(ins.chain.back().line);
  }
  for (const auto& c : it->second.callees) collect(sass, c, ev, seen, e);
}

std::string lines_text(const std::set<int>& lines) {
  std::string s;
  int shown = 0;
  for (int l : lines) {
    if (shown == 5) return s + fmt::format(" and {} more", lines.size() - 5);
    s += fmt::format("{}{}", shown++ ? ", " : "", l);
  }
  return s;
}

}  // namespace

std::vector<CheckViolation> built_cute_violations(const std::map<std::string, SassFunction>& sass,
                                                  const std::vector<std::string>& kernels,
                                                  const std::set<SourcePosition>& cute_sites,
                                                  const fs::path& cute_dir) {
  std::vector<CheckViolation> out;
  Evidence ev{cute_sites, {}};
  for (const char* sub : {"algorithm", "atom"})
    ev.tensor_code.push_back((cute_dir / sub).lexically_normal().string() + "/");
  for (const auto& k : kernels) {
    if (!sass.count(k)) {
      out.push_back({"cute-unverifiable", fmt::format("kernel {} is in the library but nvdisasm printed no code for "
                                                      "it, so its CuTe use in the build cannot be checked",
                                                      demangle(k))});
      continue;
    }
    KernelEvidence e;
    std::set<std::string> seen;
    collect(sass, k, ev, seen, e);
    if (!e.any_cute) {
      out.push_back({"cute-not-built",
                     fmt::format("kernel {} uses CuTe only in code the optimised build removes: none of its machine "
                                 "code comes from a line that uses CuTe or from CuTe's tensor algorithms. CuTe behind a condition the optimiser "
                                 "folds (a flag that is always false, code after a return) does not count; "
                                 "the code that does the work must access memory through CuTe tensors",
                                 demangle(k))});
    } else if (e.stores > 0 && e.cute_stores == 0) {  // a kernel that stores nothing writes no output
      out.push_back({"raw-stores",
                     fmt::format("kernel {} writes global memory only through raw code: none of its {} stores in "
                                 "the optimised build comes from a line that uses CuTe or from a CuTe copy{}. Write outputs through "
                                 "CuTe tensors (gY(i) = v, copy(tRrY, tRgY), a TMA store); CuTe used only for "
                                 "reads, or in a branch that never runs, does not count",
                                 demangle(k), e.stores,
                                 e.raw_store_lines.empty() ? "" : fmt::format(" (stores at line {})", lines_text(e.raw_store_lines)))});
    }
  }
  return out;
}

Result<std::map<std::string, SassFunction>> disassemble(ProcessRunner& runner, const std::vector<std::string>& command,
                                                       const fs::path& dir, std::chrono::milliseconds timeout) {
  auto proc = runner.run({.argv = command, .timeout = timeout, .cwd = dir, .private_dir = dir});
  if (!proc) return Error{fmt::format("{}; install nvdisasm (CUDA toolkit) or run scripts/setup", proc.error().message)};
  if (!proc->succeeded())
    return Error{fmt::format("nvdisasm failed on the built library's device code ({}): {}", proc->describe_end(),
                             proc->err.substr(0, proc->err.find('\n')))};
  return parse_sass_line_info(proc->out);
}

Result<fs::path> find_nvdisasm(const std::string& nvcc) {
  if (const char* env = std::getenv("CUTEGEN_NVDISASM"); env && *env) {
    if (auto exe = find_executable(env)) return *exe;
    return Error{fmt::format("CUTEGEN_NVDISASM={} is not an executable", env)};
  }
  if (auto n = find_executable(nvcc)) {
    std::error_code ec;
    fs::path beside = fs::canonical(*n, ec).parent_path() / "nvdisasm";
    if (!ec && access(beside.c_str(), X_OK) == 0) return beside;
  }
  if (auto exe = find_executable("nvdisasm")) return *exe;
  fs::path bundled = CUTEGEN_BUNDLED_NVDISASM;
  if (!bundled.empty() && access(bundled.c_str(), X_OK) == 0) return bundled;
  return Error{"nvdisasm not found: the CuTe check reads the built kernels' machine code with it; install the CUDA "
               "toolkit's nvdisasm (cuda-nvdisasm), run scripts/setup (it unpacks one into third_party/cuobjdump) "
               "or set CUTEGEN_NVDISASM"};
}

}  // namespace cutegen
