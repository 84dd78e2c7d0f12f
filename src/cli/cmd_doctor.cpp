#include <unistd.h>

#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/fs.h"
#include "common/json_text.h"
#include "common/locations.h"
#include "common/process.h"
#include "cli/judge_stack.h"
#include "sandbox/sandbox.h"
#include "common/terminal_text.h"

namespace cutegen::cli {
namespace {

struct Check {
  std::string name;
  bool ok = false;
  bool required = false;  // without it cutegen cannot compile anything
  std::string detail;     // version/path when ok, what is wrong otherwise
  std::string fix;        // what to do when not ok
  std::string status;     // the word shown when not ok (default "missing")
};


std::string python_executable() {
  const char* p = std::getenv("CUTEGEN_PYTHON");
  return p && *p ? p : "python3";
}

std::vector<Check> run_checks(ProcessRunner& runner) {
  using namespace std::chrono_literals;
  std::vector<Check> checks;

  Check nvcc{"nvcc", false, true};
  if (auto r = runner.run({.argv = {"nvcc", "--version"}, .timeout = 30s}); r && r->succeeded()) {
    std::smatch m;
    std::regex re(R"(release ([\d.]+), V([\d.]+))");
    nvcc.ok = true;
    nvcc.detail = std::regex_search(r->out, m, re) ? m[2].str() : first_line(r->out);
    if (auto p = find_executable("nvcc")) nvcc.detail += " (" + p->string() + ")";
  } else {
    nvcc.detail = "not found";
    nvcc.fix = "install the CUDA toolkit (12.x or 13.x) and put its bin/ on PATH";
  }
  checks.push_back(nvcc);

  Check cutlass{"CUTLASS", false, true};
  if (auto dir = cutlass_include_dir(); dir) {
    auto v = cutlass_version(*dir);
    cutlass.ok = v.ok();
    cutlass.detail = v ? fmt::format("{} ({})", *v, dir->string()) : v.error().message;
    if (!v) cutlass.fix = "reinstall with scripts/setup or point CUTLASS_DIR at a CUTLASS checkout";
  } else {
    cutlass.detail = dir.error().message;
    cutlass.fix = "run scripts/setup, or set CUTLASS_DIR to a CUTLASS checkout";
  }
  checks.push_back(cutlass);

  Check contract{"contract", false, true};
  auto header = contract_include_dir() / "cutegen" / "kernel.h";
  contract.ok = std::filesystem::exists(header);
  contract.detail = contract.ok ? header.string() : header.string() + " missing";
  if (!contract.ok) contract.fix = "rebuild cutegen from its source tree (scripts/setup)";
  checks.push_back(contract);

  Check gpu{"GPU"};
  auto smi = runner.run({.argv = {"nvidia-smi", "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"},
                         .timeout = 30s});
  if (smi && smi->succeeded() && !smi->out.empty()) {
    gpu.ok = true;
    gpu.detail = first_line(smi->out);
  } else {
    gpu.detail = smi ? "none (nvidia-smi found no GPU)" : "none (no NVIDIA driver: nvidia-smi not found)";
    gpu.fix = "`compile` works without a GPU; `eval`, `optimize` and `profile` need one";
  }
  checks.push_back(gpu);

  Check py{"python"};
  Check torch{"torch"};
  auto probe = runner.run({.argv = {python_executable(), "-c",
                                    "import sys; print(sys.version.split()[0]); import torch; "
                                    "print(torch.__version__, 'cuda' if torch.cuda.is_available() else 'cpu-only')"},
                           .timeout = 120s});
  if (!probe) {
    py.detail = python_executable() + " not found";
    py.fix = "install Python 3.10+ or set CUTEGEN_PYTHON";
    torch.detail = "not checked";
    torch.fix = py.fix;
  } else {
    auto lines = probe->out;
    py.ok = !lines.empty();
    py.detail = py.ok ? "Python " + first_line(lines) : "could not run " + python_executable();
    if (!py.ok) py.fix = "install Python 3.10+ or set CUTEGEN_PYTHON";
    auto nl = lines.find('\n');
    std::string second = nl == std::string::npos ? "" : first_line(lines.substr(nl + 1));
    torch.ok = probe->succeeded() && !second.empty();
    torch.detail = torch.ok ? second : "not importable";
    if (!torch.ok) torch.fix = "run scripts/setup (pip install -r python/requirements.txt)";
  }
  checks.push_back(py);
  checks.push_back(torch);

  Check ncu{"ncu"};
  if (auto r = runner.run({.argv = {"ncu", "--version"}, .timeout = 30s}); r && r->succeeded()) {
    ncu.ok = true;
    std::string out = r->out;
    auto pos = out.find("Version");
    ncu.detail = pos == std::string::npos ? first_line(out) : first_line(out.substr(pos));
  } else {
    ncu.detail = "not found";
    ncu.fix = "install Nsight Compute (ships with the CUDA toolkit) for `cutegen profile`";
  }
  checks.push_back(ncu);

  // The sandbox nvcc and the runner run in (docs/sandbox.md).
  Check wrapper{"sandbox", false, true};
  if (auto path = sandbox_path()) {
    wrapper.ok = true;
    wrapper.detail = path->string();
  } else {
    wrapper.detail = path.error().message;
    wrapper.fix = "rebuild cutegen (scripts/setup builds cutegen-sandbox next to it)";
  }
  checks.push_back(wrapper);
  auto support = probe_sandbox_support();
  Check seccomp{"seccomp", support.seccomp, true, support.seccomp_detail};
  if (!seccomp.ok) seccomp.fix = "cutegen needs seccomp filters (Linux 3.17+ with CONFIG_SECCOMP_FILTER) to confine nvcc and the runner";
  checks.push_back(seccomp);
  Check landlock{"Landlock", support.landlock_abi > 0, false, support.landlock_detail};
  if (!landlock.ok)
    landlock.fix = "without Landlock, nvcc and the runner can read and write every file you can (Linux 5.13+, "
                   "landlock in the lsm= boot parameter)";
  else if (support.landlock_abi < 4)
    landlock.detail += " (below 4: TCP is left to seccomp alone; below 6: signals to other processes too)";
  checks.push_back(landlock);
  Check nnp{"no_new_privs", support.no_new_privs, true, support.no_new_privs ? "available" : "PR_GET_NO_NEW_PRIVS failed"};
  if (!nnp.ok) nnp.fix = "a Linux 3.5+ kernel is needed";
  checks.push_back(nnp);
  Check mps{"MPS", true};
  std::string pipe_dir = "/tmp/nvidia-mps";
  if (const char* d = std::getenv("CUDA_MPS_PIPE_DIRECTORY"); d && *d) pipe_dir = d;
  std::error_code mps_ec;
  if (std::filesystem::exists(pipe_dir, mps_ec)) {
    mps.ok = false;
    mps.status = "warning";
    mps.detail = fmt::format("MPS looks active ({} exists)", pipe_dir);
    mps.fix = "the judge's probes assume time-sliced GPU contexts: stop MPS (echo quit | nvidia-cuda-mps-control) "
              "before eval or optimize";
  } else {
    mps.detail = "not active";
  }
  checks.push_back(mps);

  // The judge refuses times taken while its processes waited for a CPU; it learns of the waits from
  // the kernel's per-thread run delay (docs/judge.md, "A busy CPU").
  Check cpu_wait{"run delay"};
  std::error_code sched_ec;
  cpu_wait.ok = std::filesystem::exists("/proc/self/schedstat", sched_ec);
  if (cpu_wait.ok) {
    cpu_wait.detail = "/proc/<pid>/schedstat: times taken on a busy CPU are refused";
  } else {
    cpu_wait.status = "warning";
    cpu_wait.detail = "this kernel does not count run delays (no /proc/self/schedstat)";
    cpu_wait.fix = "the judge cannot tell a busy CPU from a slow kernel here: keep other work off the machine while "
                   "it times (a kernel with CONFIG_SCHED_INFO counts them)";
  }
  checks.push_back(cpu_wait);

  Check cache{"cache"};
  auto root = cache_root();
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  cache.ok = !ec && ::access(root.c_str(), W_OK) == 0;
  cache.detail = root.string() + (cache.ok ? "" : " (not writable)");
  if (!cache.ok) cache.fix = "set CUTEGEN_CACHE_DIR to a writable directory";
  checks.push_back(cache);
  return checks;
}

int run_doctor() {
  PosixProcessRunner runner;
  auto checks = run_checks(runner);
  bool required_missing = false;
  for (const auto& c : checks) {
    std::string status = c.ok ? "OK" : !c.status.empty() ? c.status : (c.name == "GPU" ? "none" : "missing");
    print_safe(stdout, "{:<12} {:<8} {}\n", c.name, status, c.detail);
    if (!c.ok && !c.fix.empty()) print_safe(stdout, "{:<12} {:<8} fix: {}\n", "", "", c.fix);
    if (!c.ok && c.required) required_missing = true;
  }
  if (required_missing) return fail("a required component is missing (see the fix lines above)");
  return 0;
}

}  // namespace

void add_doctor_command(CLI::App& app, const GlobalOptions&, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "doctor", "Check the toolchain, CUTLASS, GPU, Python/torch, ncu and the sandbox; say how to fix gaps");
  cmd->callback([&exit_code] { exit_code = run_doctor(); });
}

}  // namespace cutegen::cli
