#include "seed/routes/gemm/gemm_kernel.h"
#include "seed/routes/gemm/norm_pass.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "seed/routes/gemm/gemm_kernel_choice.h"
#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kGemmTemplate =
#include "seed/gemm_kernel.inc"
    ;
constexpr const char* kSkinnyKernel =
#include "seed/skinny_gemm_kernel.inc"
    ;

// The template's text on the tiled CUDA-core GEMM, and what replaces it when the product is on the skinny
// 3xTF32 kernel (the epilogue, row reduction and entry points are the same text for both).
constexpr const char* kTiledKind = "a matrix product in\n// strict fp32 (no TF32), correct for any M, N, K";
constexpr const char* kSkinnyKind = "a matrix product at\n// fp32 accuracy on Hopper's tensor cores (3xTF32), x @ W.T with the weight streamed";
constexpr const char* kTiledTiling =
    "\n"
    "// a transposed operand is the same CuTe tensor with its strides swapped, and the tile loads walk the\n"
    "// operand's contiguous dimension so a warp's loads stay coalesced either way. The classic shared-memory\n"
    "// tiling: a BM x BN output tile per CTA, K in steps of BK staged through shared memory with predicated\n"
    "// loads (zeros outside the matrix), a 16 x 16 thread grid with (BM/16) x (BN/16) outputs per thread\n"
    "// (rows ty + 16 i, columns tx + 16 j, so neither the shared reads nor the stores conflict). Products\n"
    "// accumulate in fp32 within a k-step and are added into a double accumulator after it, so a long K\n"
    "// (half a million in KernelBench) stays within the judge's bound of PyTorch's own error.";
constexpr const char* kSkinnyTiling =
    "\n// the weight is split into TF32 big and small parts in shared memory as it streams, A once beforehand,\n"
    "// and each weight element is read once per 128 rows of A (skinny::skinny_gemm_kernel below says how).";
constexpr const char* kTiledNextSteps =
    "// This is the seed, not the fast kernel: tensor cores (3xTF32), cp.async/TMA pipelines and swizzled\n"
    "// shared memory are the optimisation steps that come after (library/gemm_*.cu).";
constexpr const char* kSkinnyNextSteps =
    "// Open steps: the weight split in registers (wgmma's register-sourced A), TMA multicast of the weight\n"
    "// over a cluster of row tiles, a persistent schedule, split K for fewer than 132 tiles.";
constexpr const char* kTiledInclude =
    "#include <cute/tensor_impl.hpp>  // layouts and tensors: this kernel uses no copy or MMA atom (half the compile)";
constexpr const char* kSkinnyInclude =
    "#include <cute/tensor.hpp>  // wgmma and TMA atoms (the skinny kernel)\n"
    "#include <cutlass/arch/barrier.h>\n"
    "#include <cutlass/arch/reg_reconfig.h>";
// Before any header: an assert left in device code is a call, and ptxas then serialises every wgmma.
constexpr const char* kSkinnyPrelude = "#ifndef NDEBUG\n#define NDEBUG\n#endif\n";
constexpr const char* kTiledKnobs =
    "// cutegen:knob GEMM_BM in {32, 64, 128}\n"
    "#ifndef GEMM_BM\n"
    "#define GEMM_BM 64\n"
    "#endif\n"
    "// cutegen:knob GEMM_BN in {32, 64, 128}\n"
    "#ifndef GEMM_BN\n"
    "#define GEMM_BN 64\n"
    "#endif\n"
    "// cutegen:knob GEMM_BK in {8, 16, 32}\n"
    "#ifndef GEMM_BK\n"
    "#define GEMM_BK 16\n"
    "#endif\n"
    "// Registers: (BM/16) x (BN/16) outputs per thread, each a float and a double.\n"
    "// cutegen:require GEMM_BM * GEMM_BN <= 8192\n";
constexpr const char* kSkinnyKnobs =
    "// The tiled GEMM's tile (unused: the product is on the skinny kernel, whose knobs are SK_TILE_K, SK_STAGES and SK_GROUP_M).\n"
    "#define GEMM_BM 64\n#define GEMM_BN 64\n#define GEMM_BK 16\n";

// The column operands `post_side` reads, each loaded once.
std::string column_loads(const GemmPlan& plan, bool post_side) {
  std::string body;
  for (std::size_t i = 0; i < plan.columns.size(); ++i) {
    const auto& c = plan.columns[i];
    if (c.post != post_side) continue;
    body += fmt::format("  const float c{0} = cols.p[{0}][{1}];  // {2}{3}\n", i, c.stride ? "n" : "0", c.name,
                        c.stride ? "[n]" : ", one number");
  }
  return body;
}


std::string epilogue_text(const GemmPlan& plan) {
  if (!plan.has_epilogue()) return "";
  if (plan.norm != GemmNorm::none)
    return fmt::format(
        "\n// The epilogue -- the pointwise ops forward() applies to the product, with per-column operands such as\n"
        "// a bias read at the element's column -- runs in registers on each element before it is stored; then\n"
        "// {} rewrites the stored values in place ({}), statistics in double, and applies the ops after it.",
        plan.norm == GemmNorm::group ? "a GroupNorm" : "a training-mode BatchNorm",
        plan.norm == GemmNorm::group ? "a warp per (row, group)" : "a thread per column walking its rows");
  if (plan.reduce != RowReduce::none)
    return fmt::format(
        "\n// The epilogue -- the pointwise ops forward() applies to the product, with per-column operands such as\n"
        "// a bias read at the element's column -- runs in registers on each element, and the {} over each row\n"
        "// follows in two steps: every CTA writes its part of each of its rows to the workspace (contract v2),\n"
        "// then a warp per row combines them and applies the ops after the reduction. The (M, N) product is\n"
        "// never stored.",
        row_reduce_name(plan.reduce));
  return "\n// The epilogue -- the pointwise ops forward() applies to the product, with per-column operands such as\n"
         "// a bias read at the element's column -- runs in registers on each element before it is stored, in\n"
         "// fp32, so the product never makes a round trip through memory.";
}

// Split K (kernel split_k): the header's account and the GEMM_SPLIT_K knob with the plan's default; any other
// plan gets GEMM_SPLIT_K 1 as a plain #define, no knob, so the tuner never splits a product the choice refused.
std::string split_k_text(const GemmPlan& plan) {
  if (plan.kernel != GemmKernel::split_k) return "";
  return fmt::format(
      "\n// Split K, for {}:\n"
      "// K is cut into GEMM_SPLIT_K slices of whole k-steps, a slice per grid z, so the few output tiles\n"
      "// still give every SM work; each CTA writes its tile's partial product, in double, to\n"
      "// its plane of the harness's workspace (contract v2), and split_sum_kernel adds each element's slices\n"
      "// in order (the same bits on every run: no atomics) and stores the sum.",
      plan.kernel_reason);
}

std::string split_k_knob(const GemmPlan& plan) {
  if (plan.kernel != GemmKernel::split_k) return "// K is not split (gemm_kernel_choice.cpp).\n#define GEMM_SPLIT_K 1";
  std::vector<std::string> values;
  for (int64_t v = 2; v <= kSplitKMax; v *= 2) values.push_back(std::to_string(v));
  return fmt::format("// cutegen:knob GEMM_SPLIT_K in {{{}}}\n#ifndef GEMM_SPLIT_K\n#define GEMM_SPLIT_K {}\n#endif",
                     fmt::join(values, ", "), plan.split_k);
}

}  // namespace

std::string gemm_epilogue_body(const GemmPlan& plan, bool post_side) {
  std::string body = column_loads(plan, post_side);
  for (const auto& s : post_side ? plan.post : plan.epilogue)
    body += fmt::format("  const float {} = {};  // {}\n", s.value, s.expr, s.what);
  return body + fmt::format("  return {};", post_side ? plan.post_result : plan.result);
}

std::string gemm_reduce_enum(RowReduce op) {
  switch (op) {
    case RowReduce::sum: return "kSum";
    case RowReduce::mean: return "kMean";
    case RowReduce::max: return "kMax";
    case RowReduce::min: return "kMin";
    case RowReduce::logsumexp: return "kLogSumExp";
    case RowReduce::none: break;
  }
  return "kNone";
}

std::string gemm_norm_enum(GemmNorm norm) {
  return norm == GemmNorm::group ? "kGroupNorm" : norm == GemmNorm::batch ? "kBatchNorm" : "kNoNorm";
}

void fill_gemm_shape(std::string& text, const GemmPlan& plan) {
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "A_INPUT", std::to_string(plan.a_input));
  replace_placeholder(text, "B_INPUT", std::to_string(plan.b_input));
  replace_placeholder(text, "M", std::to_string(plan.m));
  replace_placeholder(text, "N", std::to_string(plan.n));
  replace_placeholder(text, "K", std::to_string(plan.k));
}

void fill_column_operands(std::string& text, const GemmPlan& plan) {
  std::vector<std::string> inputs, strides;
  for (const auto& c : plan.columns) {
    inputs.push_back(std::to_string(c.input));
    strides.push_back(std::to_string(c.stride));
  }
  inputs.push_back("-1");  // the unused entry
  strides.push_back("0");
  replace_placeholder(text, "NUM_COLUMNS", std::to_string(plan.columns.size()));
  replace_placeholder(text, "COLUMN_INPUTS", fmt::format("{}", fmt::join(inputs, ", ")));
  replace_placeholder(text, "COLUMN_STRIDES", fmt::format("{}", fmt::join(strides, ", ")));
}

bool tiled_gemm_uses_workspace(const GemmPlan& plan) {
  // The template: SEED_WORKSPACE is (SEED_ROW_REDUCE || GEMM_SPLIT_K > 1), and GEMM_SPLIT_K is 1 unless split_k.
  return plan.reduce != RowReduce::none || plan.kernel == GemmKernel::split_k || plan.kernel == GemmKernel::skinny;
}

int64_t tiled_gemm_workspace_bound(const GemmPlan& plan) {
  if (plan.kernel == GemmKernel::skinny) return skinny_workspace_bytes(plan);
  if (plan.reduce == RowReduce::none) return 0;
  constexpr int64_t kSmallestBn = 32;    // GEMM_BN's smallest value: the most column tiles
  return kRowPartialBytes * plan.m * ((plan.n + kSmallestBn - 1) / kSmallestBn);
}

std::string generate_gemm_kernel(const GemmPlan& plan, const CommentText& problem) {
  std::string text = kGemmTemplate;
  std::string mask_text;
  if (plan.mask != GemmMask::none)
    mask_text = fmt::format(
        "\n// Then {}(., diagonal={}): elements outside it are written as zeros, and a tile wholly outside it\n"
        "// skips the product.",
        gemm_mask_name(plan.mask), plan.diagonal);
  const bool skinny = plan.kernel == GemmKernel::skinny;
  replace_placeholder(text, "SKINNY_PRELUDE", skinny ? kSkinnyPrelude : "");
  replace_placeholder(text, "KIND_TEXT", skinny ? kSkinnyKind : kTiledKind);
  replace_placeholder(text, "TILING_TEXT", skinny ? kSkinnyTiling : kTiledTiling);
  replace_placeholder(text, "NEXT_STEPS_TEXT", skinny ? kSkinnyNextSteps : kTiledNextSteps);
  replace_placeholder(text, "CUTE_INCLUDE", skinny ? kSkinnyInclude : kTiledInclude);
  replace_placeholder(text, "TILE_KNOBS", skinny ? kSkinnyKnobs : kTiledKnobs);
  replace_placeholder(text, "SKINNY", skinny ? "1" : "0");
  replace_placeholder(text, "SKINNY_KERNEL", skinny ? kSkinnyKernel : "");
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "MASK_TEXT", mask_text);
  replace_placeholder(text, "A_LAYOUT", plan.a_transposed ? "(K, M) row-major (transposed)" : "(M, K) row-major");
  replace_placeholder(text, "B_LAYOUT", plan.b_transposed ? "(N, K) row-major (transposed)" : "(K, N) row-major");
  replace_placeholder(text, "BATCH", std::to_string(plan.batch));
  fill_gemm_shape(text, plan);
  replace_placeholder(text, "A_TRANSPOSED", plan.a_transposed ? "true" : "false");
  replace_placeholder(text, "B_TRANSPOSED", plan.b_transposed ? "true" : "false");
  replace_placeholder(text, "A_BATCH_STRIDE", std::to_string(plan.a_batch_stride));
  replace_placeholder(text, "B_BATCH_STRIDE", std::to_string(plan.b_batch_stride));
  replace_placeholder(text, "MASK", plan.mask == GemmMask::triu ? "1" : plan.mask == GemmMask::tril ? "2" : "0");
  replace_placeholder(text, "DIAGONAL", std::to_string(plan.diagonal));
  replace_placeholder(text, "NORM_PASS", gemm_norm_pass_text());
  replace_placeholder(text, "EPILOGUE_TEXT", epilogue_text(plan));
  fill_column_operands(text, plan);
  replace_placeholder(text, "EPILOGUE_BODY", gemm_epilogue_body(plan, false));
  replace_placeholder(text, "REDUCE", gemm_reduce_enum(plan.reduce));
  replace_placeholder(text, "ROW_REDUCE", plan.reduce == RowReduce::none ? "0" : "1");
  replace_placeholder(text, "POST_BODY", gemm_epilogue_body(plan, true));
  replace_placeholder(text, "NORM", gemm_norm_enum(plan.norm));
  replace_placeholder(text, "NORM_GROUPS", std::to_string(plan.norm_groups));
  replace_placeholder(text, "NORM_EPS", fmt::format("{}", plan.norm_eps));
  replace_placeholder(text, "SPLIT_K_TEXT", split_k_text(plan));
  replace_placeholder(text, "KNOBS_TEXT",
                      skinny ? "// Knobs (docs/tuning.md): the skinny kernel's k-tile, stages and CTA groups."
                             : fmt::format("// Knobs (docs/tuning.md): the CTA tile{}.",
                                           plan.kernel == GemmKernel::split_k ? " and the number of K slices" : ""));
  replace_placeholder(text, "SPLIT_K_KNOB", split_k_knob(plan));
  return text;
}

}  // namespace cutegen::seed
