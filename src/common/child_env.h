#pragma once
// The environment cutegen's children see. By default only an allow-list of cutegen's own
// environment: nvcc, the worker, the runner and ncu must never see an API key (a candidate's host
// code runs in the runner, a candidate's #include runs in nvcc). docs/sandbox.md lists the names.
#include <string>
#include <string_view>
#include <vector>

namespace cutegen {

struct ProcessSpec;

// True when `name` may pass from cutegen's environment to a child in allow-list mode: PATH, LANG,
// LC_*, TZ, TERM, USER, LOGNAME, LD_LIBRARY_PATH, CC, CXX, PYTHONHOME, PYTHONUSERBASE, OMP_NUM_THREADS,
// CUBLAS_WORKSPACE_CONFIG and the prefixes CUDA_, NVIDIA_, CUTEGEN_, TORCH_, TORCHINDUCTOR_, TRITON_ —
// except any name that looks like a secret (KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, AUTH,
// COOKIE, SESSION anywhere in it).
bool env_name_allowed(std::string_view name);

// "NAME=value" strings for the child: cutegen's environment filtered by spec.environment, HOME and
// TMPDIR pointed at spec.private_dir (allow-list mode), then spec.env on top.
std::vector<std::string> child_environment(const ProcessSpec& spec);

}  // namespace cutegen
