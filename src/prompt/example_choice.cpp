#include "prompt/example_choice.h"

#include <algorithm>
#include <array>

namespace cutegen {
namespace {

struct Entry {
  std::string_view file, why;
  operator ExampleChoice() const { return {file, std::string(why)}; }
};

// The why-lines quote benchmarks/results.md (H200, `cutegen eval`, KernelBench sizes); keep them in step.
constexpr Entry kGemmStrict{
    "gemm_sm90_3xtf32.cu",
    "the library's strict-fp32 GEMM: 3xTF32 on wgmma (each fp32 operand split into a TF32 big and small "
    "part, three MMAs, fp32 partial sums promoted every 64 of K'), TMA loads into swizzled shared memory, a "
    "warp-specialised producer/consumer pipeline; 2.00x cuBLAS SGEMM on an H200 (4096^3)"};
constexpr Entry kGemmTf32{
    "gemm_sm90_tf32.cu",
    "the library's TF32 GEMM (the tf32 policy): wgmma fed by TMA into swizzled shared memory, a "
    "warp-specialised producer/consumer pipeline, operands made K-major by a pre-pass; 0.37 ms by CUDA "
    "events on 4096^3 on an H200 against cuBLAS TF32's 0.40 ms"};
constexpr Entry kGemmBf16{
    "gemm_sm90_bf16.cu",
    "the library's bf16 GEMM: wgmma fed by TMA into swizzled shared memory, a warp-specialised "
    "producer/consumer pipeline, 16-bit operands read in place in either major-ness (fp32 operands "
    "rounded by a pre-pass under the bf16 policy); 1.22x cuBLAS on a bf16 4096^3 on an H200 (for fp16 "
    "data the same structure takes half_t)"};
// The ticket kernels, not the cluster ones: faster on KernelBench 23/24 (97.3% / 94.4% of the floor
// against 82.6% / 80.6%) and ~0.6k tokens shorter. (On smaller or odd-length tensors the cluster kernels
// are a little faster; the facts here hold no shapes, and the ticket files cover every shape too.)
constexpr Entry kSoftmax{
    "softmax_ticket.cu",
    "the library's row softmax: 32 KB chunks handed to every SM in address order by one counter, each "
    "loaded by a bulk copy into an mbarrier-pipelined stage, a row's (max, sum) met in per-warp workspace "
    "slots that are their own flags, so the input is read from DRAM once (a two-pass kernel for the shapes "
    "that protocol cannot take); 1.99x PyTorch eager and 97.3% of the memory floor on KernelBench 23 "
    "(4096 x 393216) on an H200"};
constexpr Entry kLogSoftmax{
    "log_softmax_ticket.cu",
    "the library's row log-softmax: 32 KB chunks handed to every SM in address order by one counter, each "
    "loaded by a bulk copy into an mbarrier-pipelined stage, a row's (max, sum) met in per-warp workspace "
    "slots that are their own flags, so the input is read from DRAM once (a two-pass kernel for the shapes "
    "that protocol cannot take); 1.94x PyTorch eager and 94.4% of the memory floor on KernelBench 24's "
    "size (4096 x 393216) on an H200"};
constexpr Entry kLayerNorm{
    "layernorm_rows_grid.cu",
    "the library's LayerNorm for long rows: a co-resident grid splits each row over CTAs (each CTA's "
    "slice kept in shared memory), partial statistics meet in the workspace behind a per-row arrival "
    "counter, weight/bias kept in L2; 16x PyTorch eager on KernelBench 40 (16 rows of 4M) on an H200, "
    "still behind torch.compile there (0.51 ms against 0.38 ms)"};
constexpr Entry kRmsNorm{
    "rmsnorm_channels.cu",
    "the library's RMSNorm over the channel dimension of (N, C, H, W): each thread keeps a column of C "
    "values in registers, loads coalesced across the warp with many in flight, no shared memory or "
    "barrier; 2.9x PyTorch eager on KernelBench 36 on an H200 (90% of the memory floor)"};
// Other reductions (sum, mean, max, argmax, norms over a dim, ...) get reduce_dim.cu, the library's
// reduction over one dimension (not row_sum_two_pass.cu, 0.68x eager on its row-sum problem). Its
// numbers, KernelBench 47-53 as seeds with its defaults: benchmarks/results.md.
constexpr Entry kOtherReduction{
    "reduce_dim.cu",
    "the library's reduction over one dimension (sum, mean, max, min, argmax, argmin): 256 outputs per CTA "
    "so every row is read in 1 KB runs, their columns split over row groups with independent loads in "
    "flight, partials met in shared memory in a fixed order; 95-96% of the memory floor on KernelBench 47 "
    "and 48 (1.02x PyTorch eager), 1.19-1.24x eager on 49 and 51-53, on an H200"};
constexpr Entry kElementwise{
    "elementwise.cu",
    "the library's elementwise kernel: generic over a device functor (replace Op), 128-bit vector "
    "accesses, one pass with a CTA per 1024 values (as fast as eager PyTorch on KernelBench 19's ReLU on an "
    "H200), every launch shape a cutegen:knob"};

constexpr Entry kConv{
    "conv_implicit_gemm.cu",
    "the library's convolution (forward and transposed, 1-3 dimensions, stride, padding, dilation, groups): "
    "an implicit GEMM whose A tile is gathered from the NCHW input by zero-filling cp.async through a "
    "per-phase tap table, 3xTF32 on mma.sync with the weight split in the workspace, transposed convolutions "
    "run per output phase so no MMA is spent on empty taps; on an H200 1.2-2.7x PyTorch eager on transposed, "
    "strided and few-channel layers, 0.67-0.75x on dense forward layers with many channels (where wgmma "
    "with warp-specialised gathers is the next step)"};

constexpr std::array<std::string_view, 10> kFiles = {
    kGemmStrict.file, kGemmTf32.file, kGemmBf16.file,    kSoftmax.file,        kLogSoftmax.file,
    kLayerNorm.file,  kRmsNorm.file,  kElementwise.file, kOtherReduction.file, kConv.file};

// "aten::_log_softmax" -> "_log_softmax"; ops recorded with an overload ("aten::add.Tensor") lose it too.
std::string_view base_name(std::string_view op) {
  if (auto colons = op.rfind("::"); colons != std::string_view::npos) op.remove_prefix(colons + 2);
  if (auto dot = op.find('.'); dot != std::string_view::npos) op = op.substr(0, dot);
  return op;
}

bool has_op(const ExampleFacts& f, std::initializer_list<std::string_view> names) {
  return std::any_of(f.aten_ops.begin(), f.aten_ops.end(), [&](const std::string& op) {
    return std::find(names.begin(), names.end(), base_name(op)) != names.end();
  });
}

ExampleChoice gemm_choice(const ExampleFacts& f) {
  // A 16-bit problem is bf16/fp16 data whatever the policy; the policy matters for fp32 data only.
  if (f.precision == Precision::bf16 || f.dtype == "bfloat16" || f.dtype == "float16") return kGemmBf16;
  if (f.precision == Precision::tf32) return kGemmTf32;
  return kGemmStrict;
}

ExampleChoice reduction_choice(const ExampleFacts& f) {
  if (has_op(f, {"_log_softmax", "log_softmax"})) return kLogSoftmax;
  if (has_op(f, {"_softmax", "softmax", "_safe_softmax"})) return kSoftmax;
  if (has_op(f, {"native_layer_norm", "layer_norm", "native_group_norm", "group_norm"})) return kLayerNorm;
  if (has_op(f, {"_fused_rms_norm", "rms_norm"})) return kRmsNorm;
  // Norms written out in PyTorch arrive decomposed: a mean and a square root, with the mean subtracted
  // (LayerNorm-like) or not (RMS-like: mean of squares).
  if (has_op(f, {"mean"}) && has_op(f, {"sqrt", "rsqrt"})) {
    return has_op(f, {"sub", "var", "var_mean"}) ? kLayerNorm : kRmsNorm;
  }
  return kOtherReduction;
}

}  // namespace

ExampleChoice choose_example(const ExampleFacts& facts) {
  switch (facts.workload) {
    case WorkloadClass::gemm: return gemm_choice(facts);
    case WorkloadClass::conv: {
      // fp32 data: the library convolution, right under every policy (it passes strict). 16-bit data: the
      // bf16 GEMM's mainloop is the one to gather into.
      if (facts.dtype != "bfloat16" && facts.dtype != "float16") return kConv;
      ExampleChoice c = gemm_choice(facts);
      c.why += "; shown because a convolution is an implicit GEMM (the same mainloop over an im2col view of the "
               "input, gathered on the fly)";
      return c;
    }
    case WorkloadClass::attention: {
      ExampleChoice c = gemm_choice(facts);
      c.why += "; shown because attention is two GEMMs around a row softmax, and the GEMMs are the hard part";
      return c;
    }
    case WorkloadClass::reduction: return reduction_choice(facts);
    case WorkloadClass::elementwise:
    case WorkloadClass::other: return kElementwise;
  }
  return kElementwise;
}

std::span<const std::string_view> example_files() { return kFiles; }

}  // namespace cutegen
