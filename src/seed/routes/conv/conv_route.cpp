#include "seed/routes/conv/conv_route.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <vector>

#include "seed/graph_util.h"
#include "seed/library_text.h"
#include "seed/plan_parts.h"
#include "seed/window.h"
#include "seed/workspace_cap.h"

namespace cutegen::seed {
namespace {

// library/conv_implicit_gemm.cu, read at build time (src/CMakeLists.txt): the seed is the library
// kernel as measured, with one line set.
constexpr const char* kLibrary =
#include "seed/conv_implicit_gemm.inc"
    ;
constexpr const char* kLibraryFile = "library/conv_implicit_gemm.cu";
constexpr const char* kSpecLine = "constexpr ConvSpec kSpec = {2, false, 1, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}};";
constexpr int64_t kMaxWindow = 16;  // the library kernel's tap tables hold 16 taps per dimension

// The parameter at args[at] of the convolution: a contiguous model parameter of `dtype`, or why not.
Result<const Node*> conv_param(const OpGraph& g, const Node& conv, std::size_t at, const char* what,
                               std::string_view dtype) {
  if (at >= conv.args.size() || !conv.args[at].ref || g.node(*conv.args[at].ref).op != Op::param)
    return Error{fmt::format("the convolution's {} is not one of the model's parameters", what)};
  const Node& p = g.node(*conv.args[at].ref);
  if (!p.type || p.type->dtype != dtype || !p.type->contiguous)
    return Error{fmt::format("the convolution's {} is not a contiguous {} parameter", what, dtype)};
  return &p;
}

std::string triple(const int64_t v[3]) { return fmt::format("{{{}, {}, {}}}", v[0], v[1], v[2]); }

}  // namespace

Result<ConvPlan> conv_plan_of(const OpGraph& g, const Node& conv, bool take_bf16) {
  if ((conv.op != Op::conv && conv.op != Op::conv_transpose) || conv.args.size() < 2 || !conv.type)
    return Error{fmt::format("the output is {}, not a convolution of an input", conv.op)};
  ConvPlan plan;
  plan.bf16 = take_bf16 && conv.type->dtype == "bfloat16";
  const std::string_view dtype = plan.bf16 ? "bfloat16" : "float32";
  if (auto why = plain_input(g, conv.args[0], "the convolved tensor", false, dtype); !why.empty()) return Error{why};
  const Node& x = g.node(*conv.args[0].ref);
  plan.kind = conv.op == Op::conv_transpose ? ConvPlan::Kind::transposed : ConvPlan::Kind::forward;
  const double* dims = number(conv, "dims");
  const double* groups = number(conv, "groups");
  const double* in_channels = number(conv, "in_channels");
  const double* out_channels = number(conv, "out_channels");
  if (!dims || !groups || !in_channels || !out_channels || *dims < 1 || *dims > 3 || *groups < 1)
    return Error{"a convolution without its geometry (dims, groups, channels)"};
  plan.dims = static_cast<int>(*dims);
  plan.groups = static_cast<int64_t>(*groups);
  plan.in_channels = static_cast<int64_t>(*in_channels);
  plan.out_channels = static_cast<int64_t>(*out_channels);
  plan.has_bias = flag(conv, "has_bias");
  if (!x.type || x.type->dtype != dtype || !x.type->contiguous ||
      x.type->shape.size() != static_cast<std::size_t>(plan.dims) + 2)
    return Error{fmt::format("a convolution of a {} {}-d input (the library convolution takes a contiguous {} "
                             "(N, C, spatial...))",
                             x.type ? x.type->dtype : "untyped", x.type ? x.type->shape.size() : 0, dtype)};
  if (auto s = read_window(conv, plan.dims, plan.kernel, plan.stride, plan.padding, plan.dilation, "the convolution");
      !s)
    return s.error();
  if (plan.kind == ConvPlan::Kind::transposed)
    for (int i = 0; i < plan.dims; ++i) {
      const double* o = number(conv, fmt::format("o{}", i).c_str());
      if (!o || *o < 0) return Error{"the transposed convolution's output_padding is missing"};
      plan.output_padding[3 - plan.dims + i] = static_cast<int64_t>(*o);
    }
  for (int64_t k : plan.kernel)
    if (k > kMaxWindow)
      return Error{fmt::format("a convolution window of {} taps in one dimension (the library convolution holds at "
                               "most {})",
                               k, kMaxWindow)};
  auto weight = conv_param(g, conv, 1, "weight", dtype);
  if (!weight) return weight.error();
  const Node* bias = nullptr;
  if (plan.has_bias) {
    auto b = conv_param(g, conv, 2, "bias", dtype);
    if (!b) return b.error();
    bias = *b;
  }
  plan.input_shape = x.type->shape;
  plan.output_shape = conv.type->shape;
  choose_conv_path(plan, judge_workspace_cap(g));  // callers with more in the workspace choose again
  plan.x_input = x.index;
  plan.weight_input = (*weight)->index;
  plan.bias_input = bias ? bias->index : -1;
  // conv_transpose2d(x, conv_weight, conv_bias, stride=2, padding=1, output_padding=1, dilation=1, groups=4)
  const bool transposed = plan.kind == ConvPlan::Kind::transposed;
  plan.pattern = fmt::format("conv{}{}d({}, {}{}, stride={}, padding={}{}, dilation={}, groups={})",
                             transposed ? "_transpose" : "", plan.dims, x.name, (*weight)->name,
                             bias ? ", " + bias->name : std::string(), per_dim(plan.stride, plan.dims),
                             per_dim(plan.padding, plan.dims),
                             transposed ? ", output_padding=" + per_dim(plan.output_padding, plan.dims) : "",
                             per_dim(plan.dilation, plan.dims), plan.groups);
  return plan;
}

Result<ConvPlan> match_conv(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  auto plan = conv_plan_of(g, **output, /*take_bf16=*/true);
  if (!plan) return plan.error();
  if (auto why = bf16_path_refusal(*plan); !why.empty()) return Error{why};
  // The library kernel's own reading is inputs[0] = x, inputs[1] = weight, inputs[2] = bias, which the file keeps
  // as it is; elsewhere in the contract (a step of a chain, whose problem has more parameters) the seed sets its
  // kInputs line, as the epilogue route does.
  const int contract_inputs = g.num_inputs + static_cast<int>(g.params.size());
  if (plan->x_input != 0 || plan->weight_input != 1 || (plan->has_bias && plan->bias_input != 2) ||
      contract_inputs != (plan->has_bias ? 3 : 2))
    plan->num_contract_inputs = contract_inputs;
  return plan;
}

std::string conv_description(const ConvPlan& plan) {
  // The path in words, as the GEMM seeds name their kernel: which one ran is what a timing is read against.
  const std::string path = conv_path_name(plan.path);
  return fmt::format("{} (the library's implicit-GEMM convolution, {}{}){} {}",
                     plan.has_epilogue() ? "convolution with a pointwise epilogue" : "convolution", path,
                     plan.bf16 ? ", bf16" : "", plan.has_epilogue() ? ": out =" : " y =", plan.pattern);
}

std::string bf16_path_refusal(const ConvPlan& plan) {
  if (!plan.bf16 || plan.path == ConvPlan::Path::tma_im2col) return "";
  return fmt::format("a bf16 convolution the TMA path does not take: {} (the library convolution reads bf16 tensors "
                     "on that path only)",
                     plan.path_reason);
}

std::string conv_path_name(ConvPlan::Path path) {
  switch (path) {
    case ConvPlan::Path::tma_im2col: return "TMA im2col";
    case ConvPlan::Path::gather: return "gather";
    case ConvPlan::Path::direct: return "direct";
  }
  return "";
}

std::string conv_kernel_name(const ConvPlan& plan) {
  return fmt::format("library conv_implicit_gemm ({})", conv_path_name(plan.path));
}

std::string conv_pattern(const ConvPlan& plan) {
  return conv_kernel_name(plan) + (plan.has_epilogue() ? " + epilogue: " : ": ") + plan.pattern;
}

namespace {

// The phases of the gather kernel (a transposed convolution's stride per dimension, 1 forward) and the most
// taps one of them has.
struct PhaseTaps {
  int64_t phases = 1, taps = 1;
};
PhaseTaps phase_taps(const ConvPlan& p) {
  const bool transposed = p.kind == ConvPlan::Kind::transposed;
  PhaseTaps t;
  for (int d = 0; d < 3; ++d) {
    // A transposed convolution's phase r along d takes the taps k with k * dilation = r + p (mod stride): one in
    // every stride / gcd(stride, dilation).
    const int64_t step = transposed ? p.stride[d] / std::gcd(p.stride[d], p.dilation[d]) : 1;
    t.phases *= transposed ? p.stride[d] : 1;
    t.taps *= (p.kernel[d] + step - 1) / step;
  }
  return t;
}

}  // namespace

int64_t conv_phase_k(const ConvPlan& p) {
  return phase_taps(p).taps * (p.in_channels / std::max<int64_t>(p.groups, 1));
}

int64_t conv_gather_workspace_bytes(const ConvPlan& p) {
  constexpr int64_t kTapBytes = 16, kBK = 32, kLargestTileN = 128;
  auto round_up = [](int64_t v, int64_t to) { return (v + to - 1) / to * to; };
  const auto [phases, taps] = phase_taps(p);
  const int64_t groups = std::max<int64_t>(p.groups, 1);
  const int64_t kmax = round_up(std::max<int64_t>(taps * (p.in_channels / groups), 1), kBK);
  const int64_t cout_pad = round_up(p.out_channels / groups, kLargestTileN);
  const int64_t table = round_up(phases * kmax * kTapBytes, 256);
  const int64_t weights = round_up(groups * phases * kmax * cout_pad * 4, 256);
  return table + 2 * weights;  // the big and the small parts
}

namespace {

// The TMA path's buffers (tma_path::Layout3): the packed weight, and per image the packed input and the NHWK
// output, each rounded to 256 bytes; strict sizes (the policy whose packed copies are the largest).
struct TmaBuffers {
  int64_t weight = 0, image_in = 0, image_out = 0, images = 0, out_vol = 0;
};
constexpr int64_t kTmaChunkBytes = int64_t{1} << 30;  // the library's kChunkBytes

// The path's own checks (tma_path::layout_for), in its order; CUTLASS's can_implement is the run's to make.
Result<TmaBuffers> tma_buffers(const ConvPlan& p) {
  const int64_t groups = std::max<int64_t>(p.groups, 1), cin_g = p.in_channels / groups,
                cout_g = p.out_channels / groups;
  if (p.kind == ConvPlan::Kind::transposed) {
    // A stride-1 transposed convolution is a forward one with the window flipped and padding d (k - 1) - p in
    // front (the library's pad_front); strided ones would multiply by zeros there, and a padding past d (k - 1)
    // would crop.
    for (int d = 0; d < 3; ++d) {
      if (p.stride[d] != 1)
        return Error{fmt::format("a transposed convolution of stride {} (the TMA path takes forward ones and "
                                 "transposed ones of stride 1)",
                                 per_dim(p.stride, p.dims))};
      if (p.padding[d] > p.dilation[d] * (p.kernel[d] - 1))
        return Error{fmt::format("a transposed convolution whose padding {} passes dilation x (kernel - 1) (the TMA "
                                 "path would have to crop)",
                                 per_dim(p.padding, p.dims))};
    }
  }
  if (groups != 1) return Error{fmt::format("groups={} (the TMA path takes dense layers)", groups)};
  // One tap: each input is read once, in place, by the gather kernel; the TMA path would write and read it
  // three times over and pass the output through NHWK as well, for as little math per byte as a
  // convolution has (KernelBench 87: about 56 GB moved against 17 GB).
  if (p.kernel[0] * p.kernel[1] * p.kernel[2] == 1 && !p.bf16)
    return Error{"a 1x1 window (the gather kernel reads each input once in place; the TMA path's packed copies would "
                 "move about three times the bytes for one tap)"};
  if (cin_g < 8)
    return Error{fmt::format("{} input channels (the TMA path packs at least 8: fewer would be mostly padding)", cin_g)};
  if (cout_g % 4 != 0)
    return Error{fmt::format("{} output channels (the TMA path's NHWK rows need a multiple of 4)", cout_g)};
  const std::size_t rank = static_cast<std::size_t>(p.dims) + 2;
  if (p.input_shape.size() != rank || p.output_shape.size() != rank)
    return Error{"the convolution's input or output shape is not in the trace"};
  const int64_t n = p.input_shape[0];
  if (n > 65535) return Error{fmt::format("a batch of {} (the TMA path's grid holds 65535 images)", n)};
  auto round_up = [](int64_t v, int64_t to) { return (v + to - 1) / to * to; };
  const int64_t in_vol = product(p.input_shape, 2, rank), out_vol = product(p.output_shape, 2, rank);
  if (in_vol * cin_g > INT32_MAX) return Error{"an image too large for the TMA path's 32-bit coordinates"};
  const int64_t ker_vol = p.kernel[0] * p.kernel[1] * p.kernel[2];
  // Strict: three TF32 copies of each channel in 128-byte rows of 32, or two with pairs (CIG_TMA_PAIRED: [big |
  // small] per block of 32); bf16 tensors: one bf16 copy, rows of 64.
  const int64_t parts = p.bf16 ? 1 : 3, channel_tile = p.bf16 ? 64 : 32, operand_bytes = p.bf16 ? 2 : 4;
  const int64_t c_packed = p.tma_paired && !p.bf16 ? 2 * round_up(cin_g, channel_tile)
                                                   : round_up(parts * cin_g, channel_tile);
  return TmaBuffers{.weight = round_up(cout_g * ker_vol * c_packed * operand_bytes, 256),
                    .image_in = round_up(in_vol * c_packed * operand_bytes, 256),
                    .image_out = round_up(out_vol * cout_g * 4, 256),
                    .images = n,
                    .out_vol = out_vol};
}

// Images per chunk, as the library counts them: the plan's CIG_TMA_CHUNK_IMAGES, or about 1 GiB of them.
int64_t chunk_images(const ConvPlan& p, const TmaBuffers& b) {
  const int64_t images = p.tma_chunk_images > 0 ? p.tma_chunk_images : kTmaChunkBytes / (b.image_in + b.image_out);
  return std::clamp<int64_t>(images, 1, b.images);
}

}  // namespace

Result<int64_t> conv_tma_workspace_bytes(const ConvPlan& p) {
  auto b = tma_buffers(p);
  if (!b) return b.error();
  const int64_t chunk = chunk_images(p, *b);
  if (chunk * b->out_vol > INT32_MAX) return Error{"an image too large for the TMA path's 32-bit coordinates"};
  // The NCHW store (the library's CIG_TMA_NCHW 1, which no seed changes) writes the output in place: the chunk's
  // NHWK buffer is counted for the chunk's size only, as the library counts it.
  const int64_t total = b->weight + chunk * b->image_in;
  if (total > kWorkspaceCeiling)
    return Error{fmt::format("the TMA path's packed copies ({} bytes) pass the judge's ceiling", total)};
  return total;
}

int64_t conv_workspace_bound(const ConvPlan& p) {
  const int64_t gather = conv_gather_workspace_bytes(p);
  if (p.path != ConvPlan::Path::tma_im2col) return gather;  // the direct path uses the gather kernel's layout
  auto tma = conv_tma_workspace_bytes(p);
  return tma ? std::max(gather, *tma) : gather;
}

int direct_tile_n(int64_t out_channels_per_group) {
  const int64_t c = out_channels_per_group;
  return c <= 16 ? 16 : c <= 24 ? 24 : c <= 32 ? 32 : 64;
}

std::string direct_path_refusal(const ConvPlan& p) {
  if (p.bf16) return "bf16 tensors (the direct path reads fp32)";
  const int64_t groups = std::max<int64_t>(p.groups, 1), cin_g = p.in_channels / groups;
  if (cin_g > 8) return fmt::format("{} input channels a group (the direct path is for at most 8)", cin_g);
  const int tile_n = direct_tile_n(p.out_channels / groups);
  const int64_t k = conv_phase_k(p);
  if (k > direct_max_k(tile_n))
    return fmt::format(
        "K = {} per phase (taps x channels; the direct path keeps at most {} in shared memory at {} output channels)",
        k, direct_max_k(tile_n), tile_n);
  return "";
}

namespace {
// Off the TMA path its knobs stay at the library's defaults.
void clear_tma_knobs(ConvPlan& p) {
  p.tma_paired = false;
  p.tma_tile_n = 128;
  p.tma_stages = 0;
  p.tma_min_ctas = 1;
}
}  // namespace

void choose_conv_path(ConvPlan& p, int64_t budget) {
  p.tma_chunk_images = 0;
  // KernelBench 55 (64 channels) on an H100: 12.50 ms unpaired, 10.60 paired; 63 (16 channels, where pairs
  // pad to 64 and multiply a third more) 22.85 against 26.22 (benchmarks/results.md, "Convolution").
  const int64_t cin_g = p.in_channels / std::max<int64_t>(p.groups, 1),
                cout_g = p.out_channels / std::max<int64_t>(p.groups, 1);
  p.tma_paired = !p.bf16 && cin_g % 32 == 0;
  // The narrowest tile that covers a group's output channels: a wider one multiplies zeros. KernelBench 57 (64 ->
  // 64, H100): 40.92 ms at 128 wide (paired: 27.07), 14.84 at 64, 13.10 with 4 stages (65: 6.98 against 6.55);
  // 58 (16 output channels) 6.68 at 64, 3.77 at 16; 70 (24) 41.3 at 64, 26.9 at 32; 71 (32) 4.70 at 64, 2.89 at
  // 32. bf16 tensors keep 64 at the narrowest: the narrower tiles were judged in strict only.
  p.tma_tile_n = cout_g <= 16 && !p.bf16 ? 16 : cout_g <= 32 && !p.bf16 ? 32 : cout_g <= 64 ? 64 : 128;
  p.tma_stages = p.tma_tile_n <= 64 ? 4 : 0;
  // The 64 x 128 tile: 4 stages and ptxas held to two CTAs' registers, so two share an SM. KernelBench level 2's 4
  // (64 -> 128 channels, paired, H100): 15.16 ms at one CTA per SM, 10.9 at two; level 2's 1: 5.585 -> 4.484;
  // level 1's 63 (16 -> 128, unpaired): 22.05 -> 17.59. bf16 tensors keep the carve-out: not measured there.
  p.tma_min_ctas = 1;
  if (p.tma_tile_n == 128 && !p.bf16) {
    p.tma_stages = 4;
    p.tma_min_ctas = 2;
  }
  auto tma = conv_tma_workspace_bytes(p);
  // Fewer than 8 input channels a group (which the TMA path does not pack) on the direct path where it takes the
  // layer, else the gather kernel. At 8 the direct path was measured against the TMA path only (below), so a layer
  // the TMA path refuses keeps the gather kernel there.
  if (!tma) {
    clear_tma_knobs(p);
    p.path_reason = tma.error().message;
    p.path = cin_g < 8 && direct_path_refusal(p).empty() ? ConvPlan::Path::direct : ConvPlan::Path::gather;
    p.direct_tile_n = direct_tile_n(cout_g);
    return;
  }
  // 8 input channels a group, the fewest the TMA path packs: the direct path where it takes the layer. KernelBench
  // level 2's 8 (8 -> 16 channels, 3x3x3, H100): 4.62 ms on the TMA path's 16-wide tile, 1.94 direct; 67 (8 -> 64,
  // 3x3): 5.79 against 4.74 (benchmarks/results.md, "Convolution").
  if (cin_g == 8 && direct_path_refusal(p).empty()) {
    clear_tma_knobs(p);
    p.path_reason = "8 input channels a group (the direct path is faster than the TMA path's 8-channel packing)";
    p.path = ConvPlan::Path::direct;
    p.direct_tile_n = direct_tile_n(cout_g);
    return;
  }
  p.path = ConvPlan::Path::tma_im2col;
  p.path_reason.clear();
  const int64_t gather = conv_gather_workspace_bytes(p);
  if (std::max(*tma, gather) <= budget) return;
  // Fewer images per chunk: as many as fit beside the packed weight (the gather kernel's bound must fit too,
  // since CUTLASS may still send the shape there at run time).
  const TmaBuffers b = *tma_buffers(p);
  const int64_t fit = (budget - b.weight) / b.image_in;
  if (fit >= 1 && gather <= budget) {
    p.tma_chunk_images = fit;
    return;
  }
  p.path = ConvPlan::Path::gather;
  clear_tma_knobs(p);
  p.path_reason = fmt::format("the TMA path's packed copies of one image ({} bytes with the packed weight) would not "
                              "fit what the judge's workspace cap leaves for the convolution ({} bytes)",
                              std::max(b.weight + b.image_in, gather), std::max<int64_t>(budget, 0));
}

std::string conv_spec_line(const ConvPlan& p) {
  return fmt::format("constexpr ConvSpec kSpec = {{{}, {}, {}, {}, {}, {}}};", p.dims,
                     p.kind == ConvPlan::Kind::transposed ? "true" : "false", p.groups, triple(p.stride),
                     triple(p.padding), triple(p.dilation));
}

namespace {

std::string reads_enum(ConvEpilogueOperand::Reads r) {
  switch (r) {
    case ConvEpilogueOperand::Reads::channel: return "EpilogueReads::channel";
    case ConvEpilogueOperand::Reads::number: return "EpilogueReads::number";
    case ConvEpilogueOperand::Reads::element: return "EpilogueReads::element";
  }
  return "";
}

// epilogue()'s body: each operand loaded once, then one statement per op of forward() after the convolution.
std::string epilogue_body(const ConvPlan& plan) {
  std::string body;
  for (std::size_t i = 0; i < plan.operands.size(); ++i) {
    const auto& o = plan.operands[i];
    const bool channel = o.reads == ConvEpilogueOperand::Reads::channel;
    const bool element = o.reads == ConvEpilogueOperand::Reads::element;
    body += fmt::format("  const float e{0} = e.p[{0}][{1}];  // {2}{3}\n", i, channel ? "ch" : element ? "at" : "0",
                        o.name, channel ? "[ch]" : element ? ", the output's element" : ", one number");
  }
  for (const auto& s : plan.epilogue) body += fmt::format("  const float {} = {};  // {}\n", s.value, s.expr, s.what);
  return body + fmt::format("  return {};  // set by the seed from forward()'s ops after the convolution", plan.result);
}

// The lines of the library's epilogue block the conv_epilogue seed sets (kInputs too, where the tensors are).
Status set_epilogue(std::string& library, const ConvPlan& plan) {
  std::vector<std::string> operands;
  for (const auto& o : plan.operands) operands.push_back(fmt::format("{{{}, {}}}", o.input, reads_enum(o.reads)));
  operands.push_back("{-1, EpilogueReads::number}");
  constexpr const char* kSeedFile = "src/seed/routes/conv/conv_route.cpp";
  return replace_library_lines(
      library,
      {{"constexpr ConvInputs kInputs = {0, 0, 1, 2};",
        fmt::format("constexpr ConvInputs kInputs = {{{}, {}, {}, {}}};  // set by the seed", plan.num_contract_inputs,
                    plan.x_input, plan.weight_input, plan.bias_input)},
       {"constexpr int kNumEpilogueOperands = 0;",
        fmt::format("constexpr int kNumEpilogueOperands = {};  // set by the seed", plan.operands.size())},
       {"constexpr EpilogueOperand kEpilogueOperands[kNumEpilogueOperands + 1] = { {-1, EpilogueReads::number} };",
        fmt::format("constexpr EpilogueOperand kEpilogueOperands[kNumEpilogueOperands + 1] = {{{}}};",
                    fmt::join(operands, ", "))},
       // The pointwise table's clamps keep NaN (src/seed/pointwise_ops.cpp), as the other seeds define them.
       {"__device__ __forceinline__ float epilogue(",
        "__device__ __forceinline__ float clamp_lo(float v, float lo) { return v < lo ? lo : v; }\n"
        "__device__ __forceinline__ float clamp_hi(float v, float hi) { return v > hi ? hi : v; }\n"
        "__device__ __forceinline__ float epilogue("},
       {"  return y;  // the library's epilogue: none", epilogue_body(plan)}},
      kLibraryFile, kSeedFile);
}

}  // namespace

namespace {

// The TMA path's knobs the plan sets (choose_conv_path), each line saying why.
std::vector<LibraryLine> tma_path_lines(const ConvPlan& plan) {
  const int64_t groups = std::max<int64_t>(plan.groups, 1);
  std::vector<LibraryLine> lines;
  if (plan.tma_chunk_images > 0)
    lines.push_back({"#define CIG_TMA_CHUNK_IMAGES 0",
                     fmt::format("#define CIG_TMA_CHUNK_IMAGES {}  // set by the seed: as many images' packed copies as "
                                 "fit what the judge's workspace cap leaves for the convolution",
                                 plan.tma_chunk_images)});
  if (plan.tma_paired)
    lines.push_back({"#define CIG_TMA_PAIRED 0",
                     fmt::format("#define CIG_TMA_PAIRED 1  // set by the seed: {} input channels, whole blocks of 32",
                                 plan.in_channels / groups)});
  if (plan.tma_tile_n != 128)
    lines.push_back({"#define CIG_TMA_TILE_N 128",
                     fmt::format("#define CIG_TMA_TILE_N {}  // set by the seed: {} output channels", plan.tma_tile_n,
                                 plan.out_channels / groups)});
  if (plan.tma_stages != 0) {
    const std::string ctas = plan.tma_min_ctas > 1 ? std::to_string(plan.tma_min_ctas) : "three or more";
    lines.push_back({"#define CIG_TMA_STAGES 0",
                     fmt::format("#define CIG_TMA_STAGES {}  // set by the seed: room for {} CTAs of the {}-wide tile "
                                 "per SM",
                                 plan.tma_stages, ctas, plan.tma_tile_n)});
  }
  if (plan.tma_min_ctas != 1)
    lines.push_back({"#define CIG_TMA_MIN_CTAS 1",
                     fmt::format("#define CIG_TMA_MIN_CTAS {}  // set by the seed: registers for {} CTAs per SM",
                                 plan.tma_min_ctas, plan.tma_min_ctas)});
  return lines;
}

}  // namespace

Result<std::string> conv_library_text(const ConvPlan& plan) {
  std::string library = kLibrary;
  if (auto s = replace_library_line(library, kSpecLine,
                                    conv_spec_line(plan) + "  // set by the seed from the traced module",
                                    kLibraryFile, "src/seed/routes/conv/conv_route.cpp");
      !s)
    return s.error();
  if (plan.num_contract_inputs != 0)
    if (auto s = set_epilogue(library, plan); !s) return s.error();
  if (plan.bf16)
    if (auto s = replace_library_line(library, "#define CIG_IO_BF16 0",
                                      "#define CIG_IO_BF16 1  // set by the seed: the module's tensors are bf16",
                                      kLibraryFile, "src/seed/routes/conv/conv_route.cpp");
        !s)
      return s.error();
  if (plan.path == ConvPlan::Path::tma_im2col)
    if (auto s = replace_library_lines(library, tma_path_lines(plan), kLibraryFile, "src/seed/routes/conv/conv_route.cpp");
        !s)
      return s.error();
  if (plan.path != ConvPlan::Path::tma_im2col)
    if (auto s = replace_library_line(library, "#define CIG_TMA 1",
                                      "#define CIG_TMA 0  // set by the seed: " + plan.path_reason, kLibraryFile,
                                      "src/seed/routes/conv/conv_route.cpp");
        !s)
      return s.error();
  if (plan.path == ConvPlan::Path::direct) {
    const int64_t groups = std::max<int64_t>(plan.groups, 1);
    if (auto s = replace_library_lines(
            library,
            {{"#define CIG_DIRECT 0",
              fmt::format("#define CIG_DIRECT 1  // set by the seed: {} input channels a group, K = {} per phase",
                          plan.in_channels / groups, conv_phase_k(plan))},
             {"#define CIG_DIRECT_TILE_N 64",
              fmt::format("#define CIG_DIRECT_TILE_N {}  // set by the seed: {} output channels a group",
                          plan.direct_tile_n, plan.out_channels / groups)}},
            kLibraryFile, "src/seed/routes/conv/conv_route.cpp");
        !s)
      return s.error();
  }
  return library;
}

Result<std::string> emit_conv(const ConvPlan& plan, const CommentText& problem) {
  auto library = conv_library_text(plan);
  if (!library) return library.error();
  const std::string epilogue_text =
      plan.has_epilogue()
          ? "// Then the epilogue: the pointwise ops forward() applies after the convolution run in registers on\n"
            "// each output value before it is stored (epilogue(), set by the seed with kInputs and the operands\n"
            "// it reads), so the convolution's output never makes a round trip through memory.\n"
          : "";
  const std::string header = fmt::format(
      "// Seed kernel for {0}, written by cutegen without an LLM (docs/seed.md):\n"
      "//   {1} = {4}\n"
      "// The kernel is the library's implicit-GEMM convolution ({2}),\n"
      "// as it is below but for kSpec, which the seed sets from the module (what the tensors' shapes cannot\n"
      "// say: the stride, padding, dilation, groups and whether it is transposed); every size comes from the\n"
      "// descriptors at run time.\n"
      "{3}"
      "//\n",
      problem.str(), plan.has_epilogue() ? "out" : "y", kLibraryFile, epilogue_text, plan.pattern);
  return header + *library;
}

}  // namespace cutegen::seed
