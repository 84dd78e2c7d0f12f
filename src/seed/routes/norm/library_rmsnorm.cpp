#include "seed/routes/norm/library_rmsnorm.h"

#include <optional>

#include <fmt/format.h>

#include "seed/library_text.h"

namespace cutegen::seed {
namespace {

// library/rmsnorm_channels.cu, read at build time (src/CMakeLists.txt): one source of truth.
constexpr const char* kChannelRmsNormLibrary =
#include "seed/rmsnorm_channels.inc"
    ;

constexpr const char* kEpsLine = "constexpr float kEps = 1e-5f;";

// The fp32 literal of eps when `post` is exactly sqrtf(s + eps), as the pointwise table writes it
// (add(mean, eps) then sqrt: "(s + 1e-05f)", "sqrtf(q3)"); nullopt for anything else.
std::optional<std::string> eps_of(const NormPlan& p) {
  if (p.post.size() != 2 || p.post_result != p.post[1].value) return std::nullopt;
  const std::string& add = p.post[0].expr;
  const std::string prefix = "(s + ";
  if (add.rfind(prefix, 0) != 0 || add.size() < prefix.size() + 3 || add.back() != ')') return std::nullopt;
  std::string eps = add.substr(prefix.size(), add.size() - prefix.size() - 1);
  if (eps.back() != 'f' || eps.find_first_not_of("0123456789.e+-f") != std::string::npos) return std::nullopt;
  if (p.post[1].expr != fmt::format("sqrtf({})", p.post[0].value)) return std::nullopt;
  return eps;
}

}  // namespace

std::string library_rmsnorm_refusal(const NormPlan& p) {
  const bool squares = p.pre.size() == 1 && p.pre[0].expr == "(x0 * x0)" && p.pre_result == p.pre[0].value;
  if (p.kind != NormKind::scaled || !p.mean || p.combine != NormCombine::divide || !squares || !eps_of(p))
    return "not x / sqrt(mean(x * x) + eps): the library's channel RMSNorm computes only that";
  if (p.mode != NormMode::columns || p.dim != 1)
    return "not over dimension 1 with positions after it: the library's channel RMSNorm reduces (N, C, *) over C";
  if (p.extent > kLibraryRmsNormMaxChannels)
    return fmt::format("{} channels, more than the {} the library's channel RMSNorm keeps in registers", p.extent,
                       kLibraryRmsNormMaxChannels);
  if (p.num_contract_inputs != 1 || p.input != 0)
    return "the norm's operand is not the contract's only input (the library kernel reads inputs[0] alone)";
  return "";
}

Result<std::string> generate_library_rmsnorm_kernel(const NormPlan& plan, const CommentText& problem) {
  return generate_library_rmsnorm_kernel(plan, problem, kChannelRmsNormLibrary);
}

Result<std::string> generate_library_rmsnorm_kernel(const NormPlan& p, const CommentText& problem,
                                                    std::string library) {
  if (auto why = library_rmsnorm_refusal(p); !why.empty()) return Error{"no library RMSNorm seed: " + why};
  if (auto s = replace_library_line(library, kEpsLine,
                                    fmt::format("constexpr float kEps = {};  // set by the seed from the graph", *eps_of(p)),
                                    "library/rmsnorm_channels.cu", "src/seed/routes/norm/library_rmsnorm.cpp");
      !s)
    return s.error();
  const std::string header = fmt::format(
      "// Seed kernel for {0}, written by cutegen without an LLM (docs/seed.md): an RMS normalisation over\n"
      "// dimension 1 of one contiguous fp32 tensor, viewed as ({1}, {2}, {3}) when traced:\n"
      "//   y = {4}\n"
      "//\n"
      "// The kernel is the library's channel RMSNorm, library/rmsnorm_channels.cu, as it is below but for\n"
      "// kEps, which the seed sets from the graph. Chosen over the seed's generic norm kernel\n"
      "// (src/seed/routes/norm/norm_kernel.cu.in) because its {2} channels fit a thread's registers: each\n"
      "// thread keeps its column on chip and x is read once. On an H200, KernelBench 36 ran 3.93 ms so against 6.44\n"
      "// (benchmarks/results.md).\n"
      "//\n",
      problem.str(), p.outer, p.extent, p.inner, p.pattern);
  return header + library;
}

}  // namespace cutegen::seed
