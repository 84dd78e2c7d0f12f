#pragma once
// What the structured matchers (reductions, norms, matrix products) hand the generators: every shape
// and choice the kernel needs, decided once from the traced graph (docs/seed.md).
#include <cstdint>
#include <string>
#include <vector>

namespace cutegen::seed {

// The most workspace a kernel may ask the judge for (python/cutegen_worker/memory.py's cap).
inline constexpr int64_t kWorkspaceCeiling = int64_t{4} << 30;

// One SSA statement of a device function: `const float <value> = <expr>;  // <what>`.
struct PointwiseStep {
  std::string value;
  std::string expr;
  std::string what;          // e.g. "leaky_relu(v1, negative_slope=0.01)"
};

// y[o, i] = op over r of x[o, r, i]: the input viewed as (outer, extent, inner) around the reduced
// dimension (a reduction over everything is outer = inner = 1). inner == 1 is a row per CTA,
// inner > 1 a thread per output walking the column (coalesced across threads).
struct ReducePlan {
  std::string op;  // sum mean prod max min argmax argmin
  int64_t outer = 1, extent = 1, inner = 1;
  std::string out_dtype;  // float32, or int64 for argmax/argmin
  int num_contract_inputs = 0;
  int input = 0;
  std::string pattern;  // sum(x, dim=1, keepdim=True)
  int dim = -1;         // the reduced dimension of the input as traced; -1: everything (one row)
};

// Statistics of a group of elements, then every element rewritten with them.
//   mean_var: y = (x - mean) * rsqrt(var + eps) [* w[ch]] [+ b[ch]] (LayerNorm, GroupNorm, InstanceNorm,
//             BatchNorm with batch statistics; biased variance as torch's forward uses).
//   scaled:   s = sum or mean over the group of pre(x); d = post(s); y = x / d or x * d (RMS, L1, L2, Frobenius).
// Groups: rows (contiguous runs of `extent`), columns (x viewed as (outer, extent, inner), one group per
// (o, i)), channels (x as (outer, extent, inner) = (N, C, HW), one group per c over N x HW) or all
// (one group: every CTA adds its part into the workspace, then every CTA writes its part).
struct NormPlan {
  std::string kind;   // mean_var | scaled
  std::string mode;   // rows | columns | channels | all
  int64_t outer = 1, extent = 1, inner = 1;
  double eps = 0;
  // scaled: the statistic and the two device functions' statements (pointwise table, fp32)
  bool mean = false;                   // s is the mean of pre(x), else its sum
  std::vector<PointwiseStep> pre;      // from x0 to pre_result
  std::string pre_result = "x0";
  std::vector<PointwiseStep> post;     // from s to post_result
  std::string post_result = "s";
  bool divide = true;                  // y = x / d, else x * d
  // mean_var affine: the channel of element l of group g is (g % ch_groups) * ch_per_group + l / ch_hw
  int weight_input = -1, bias_input = -1;
  int64_t ch_groups = 1, ch_per_group = 1, ch_hw = 1;
  int num_contract_inputs = 0;
  int input = 0;
  int dim = -1;  // scaled rows/columns: the reduced dimension of the input as traced (else -1)
  std::string pattern;
};

// An operand of a GEMM epilogue read per output column: element n * stride of a contiguous fp32 tensor
// (a bias of shape (N,) or (1, N): stride 1; a single number of shape (), (1,) or (1, 1): stride 0).
struct ColumnOperand {
  int input = 0;       // contract position
  int64_t stride = 1;  // 1 or 0
  std::string name;
  bool post = false;   // read by post() (after a norm), else by epilogue()
};

// The kernels a matrix product can get (gemm_route.h decides):
//   tiled    the seed's own CUDA-core GEMM (gemm_kernel.cu.in), right for every plan;
//   library  the library's 3xTF32 GEMM (library_gemm.h): a large plain product;
//   gemv     a memory-bound matrix-vector kernel (gemv_kernel.cu.in): a plain product with N == 1 or M == 1;
//   split_k  the tiled GEMM with K split over CTAs and the slices summed by a second kernel: a plain product
//            with few output tiles and a long K.
enum class GemmRoute { tiled, library, gemv, split_k };

// C[b] = A[b] @ B[b] in fp32, A (M, K) and B (K, N) as the kernel reads them; `a_transposed` means the
// tensor given is (K, M) row-major (A.T in forward()), `b_transposed` (N, K). Batch strides 0 share an
// operand across the batch. Optionally triu/tril of the product (elements outside set to zero).
// Optionally an epilogue (the gemm_epilogue pattern: nn.Linear or a matmul, then pointwise ops): each
// element y of the product, in fp32, becomes `result` through `epilogue`'s statements over y and the
// column operands c0, c1, ... before it is stored. With `reduce` (gemm_epilogue_reduce), the epilogue's
// values are instead reduced over each output row (sum, mean, max, min or logsumexp over N) and `post`'s
// statements map the row's statistic s to the one value stored per row. With `norm` (gemm_epilogue_norm),
// the epilogue's values are normalised -- GroupNorm over each row's `norm_groups` runs of N / groups columns,
// or training-mode BatchNorm over each column's M values -- and `post`'s statements map the normalised value
// s (its affine weight and bias applied by the first statements) to the value stored.
struct GemmPlan {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool a_transposed = false, b_transposed = false;
  int64_t a_batch_stride = 0, b_batch_stride = 0;
  std::string mask;  // "" | triu | tril
  int64_t diagonal = 0;
  int num_contract_inputs = 0;
  int a_input = 0, b_input = 1;
  std::vector<ColumnOperand> columns;
  std::vector<PointwiseStep> epilogue;
  std::string result = "y";
  std::string reduce;  // "" | sum | mean | max | min | logsumexp
  std::string norm;    // "" | group | batch
  int64_t norm_groups = 1;
  double norm_eps = 1e-5;
  std::vector<PointwiseStep> post;
  std::string post_result = "s";
  std::string pattern;
  // A, B and the product are all rank 2: no batch, none folded into M, no vector (match_matmul).
  bool matrices = false;
  // (..., M, K) @ (K, N) with A of rank > 2 untransposed, B a rank-2 matrix and the product a contiguous
  // fp32 tensor: A's leading dimensions fold into M (KernelBench 10, 11).
  bool folds_into_m = false;
  // (L, M, K) @ (L, K, N), either operand possibly transposed in its last two dimensions, and a contiguous
  // fp32 (L, M, N) product: a batch of `batch` matrix products (KernelBench 3).
  bool batched_matrices = false;
  // Which kernel computes the product: exactly one per plan, decided by choose_gemm_route (gemm_route.h)
  // from the shapes, with `route_reason` saying why (for a tiled plan, why each other route refused it).
  GemmRoute route = GemmRoute::tiled;
  int64_t split_k = 1;  // split_k: the default number of K slices (the GEMM_SPLIT_K knob's default)
  std::string route_reason;
  bool has_epilogue() const { return !epilogue.empty() || !reduce.empty() || !norm.empty(); }
};

// y = the inclusive cumsum or cumprod of x over one dimension (reverse: from the end, as
// flip(cumsum(flip(x, d), d), d) computes it), x viewed as (outer, extent, inner) around it.
struct ScanPlan {
  std::string op;  // cumsum | cumprod
  bool reverse = false;
  int64_t outer = 1, extent = 1, inner = 1;
  int num_contract_inputs = 0;
  // What is scanned: a pointwise chain (steps, result) of same-shape operands x0, x1, ... (float32, or
  // bool read as 0/1 as torch promotes it); a plain input is the chain "x0".
  std::vector<int> inputs;
  std::vector<std::string> dtypes;
  std::vector<std::string> names;
  std::vector<PointwiseStep> steps;
  std::string result = "x0";
  std::string pattern;
};

// Max or average pooling over the last `dims` dimensions (1 to 3) of each (N, C) plane, PyTorch's window
// geometry; spatial sizes padded to (D, H, W) with size-1 dimensions.
struct PoolPlan {
  bool max = true;
  int dims = 2;
  int64_t planes = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  bool count_include_pad = true;
  int64_t divisor_override = 0;
  int num_contract_inputs = 0;
  int input = 0;
  std::string pattern;
};

// A depthwise convolution (nn.Conv1d..3d with groups = in_channels = out_channels) of a contiguous fp32
// input: every (N, C) plane convolved with its channel's window of weights, plus the channel's bias; the
// window geometry is PyTorch's, spatial sizes padded to (D, H, W) with size-1 dimensions as a pooling's.
struct DepthwiseConvPlan {
  int dims = 2;
  int64_t batch = 1, channels = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  int num_contract_inputs = 0;
  int input = 0;
  int weight_input = -1;  // contract position of the (C, 1, k...) weight
  int bias_input = -1;    // of the (C) bias, -1 without one
  std::string pattern;
};

// A pointwise chain whose operands broadcast (torch's rules, right-aligned): each operand x_k is read at
// sum over d of coord[d] * strides[k][d], 0 where it repeats. An operand may be an unsqueeze of an input.
struct BroadcastPlan {
  std::vector<int64_t> shape;                  // the output's
  std::vector<int> inputs;                     // contract position of each operand x0, x1, ...
  std::vector<int64_t> sizes;                  // each operand's element count
  std::vector<std::vector<int64_t>> strides;   // per operand, over the output's dimensions
  std::vector<std::string> names;
  std::vector<PointwiseStep> steps;
  std::string result;
  int num_contract_inputs = 0;
  std::string pattern;
};

// F.cross_entropy of fp32 logits (rows, classes) against int64 class indices, reduction mean or sum.
struct CrossEntropyPlan {
  int64_t rows = 0, classes = 0;
  int64_t ignore_index = -100;
  bool mean = true;
  int logits_input = 0, targets_input = 1;
  int num_contract_inputs = 0;
  std::string pattern;
};

// A loss: one number, scale x the sum over every element of a pointwise chain of tensors. Each tensor
// has the element shape or is a suffix of it broadcast as torch broadcasts it (a (N,) target over (B, N):
// element e reads index e % its size).
struct LossPlan {
  int64_t numel = 0;               // elements summed
  double scale = 1;                // 1 (sum), 1/numel (mean), 1/shape[0] (kl_div's batchmean)
  std::string reduction;           // sum | mean | batchmean, for people
  std::vector<int> inputs;         // contract position of each tensor operand x0, x1, ...
  std::vector<int64_t> sizes;      // each operand's element count (numel, or its broadcast suffix's)
  std::vector<std::string> names;
  std::vector<PointwiseStep> steps;
  std::string result;
  int num_contract_inputs = 0;
  std::string pattern;
};

}  // namespace cutegen::seed
