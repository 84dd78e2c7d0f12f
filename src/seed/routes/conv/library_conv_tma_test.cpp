// The library convolution's TMA-im2col path (library/conv_implicit_gemm.cu with CIG_TMA 1):
// which convolutions it takes and what it asks of the workspace, planned by the built library's host code
// on this CPU. Whether it computes the right numbers is the GPU's to say (scripts/gpu-check, the
// conv_implicit_gemm entries of attacks/manifest.json with the knob set).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/fs.h"
#include "common/slow_compile_tests.h"
#include "seed/routes/conv/conv_route.h"
#include "seed/testdata/host_library.h"
#include "seed/testdata/real_compiler.h"

namespace cutegen::seed {
namespace {

namespace fs = std::filesystem;
using testing::RealCompiler;

std::string library_conv() {
  auto text = read_file(fs::path(CUTEGEN_SOURCE_DIR) / "library/conv_implicit_gemm.cu");
  EXPECT_TRUE(text.ok());
  return text.ok() ? *text : std::string();
}

// The seed's plan of a 3x3 layer with padding 1 (the library's own kSpec) from x to y, before its path is chosen.
ConvPlan plan_3x3(std::vector<int64_t> x, int64_t filters, std::vector<int64_t> y) {
  ConvPlan p;
  p.in_channels = x[1];
  p.out_channels = filters;
  p.kernel[1] = p.kernel[2] = 3;
  p.padding[1] = p.padding[2] = 1;
  p.input_shape = std::move(x);
  p.output_shape = std::move(y);
  return p;
}

// The built library's host planning on this CPU: its cutegen_workspace_bytes for (x, weight) -> y.
#ifdef CUTEGEN_CUDA_LIB_DIR
struct ConvHostPlanning {
  testing::HostOnlyLibrary lib;
  testing::HostOnlyLibrary::WorkspaceBytes workspace_bytes = nullptr;
  std::string error;
  explicit ConvHostPlanning(const fs::path& library) : lib(library), workspace_bytes(lib.workspace_bytes()) {
    error = !lib.error.empty() ? lib.error : workspace_bytes ? "" : "the library has no cutegen_workspace_bytes";
  }
  size_t operator()(cutegen_tensor x, cutegen_tensor w, cutegen_tensor y) const {
    const cutegen_tensor in[2] = {x, w};
    return workspace_bytes(in, 2, &y, 1);
  }
};
#endif

// The path is the library's default (judged on the H200, benchmarks/results.md); the seed sets 0 where the
// convolution is not the path's or its packed copies would not fit (conv_path_test.cpp), and `cutegen tune`
// may try either.
TEST(LibraryConvTma, TheKnobExistsAndIsOnByDefault) {
  const std::string src = library_conv();
  EXPECT_NE(src.find("// cutegen:knob CIG_TMA in {0, 1}\n#ifndef CIG_TMA\n#define CIG_TMA 1\n#endif"), std::string::npos);
  EXPECT_NE(src.find("#include <cutlass/conv/kernel/conv_universal.hpp>"), std::string::npos);
}

// Through the real compile stage (source rules, nvcc, the library and CuTe checks: the pack and unpack
// kernels index CuTe tensors), then the host planning: a dense 3x3 layer gets the packed input (C' = 3 x 64
// = 192 channels) and the packed weight in the workspace (the output is stored NCHW in place, the library's
// default); what the path leaves to the gather
// kernel (fewer than 8 input channels, output channels not a multiple of 4) gets the gather kernel's
// table and split weight. Large batches run in chunks of images through one chunk's buffers.
TEST(SeedCompile, LibraryConvTmaPathBuildsAndPlansWhichConvolutionsItTakes) {
  CUTEGEN_SLOW_COMPILE_TEST("CUTLASS's SM90 convolution, minutes of nvcc; the GPU check judges it");
  RealCompiler compiler;
  auto out = compiler.build_ok("#define CIG_TMA 1\n" + library_conv(), "conv_tma.cu");
  ASSERT_TRUE(out);
#ifndef CUTEGEN_CUDA_LIB_DIR
  GTEST_SKIP() << testing::kNoHostCuda;
#else
  using testing::fp32;
  const ConvHostPlanning plan(out->library);
  ASSERT_TRUE(plan.error.empty()) << plan.error;
  // The seed's planning (conv_tma_workspace_bytes, which chains size their workspace by) asks what the built
  // kernel asks, for the layers the path takes.
  auto seed_plan = [](std::vector<int64_t> x, int64_t filters, std::vector<int64_t> y) {
    auto bytes = conv_tma_workspace_bytes(plan_3x3(std::move(x), filters, std::move(y)));
    EXPECT_TRUE(bytes.ok()) << bytes.error().message;
    return bytes.ok() ? static_cast<size_t>(*bytes) : size_t{0};
  };
  EXPECT_EQ(plan(fp32({8, 64, 256, 256}), fp32({128, 64, 3, 3}), fp32({8, 128, 256, 256})),
            seed_plan({8, 64, 256, 256}, 128, {8, 128, 256, 256}));
  EXPECT_EQ(plan(fp32({16, 16, 1024, 1024}), fp32({128, 16, 3, 3}), fp32({16, 128, 1024, 1024})),
            seed_plan({16, 16, 1024, 1024}, 128, {16, 128, 1024, 1024}));
  EXPECT_EQ(plan(fp32({2, 20, 12, 12}), fp32({32, 20, 3, 3}), fp32({2, 32, 12, 12})),
            seed_plan({2, 20, 12, 12}, 32, {2, 32, 12, 12}));
  // problems/conv2d_3x3.py: 8 x 64 x 256 x 256, 128 filters of 3x3, padding 1 (the library's own kSpec).
  const size_t packed_x = size_t{8} * 256 * 256 * 192 * 4, packed_w = size_t{128} * 9 * 192 * 4;
  EXPECT_EQ(plan(fp32({8, 64, 256, 256}), fp32({128, 64, 3, 3}), fp32({8, 128, 256, 256})), packed_x + packed_w);
  // KernelBench 63's layer (16 images of 16 x 1024 x 1024, padding 1 here): 16 x 805 MB whole, so one image
  // per chunk (counted with its NHWK output, which the NCHW store does not need) -- the packed weight (128 x 9 x
  // C' = 64), then one image's packed input.
  EXPECT_EQ(plan(fp32({16, 16, 1024, 1024}), fp32({128, 16, 3, 3}), fp32({16, 128, 1024, 1024})),
            size_t{128} * 9 * 64 * 4 + size_t{1024} * 1024 * 64 * 4);
  // 20 channels: C' = 60 rounded up to 64; 12 x 12 outputs.
  EXPECT_EQ(plan(fp32({2, 20, 12, 12}), fp32({32, 20, 3, 3}), fp32({2, 32, 12, 12})),
            size_t{2} * 144 * 64 * 4 + size_t{32} * 9 * 64 * 4);
  // 3 input channels: most of C' would be padding, so the gather kernel (one phase, K = 27 -> kmax 32, a
  // 64-wide tile): its table (32 x 16 bytes) and split weight (2 x 32 x 64 floats).
  EXPECT_EQ(plan(fp32({2, 3, 12, 12}), fp32({32, 3, 3, 3}), fp32({2, 32, 12, 12})), size_t{32} * 16 + 2 * 32 * 64 * 4);
  // 30 filters: the NHWK rows would not be 16-byte aligned for the TMA store, so the gather kernel: K = 180
  // -> kmax 192 table rows of 16 bytes, split weight 2 x 192 x 64 floats.
  EXPECT_EQ(plan(fp32({2, 20, 12, 12}), fp32({30, 20, 3, 3}), fp32({2, 30, 12, 12})), size_t{192} * 16 + 2 * 192 * 64 * 4);
  // Groups (the library's kSpec has 1: a grouped weight does not fit it) and strides are the seed's to set;
  // the plan refuses a weight of the wrong shape outright.
  EXPECT_EQ(plan(fp32({2, 20, 12, 12}), fp32({32, 10, 3, 3}), fp32({2, 32, 12, 12})), 0u);
  // A shape the plan refuses outright stays refused (0).
  EXPECT_EQ(plan(fp32({2, 20, 12, 12}), fp32({32, 20, 3, 3}), fp32({2, 32, 11, 12})), 0u);
#endif
}

// The seed's TMA choices as the built kernel sizes them: with [big | small] pairs (CIG_TMA_PAIRED 1) a 64-channel
// layer packs C' = 128 instead of 192, and the seed's plan (tma_paired) asks the same as the kernel with its NCHW
// store (CIG_TMA_NCHW 1, the default); with NHWK tiles and the transposing pass (CIG_TMA_NCHW 0) the kernel asks
// one chunk's NHWK buffer more.
TEST(SeedCompile, LibraryConvTmaPathPairsAndStoresNchwAsPlanned) {
  CUTEGEN_SLOW_COMPILE_TEST("CUTLASS's SM90 convolution, minutes of nvcc; the GPU check judges it");
  RealCompiler compiler;
  auto nhwk = compiler.build_ok("#define CIG_TMA 1\n#define CIG_TMA_PAIRED 1\n#define CIG_TMA_NCHW 0\n" + library_conv(),
                                "conv_nhwk.cu");
  ASSERT_TRUE(nhwk);
  auto nchw = compiler.build_ok("#define CIG_TMA 1\n#define CIG_TMA_PAIRED 1\n" + library_conv(), "conv_paired.cu");
  ASSERT_TRUE(nchw);
#ifndef CUTEGEN_CUDA_LIB_DIR
  GTEST_SKIP() << testing::kNoHostCuda;
#else
  using testing::fp32;
  const size_t packed_x = size_t{8} * 256 * 256 * 128 * 4, packed_w = size_t{128} * 9 * 128 * 4,
               nhwk_bytes = size_t{8} * 256 * 256 * 128 * 4;
  ConvPlan p = plan_3x3({8, 64, 256, 256}, 128, {8, 128, 256, 256});
  choose_conv_path(p, kWorkspaceCeiling);
  ASSERT_TRUE(p.tma_paired);
  auto planned = conv_tma_workspace_bytes(p);
  ASSERT_TRUE(planned.ok()) << planned.error().message;
  EXPECT_EQ(static_cast<size_t>(*planned), packed_x + packed_w);
  const ConvHostPlanning storing_nchw(nchw->library);
  ASSERT_TRUE(storing_nchw.error.empty()) << storing_nchw.error;
  EXPECT_EQ(storing_nchw(fp32({8, 64, 256, 256}), fp32({128, 64, 3, 3}), fp32({8, 128, 256, 256})), *planned);
  const ConvHostPlanning storing_nhwk(nhwk->library);
  ASSERT_TRUE(storing_nhwk.error.empty()) << storing_nhwk.error;
  EXPECT_EQ(storing_nhwk(fp32({8, 64, 256, 256}), fp32({128, 64, 3, 3}), fp32({8, 128, 256, 256})),
            packed_x + packed_w + nhwk_bytes);
#endif
}

// A stride-1 transposed convolution takes the path as the forward convolution with the window flipped: here a
// 3 x 3 window, padding 1, dilation 2 along W (2 in front of W, and 2 plus the output_padding behind), one image
// per chunk (CIG_TMA_CHUNK_IMAGES, as a seed sets it where the cap leaves little). The built kernel's host
// planning asks what the seed's planning asks, plus the NHWK buffer it is built with here; three input channels
// stay on the gather kernel.
TEST(SeedCompile, LibraryConvTmaPathTakesStrideOneTransposedConvolutions) {
  CUTEGEN_SLOW_COMPILE_TEST("CUTLASS's SM90 convolution, minutes of nvcc; the GPU check judges it");
  std::string src = library_conv();
  const std::string forward_spec = "constexpr ConvSpec kSpec = {2, false, 1, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}};";
  const auto at = src.find(forward_spec);
  ASSERT_NE(at, std::string::npos) << "the library's kSpec line changed";
  src.replace(at, forward_spec.size(), "constexpr ConvSpec kSpec = {2, true, 1, {1, 1, 1}, {0, 1, 1}, {1, 1, 2}};");
  RealCompiler compiler;
  // NHWK tiles (CIG_TMA_NCHW 0), whose buffer shows the output's shape in the workspace: the output_padding read.
  auto out = compiler.build_ok("#define CIG_TMA 1\n#define CIG_TMA_CHUNK_IMAGES 1\n#define CIG_TMA_NCHW 0\n" + src,
                               "conv_tma_transposed.cu");
  ASSERT_TRUE(out);
#ifndef CUTEGEN_CUDA_LIB_DIR
  GTEST_SKIP() << testing::kNoHostCuda;
#else
  using testing::fp32;
  const ConvHostPlanning plan(out->library);
  ASSERT_TRUE(plan.error.empty()) << plan.error;
  auto seed_plan = [](std::vector<int64_t> x, std::vector<int64_t> y) {
    ConvPlan p;
    p.kind = ConvPlan::Kind::transposed;
    p.in_channels = x[1];
    p.out_channels = y[1];
    p.kernel[1] = p.kernel[2] = 3;
    p.padding[1] = p.padding[2] = 1;
    p.dilation[2] = 2;
    p.tma_chunk_images = 1;
    p.input_shape = std::move(x);
    p.output_shape = std::move(y);
    auto bytes = conv_tma_workspace_bytes(p);
    EXPECT_TRUE(bytes.ok()) << bytes.error().message;
    return bytes.ok() ? static_cast<size_t>(*bytes) : size_t{0};
  };
  // 20 channels (C' = 64), 32 filters; W: 12 + 2 x 2 - 2 = 14 outputs. The packed weight, then one image's
  // packed input and NHWK output.
  const size_t packed_w = size_t{32} * 9 * 64 * 4, packed_x = size_t{144} * 64 * 4;
  EXPECT_EQ(plan(fp32({2, 20, 12, 12}), fp32({20, 32, 3, 3}), fp32({2, 32, 12, 14})),
            packed_w + packed_x + size_t{12} * 14 * 32 * 4);
  EXPECT_EQ(plan(fp32({2, 20, 12, 12}), fp32({20, 32, 3, 3}), fp32({2, 32, 12, 14})),
            seed_plan({2, 20, 12, 12}, {2, 32, 12, 14}) + size_t{12} * 14 * 32 * 4);
  // output_padding 1 along W: 15 outputs, one more column behind.
  EXPECT_EQ(plan(fp32({2, 20, 12, 12}), fp32({20, 32, 3, 3}), fp32({2, 32, 12, 15})),
            packed_w + packed_x + size_t{12} * 15 * 32 * 4);
  EXPECT_EQ(plan(fp32({2, 20, 12, 12}), fp32({20, 32, 3, 3}), fp32({2, 32, 12, 15})),
            seed_plan({2, 20, 12, 12}, {2, 32, 12, 15}) + size_t{12} * 15 * 32 * 4);
  // 3 input channels: the gather kernel (one phase of 9 taps, K = 27 -> kmax 32; a 64-wide tile): its table and
  // split weight.
  EXPECT_EQ(plan(fp32({2, 3, 12, 12}), fp32({3, 32, 3, 3}), fp32({2, 32, 12, 14})), size_t{32} * 16 + 2 * 32 * 64 * 4);
  // A forward convolution's weight (filters first) is not this kernel's: refused.
  EXPECT_EQ(plan(fp32({2, 20, 12, 12}), fp32({32, 20, 3, 3}), fp32({2, 32, 12, 14})), 0u);
#endif
}

// bf16 tensors (CIG_IO_BF16 1, as the seed sets for a bf16 module): the TMA path packs one bf16 copy of each
// channel (20 channels round up to a 64-wide row) and stores the output NCHW in place; fp32 tensors are not this
// kernel's, and what the TMA path does not take has no gather kernel to fall back to.
TEST(SeedCompile, LibraryConvTmaPathTakesBf16Tensors) {
  CUTEGEN_SLOW_COMPILE_TEST("CUTLASS's SM90 convolution, minutes of nvcc; the GPU check judges it");
  RealCompiler compiler;
  auto out = compiler.build_ok("#define CIG_IO_BF16 1\n" + library_conv(), "conv_tma_bf16.cu");
  ASSERT_TRUE(out);
#ifndef CUTEGEN_CUDA_LIB_DIR
  GTEST_SKIP() << testing::kNoHostCuda;
#else
  using testing::fp32;
  auto bf16 = [](std::vector<int64_t> shape) {
    cutegen_tensor t = fp32(std::move(shape));
    t.dtype = CUTEGEN_BFLOAT16;
    return t;
  };
  const ConvHostPlanning plan(out->library);
  ASSERT_TRUE(plan.error.empty()) << plan.error;
  const size_t expected = size_t{32} * 9 * 64 * 2 + 2 * size_t{144} * 64 * 2;
  EXPECT_EQ(plan(bf16({2, 20, 12, 12}), bf16({32, 20, 3, 3}), bf16({2, 32, 12, 12})), expected);
  ConvPlan p = plan_3x3({2, 20, 12, 12}, 32, {2, 32, 12, 12});
  p.bf16 = true;
  auto seed_bytes = conv_tma_workspace_bytes(p);
  ASSERT_TRUE(seed_bytes.ok()) << seed_bytes.error().message;
  EXPECT_EQ(static_cast<size_t>(*seed_bytes), expected);
  EXPECT_EQ(plan(fp32({2, 20, 12, 12}), fp32({32, 20, 3, 3}), fp32({2, 32, 12, 12})), 0u);
  EXPECT_EQ(plan(bf16({2, 3, 12, 12}), bf16({32, 3, 3, 3}), bf16({2, 32, 12, 12})), 0u);
#endif
}

// The other precision policies (CIG_PRECISION 1: tf32, 2: bf16) pack each channel once: problems/
// conv2d_3x3.py's 64 channels stay 64 (one 128-byte row of bf16; two of TF32), so the packed input is a
// third of the strict path's (bf16: a sixth), and 20 channels round up to 32 (TF32) or 64 (bf16). What the
// TMA path leaves to the gather kernel is the same under every policy.
TEST(SeedCompile, LibraryConvTmaPathPacksOncePerChannelUnderTf32AndBf16) {
  CUTEGEN_SLOW_COMPILE_TEST("CUTLASS's SM90 convolution twice, minutes of nvcc each; the GPU check judges it");
  for (const int policy : {1, 2}) {
    SCOPED_TRACE("CIG_PRECISION " + std::to_string(policy));
    RealCompiler compiler;
    auto out = compiler.build_ok("#define CIG_TMA 1\n#define CIG_PRECISION " + std::to_string(policy) + "\n" +
                                     library_conv(),
                                 "conv_tma_policy.cu");
    ASSERT_TRUE(out);
#ifndef CUTEGEN_CUDA_LIB_DIR
    GTEST_SKIP() << testing::kNoHostCuda;
#else
    using testing::fp32;
    const ConvHostPlanning plan(out->library);
    ASSERT_TRUE(plan.error.empty()) << plan.error;
    const size_t bytes = policy == 2 ? 2 : 4;
    EXPECT_EQ(plan(fp32({8, 64, 256, 256}), fp32({128, 64, 3, 3}), fp32({8, 128, 256, 256})),
              size_t{8} * 256 * 256 * 64 * bytes + size_t{128} * 9 * 64 * bytes);
    const size_t c_packed = policy == 2 ? 64 : 32;
    EXPECT_EQ(plan(fp32({2, 20, 12, 12}), fp32({32, 20, 3, 3}), fp32({2, 32, 12, 12})),
              size_t{2} * 144 * c_packed * bytes + size_t{32} * 9 * c_packed * bytes);
    EXPECT_EQ(plan(fp32({2, 3, 12, 12}), fp32({32, 3, 3, 3}), fp32({2, 32, 12, 12})), size_t{32} * 16 + 2 * 32 * 64 * 4);
#endif
  }
}

}  // namespace
}  // namespace cutegen::seed
