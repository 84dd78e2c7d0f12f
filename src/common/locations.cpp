#include "common/locations.h"

#include <cstdlib>
#include <regex>

#include <fmt/format.h>

#include "common/fs.h"

// Both are baked in by CMake (see src/CMakeLists.txt) so a built tree works without any environment.
#ifndef CUTEGEN_DEFAULT_CUTLASS_INCLUDE
#define CUTEGEN_DEFAULT_CUTLASS_INCLUDE ""
#endif
#ifndef CUTEGEN_CONTRACT_INCLUDE
#define CUTEGEN_CONTRACT_INCLUDE ""
#endif

namespace cutegen {
namespace fs = std::filesystem;

Result<fs::path> cutlass_include_dir() {
  if (const char* env = std::getenv("CUTLASS_DIR"); env && *env) {
    fs::path dir = fs::path(env) / "include";
    if (!fs::exists(dir / "cute" / "tensor.hpp"))
      return Error{fmt::format("CUTLASS_DIR={} has no include/cute/tensor.hpp; point it at a CUTLASS checkout "
                               "or unset it to use the headers scripts/setup installed", env)};
    return dir;
  }
  fs::path dir = CUTEGEN_DEFAULT_CUTLASS_INCLUDE;
  if (dir.empty() || !fs::exists(dir / "cute" / "tensor.hpp"))
    return Error{"CUTLASS headers not found; run scripts/setup or set CUTLASS_DIR to a CUTLASS checkout"};
  return dir;
}

Result<std::string> cutlass_version(const fs::path& include_dir) {
  auto text = read_file(include_dir / "cutlass" / "version.h");
  if (!text) return text.error();
  auto field = [&](const char* name) -> std::string {
    std::smatch m;
    std::regex re(std::string("#define ") + name + "\\s+(\\d+)");
    return std::regex_search(*text, m, re) ? m[1].str() : std::string();
  };
  auto major = field("CUTLASS_MAJOR"), minor = field("CUTLASS_MINOR"), patch = field("CUTLASS_PATCH");
  if (major.empty() || minor.empty() || patch.empty())
    return Error{fmt::format("{} has no CUTLASS_MAJOR/MINOR/PATCH", (include_dir / "cutlass/version.h").string())};
  return major + "." + minor + "." + patch;
}

fs::path contract_include_dir() { return fs::path(CUTEGEN_CONTRACT_INCLUDE); }

fs::path cache_root() {
  if (const char* env = std::getenv("CUTEGEN_CACHE_DIR"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "cutegen";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "cutegen";
  return fs::temp_directory_path() / "cutegen-cache";
}

}  // namespace cutegen
