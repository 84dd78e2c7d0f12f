#include "compile/device_code_match.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/fs.h"

namespace cutegen {
namespace fs = std::filesystem;

namespace {
constexpr std::string_view kDeviceUnitSuffix = ".cpp1.ii";

std::vector<std::string> device_units(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.size() > kDeviceUnitSuffix.size() && name.ends_with(kDeviceUnitSuffix)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}
}  // namespace

Result<std::optional<CheckViolation>> compare_device_code(const fs::path& build_keep_dir,
                                                          const fs::path& analysis_keep_dir) {
  auto names = device_units(analysis_keep_dir);
  if (names.empty())
    return Error{fmt::format("nvcc kept no device translation unit (*{}) in {}, so cutegen cannot prove that the "
                             "CuTe check read the code it built; is this a CUDA toolkit cutegen supports?",
                             kDeviceUnitSuffix, analysis_keep_dir.string())};
  for (const auto& name : names) {
    auto analysed = read_file(analysis_keep_dir / name);
    if (!analysed) return analysed.error();
    if (!fs::exists(build_keep_dir / name))
      return Error{fmt::format("the build kept no {} beside the analysis compile's: cutegen cannot prove that the "
                               "CuTe check read the code it built", name)};
    auto built = read_file(build_keep_dir / name);
    if (!built) return built.error();
    if (*built != *analysed)
      return std::optional<CheckViolation>(CheckViolation{
          "analysis-mismatch",
          "the device code the build compiled differs from the one the CuTe check compiled, from the same file "
          "and macros: the code depends on how it is compiled (a predefined macro such as __PIE__, a compiler "
          "version test), so its CuTe use cannot be checked; write it so it compiles the same way every time"});
  }
  return std::optional<CheckViolation>();
}

}  // namespace cutegen
