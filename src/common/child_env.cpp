#include "common/child_env.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <unistd.h>  // environ

#include "common/process.h"

namespace cutegen {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool looks_secret(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const char* marker : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION"})
    if (upper.find(marker) != std::string::npos) return true;
  return false;
}

}  // namespace

bool env_name_allowed(std::string_view name) {
  if (name.empty() || looks_secret(name)) return false;
  // What nvcc (PATH, the host compiler, CUDA_*), Python + torch (locale, threads, torch.compile's
  // inductor/triton settings and its C compiler) and ncu need; nothing that points into the user's
  // accounts (SSH_AUTH_SOCK, DBUS_*, DISPLAY, XDG_*) and no NVCC_* flags (they would change compiled
  // code behind the compile cache's key). PYTORCH_CUDA_ALLOC_CONF: torch's allocator as the user tuned it
  // (expandable segments where large blocks fragment), for the worker's reference and baselines.
  static const char* const exact[] = {"PATH", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME",
                                      "LD_LIBRARY_PATH", "CC", "CXX", "PYTHONHOME", "PYTHONUSERBASE",
                                      "OMP_NUM_THREADS", "CUBLAS_WORKSPACE_CONFIG", "PYTORCH_CUDA_ALLOC_CONF"};
  for (const char* e : exact)
    if (name == e) return true;
  for (const char* p : {"LC_", "CUDA_", "NVIDIA_", "CUTEGEN_", "TORCH_", "TORCHINDUCTOR_", "TRITON_"})
    if (starts_with(name, p)) return true;
  return false;
}

std::vector<std::string> child_environment(const ProcessSpec& spec) {
  std::map<std::string, std::string> env;
  const bool inherit = spec.environment == ProcessSpec::Environment::inherit;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = kv.substr(0, eq);
    if (inherit || env_name_allowed(name)) env[std::string(name)] = std::string(kv.substr(eq + 1));
  }
  if (!inherit && spec.private_dir) {
    // Python finds `pip install --user` packages through HOME; keep them visible when HOME moves.
    const char* home = std::getenv("HOME");
    if (home && *home && !env.count("PYTHONUSERBASE")) {
      std::error_code ec;
      auto user_base = std::filesystem::path(home) / ".local";
      if (std::filesystem::is_directory(user_base, ec)) env["PYTHONUSERBASE"] = user_base.string();
    }
    env["HOME"] = spec.private_dir->string();
    env["TMPDIR"] = spec.private_dir->string();
  }
  for (const auto& [k, v] : spec.env) env[k] = v;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace cutegen
