#include "seed/routes/gemm/library_gemm.h"

#include <fmt/format.h>

#include <cstdint>

#include "seed/library_text.h"

namespace cutegen::seed {
namespace {

// library/gemm_sm90_3xtf32.cu, read at build time (src/CMakeLists.txt): one source of truth, so a
// fix to the library kernel is the seed's fix too.
constexpr const char* kLibrary =
#include "seed/gemm_sm90_3xtf32.inc"
    ;
// The GEMMs of the looser policies (library_gemm_precision_refusal), with the same kTransA / kTransB and input
// lines as the 3xTF32 file.
constexpr const char* kLibraryTf32 =
#include "seed/gemm_sm90_tf32.inc"
    ;
constexpr const char* kLibraryBf16 =
#include "seed/gemm_sm90_bf16.inc"
    ;

// The library file a plan's policy picks: its text, its path and its name (library_gemm_name).
struct LibraryFile {
  const char* text;
  const char* path;
  std::string_view name;
};
const LibraryFile& file_for(const GemmPlan& p) {
  static const LibraryFile kStrict{kLibrary, "library/gemm_sm90_3xtf32.cu", "library 3xTF32 GEMM"},
      kTf32{kLibraryTf32, "library/gemm_sm90_tf32.cu", "library TF32 GEMM"},
      kBf16{kLibraryBf16, "library/gemm_sm90_bf16.cu", "library bf16 GEMM"};
  switch (p.library_precision) {
    case Precision::tf32: return kTf32;
    case Precision::bf16: return kBf16;
    case Precision::strict: break;
  }
  return kStrict;
}
const char* library_file(const GemmPlan& p) { return file_for(p).path; }

constexpr int64_t kTile = 128;                     // GX_TILE_M = GX_TILE_N by default
constexpr int64_t kMaxExtent = INT32_MAX / 4;      // make_plan's limit on M, N and K

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

int64_t tiles(const GemmPlan& p) { return library_gemm_tiles(p); }

std::string layout(bool transposed, const char* plain, const char* swapped) {
  return library_operand_layout(transposed, plain, swapped);
}

// Why a looser policy's GEMM, in the header's words.
std::string precision_note(const GemmPlan& p) {
  if (p.bf16)
    return "// The operands and the product are bf16, so the kernel is the library's bf16 GEMM (bf16 in and out, fp32\n"
           "// accumulation), the seed's one kernel for them: 0.193 ms on 4096^3 on the H200, 1.22x eager\n"
           "// (benchmarks/results.md, \"GEMM\").\n";
  switch (p.library_precision) {
    case Precision::tf32:
      return "// The run's --precision tf32 allows one TF32 product per term, so the seed takes the TF32 GEMM instead:\n"
             "// 0.385 ms on 4096^3 on the H200, 3.6x the 3xTF32 GEMM (benchmarks/results.md, \"GEMM\").\n";
    case Precision::bf16:
      return "// The run's --precision bf16 allows bf16 operands with fp32 accumulation, so the seed takes the bf16\n"
             "// GEMM instead (a pre-pass rounds A and B): 0.287 ms on 4096^3 on the H200 (benchmarks/results.md).\n";
    case Precision::strict: break;
  }
  return "";
}

}  // namespace

const char* library_gemm_text() { return kLibrary; }

const char* library_gemm_text(const GemmPlan& p) { return file_for(p).text; }

std::string_view library_gemm_name(const GemmPlan& p) { return file_for(p).name; }

std::string library_gemm_precision_refusal(const GemmPlan& p, Precision precision) {
  if (precision == Precision::strict) return "the strict policy (the 3xTF32 GEMM is the library's fp32-accurate one)";
  if (p.bf16) return "bf16 operands (the bf16 GEMM is their kernel under every policy)";
  if (p.kernel != GemmKernel::library) return "not on the library GEMM";
  if (p.has_epilogue() || !p.columns.empty()) return "a product with an epilogue (only the 3xTF32 GEMM fuses one)";
  if (p.mask != GemmMask::none || p.batch != 1 || !p.matrices)
    return "not two rank-2 matrices and a rank-2 product (the TF32 and bf16 GEMMs take no batch or mask)";
  if (precision == Precision::tf32 && p.n % 4 != 0)
    return fmt::format("N = {} (the TF32 GEMM stores 16-byte rows: N a multiple of 4)", p.n);
  // The bf16 file's operand layouts are compile-time (kTransA, kTransB); for fp32 inputs only A @ B has been
  // judged (benchmarks/results.md, "GEMM"), so a transposed operand keeps the 3xTF32 GEMM.
  if (precision == Precision::bf16 && (p.a_transposed || p.b_transposed))
    return "a transposed operand (the bf16 GEMM's fp32 path is judged for A @ B only)";
  if (precision == Precision::bf16 && (p.m % 8 != 0 || p.n % 8 != 0 || p.k % 8 != 0))
    return fmt::format("(M, N, K) = ({}, {}, {}) (the bf16 GEMM's TMA rows: multiples of 8)", p.m, p.n, p.k);
  return "";
}

// make_plan's workspace at the most any GX_STORE asks (GX_STORE 0's, which the epilogue seeds build; 1 asks for
// B' with N rows and no padded output): A' (M x 3Kp) and B' (Np x 3Kp) in fp32 per matrix of the batch, Kp = K
// and Np = N rounded up to 4, and when N % 4 != 0 the padded output (M x Np), each rounded up to 256 bytes; CUTLASS's
// own part is 0 bytes for its persistent scheduler. The judge's other bound, 8x the problem's bytes, never
// binds first: (3(M + Np)Kp + M Np) floats against 8(MK + KN + MN).
// With a row reduction the epilogue seed stores the epilogue's (M, N) values in front of that
// (library_gemm_epilogue_entry.cu.in).
int64_t library_gemm_workspace_bytes(const GemmPlan& p) {
  const int64_t kp = round_up(p.k, 4), np = round_up(p.n, 4);
  const int64_t padded = p.n % 4 != 0 ? round_up(p.batch * p.m * np * 4, 256) : 0;
  const int64_t values = p.reduce != RowReduce::none ? round_up(p.m * p.n * 4, 256) : 0;
  return values + round_up(p.batch * p.m * 3 * kp * 4, 256) + round_up(p.batch * np * 3 * kp * 4, 256) + padded;
}

int64_t library_gemm_tiles(const GemmPlan& p) {
  return p.batch * ((p.m + kTile - 1) / kTile) * ((p.n + kTile - 1) / kTile);
}

std::string library_operand_layout(bool transposed, const char* plain, const char* swapped) {
  return transposed ? fmt::format("{} row-major (transposed in forward())", swapped) : fmt::format("{} row-major", plain);
}

Status set_library_transposes(const GemmPlan& p, std::string& library, const char* seed_file) {
  const char* a = p.a_transposed ? "true" : "false";
  const char* b = p.b_transposed ? "true" : "false";
  return replace_library_lines(
      library,
      {{"constexpr bool kTransA = false;", fmt::format("constexpr bool kTransA = {};  // set by the seed: A is {}", a,
                                                       layout(p.a_transposed, "(M, K)", "(K, M)"))},
       {"constexpr bool kTransB = false;", fmt::format("constexpr bool kTransB = {};  // set by the seed: B is {}", b,
                                                       layout(p.b_transposed, "(K, N)", "(N, K)"))}},
      library_file(p), seed_file);
}

std::string library_gemm_refusal(const GemmPlan& p) {
  const bool epilogue = p.has_epilogue() || !p.columns.empty() || p.mask != GemmMask::none;
  // A mask is an epilogue that stores 0 off its triangle (library_gemm_epilogue_prelude.cu.in), for a plain
  // product of matrices.
  if (p.mask != GemmMask::none && (p.batch != 1 || !p.matrices || p.reduce != RowReduce::none || p.norm != GemmNorm::none))
    return fmt::format("the product is under {} with a batch, a reduction or a norm (the library kernel masks one "
                       "plain product of matrices)",
                       gemm_mask_name(p.mask));
  if (p.batch > 1 && !p.batched_matrices)
    return "a batch that is not (L, M, K) @ (L, K, N) with a contiguous fp32 (L, M, N) product (the library kernel "
           "batches over one leading dimension)";
  if (!(p.batch == 1 && (p.matrices || p.folds_into_m)) && !(p.batch > 1 && p.batched_matrices))
    return "not two rank-2 operands (or a left operand whose leading dimensions fold into M, or a batch of "
           "(L, M, K) @ (L, K, N)) and a contiguous fp32 product";
  if (epilogue && p.batch != 1) return "a batched product with an epilogue (the epilogue seed plans one product)";
  if (p.m > kMaxExtent || p.n > kMaxExtent || p.k > kMaxExtent)
    return fmt::format("M, N or K above {} (the library kernel's int32 sizes)", kMaxExtent);
  if (library_gemm_workspace_bytes(p) > kWorkspaceCeiling)
    return fmt::format("its split operands need {} bytes of workspace, above the judge's 4 GiB", library_gemm_workspace_bytes(p));
  if (tiles(p) < kLibraryGemmMinTiles)
    return fmt::format("{} output tiles of {}x{}, fewer than {} (half an H200's SMs): the library kernel would leave "
                       "most of the GPU idle",
                       tiles(p), kTile, kTile, kLibraryGemmMinTiles);
  return "";
}

Result<std::string> generate_library_gemm_kernel(const GemmPlan& plan, const CommentText& problem) {
  return generate_library_gemm_kernel(plan, problem, library_gemm_text(plan));
}

Status set_library_inputs(const GemmPlan& p, std::string& library, const char* seed_file) {
  if (p.num_contract_inputs == 2 && p.a_input == 0 && p.b_input == 1) return ok_status();  // the file as it is
  return replace_library_lines(
      library,
      {{"  if (num_inputs != 2 || num_outputs != 1) return p.status = CUTEGEN_ERROR_BAD_ARGUMENTS, p;",
        fmt::format("  if (num_inputs != {} || num_outputs != 1) return p.status = CUTEGEN_ERROR_BAD_ARGUMENTS, p;  "
                    "// set by the seed: the problem's inputs",
                    p.num_contract_inputs)},
       {"  const cutegen_tensor &a = inputs[0], &b = inputs[1], &c = outputs[0];",
        fmt::format("  const cutegen_tensor &a = inputs[{}], &b = inputs[{}], &c = outputs[0];  // set by the seed: "
                    "where A and B are among them",
                    p.a_input, p.b_input)}},
      library_file(p), seed_file);
}

Result<std::string> generate_library_gemm_kernel(const GemmPlan& p, const CommentText& problem,
                                                 std::string library) {
  if (auto s = set_library_transposes(p, library, "src/seed/routes/gemm/library_gemm.cpp"); !s) return s.error();
  if (auto s = set_library_inputs(p, library, "src/seed/routes/gemm/library_gemm.cpp"); !s) return s.error();
  const std::string header = fmt::format(
      "// Seed kernel for {0}, written by cutegen without an LLM (docs/seed.md):\n"
      "// a plain {14} matrix product\n"
      "//   y = {1}\n"
      "// {10}(M, N, K) = ({2}, {3}, {4}) when traced{9}. A is read as {5},\n"
      "// B as {6}.\n"
      "//\n"
      "// The kernel is the library's {11}, {12}, as it is below but for\n"
      "// kTransA and kTransB, which the seed sets from the graph (the library otherwise tells a transposed\n"
      "// operand from the shapes, and a square A.T @ B has the shapes of A @ B).{15}\n"
      "{13}"
      "//\n",
      problem.str(), p.pattern, p.m, p.n, p.k, layout(p.a_transposed, "(M, K)", "(K, M)"),
      layout(p.b_transposed, "(K, N)", "(N, K)"), tiles(p), kLibraryGemmMinTiles,
      p.folds_into_m ? ", A's leading dimensions folded into M" : "",
      p.batch > 1 ? fmt::format("a batch of {} products, each ", p.batch) : "", library_gemm_name(p).substr(8),
      library_file(p), precision_note(p), p.bf16 ? "bf16" : "fp32",
      p.bf16 ? ""
             : fmt::format(" Chosen over the seed's own\n"
                           "// GEMM (src/seed/routes/gemm/gemm_kernel.cu.in, CUDA-core FMA: 0.3x eager PyTorch on an H200 at\n"
                           "// 4096^3) because this product fits it -- sizes within int32, its workspace within the judge's "
                           "cap -- and has {} output tiles\n"
                           "// of 128x128, enough to fill the GPU (>= {}, half an H200's 132 SMs); there the library kernel ran\n"
                           "// 4096^3 in 1.39 ms, 2.0x eager, at strict fp32 accuracy (benchmarks/results.md).",
                           tiles(p), kLibraryGemmMinTiles));
  return header + library;
}

}  // namespace cutegen::seed
