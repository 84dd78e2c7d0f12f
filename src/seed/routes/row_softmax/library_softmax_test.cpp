// The row_softmax route's library kernels: which row softmaxes get library/softmax_ticket.cu or
// softmax_cluster.cu as their seed (with kLogSoftmax set), which keep the row kernel and why.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "compile/source_rules.h"
#include "seed/testdata/graph_builders.h"
#include "tune/knobs.h"

using namespace cutegen;
using namespace cutegen::seed;
using json = nlohmann::json;
using namespace cutegen::seed::testing;

namespace {

// op(x, dim=-1) of one (rows, n) fp32 input; `extra_input` adds an unused second forward argument.
json row_softmax_graph(const std::string& op, int64_t rows, int64_t n, bool extra_input = false) {
  json nodes = {input(0, "x", {rows, n})};
  if (extra_input) nodes.push_back(input(1, "unused", {rows, n}));
  const int id = static_cast<int>(nodes.size());
  nodes.push_back(node(id, op, {ref(0)}, {{"dim", -1}}, {rows, n}));
  return graph(nodes, id, extra_input ? 2 : 1);
}

TEST(LibrarySoftmaxRoute, KernelBenchSizeRowsAreTheLibraryTicketSoftmax) {
  for (const std::string op : {"softmax", "log_softmax"}) {
    SCOPED_TRACE(op);
    auto m = match(row_softmax_graph(op, 4096, 393216));
    ASSERT_TRUE(m.plan_as<RowSoftmaxPlan>()) << m.reason;
    EXPECT_EQ(library_softmax_refusal(*m.plan_as<RowSoftmaxPlan>()), "");
    EXPECT_EQ(library_softmax_kernel(*m.plan_as<RowSoftmaxPlan>()), LibrarySoftmax::ticket);
    EXPECT_EQ(m.description(), "row softmax (the library's ticket softmax) y = " + op + "(x, dim=-1)");
    EXPECT_EQ(m.pattern(), "library ticket softmax: " + op + "(x, dim=-1)");  // bench's seed column
    const std::string src = seed_source(row_softmax_graph(op, 4096, 393216));
    EXPECT_TRUE(contains(src, "// Seed kernel for")) << src.substr(0, 2000);
    EXPECT_TRUE(contains(src, "(4096 x 393216 when traced)")) << src.substr(0, 2000);
    EXPECT_TRUE(contains(src, "rows of 393216 values (at least 65536)")) << src.substr(0, 2000);
    EXPECT_TRUE(contains(src, "(at most 80 of\n// 8192 values)")) << src.substr(0, 2000);
    // Then the library file itself, its own first line, with the operation written in.
    EXPECT_TRUE(contains(src, "// Library kernel: y = softmax(x, dim=-1) for a contiguous fp32 tensor (..., N), any N, "
                              "with each row read\n// from DRAM exactly once, in the order"));
    EXPECT_TRUE(contains(src, op == "log_softmax" ? "constexpr bool kLogSoftmax = true;  // set by the seed: log_softmax"
                                                  : "constexpr bool kLogSoftmax = false;  // set by the seed: softmax"));
    EXPECT_EQ(cutegen::testing::count(src, "constexpr bool kLogSoftmax"), 1);
    EXPECT_TRUE(contains(src, "TKS_THREADS"));
    EXPECT_FALSE(contains(src, "SMC_THREADS")) << "the cluster kernel";
    EXPECT_FALSE(contains(src, "SMX_THREADS")) << "the row kernel's template";
  }
}

// Rows the ticket kernel's chunks cannot hold -- not of 16-byte vectors, or more chunks than 16 CTAs' smallest
// stage count -- take the cluster kernel, whose streaming path is the better two-read kernel.
TEST(LibrarySoftmaxRoute, RowsTheTicketChunksCannotHoldAreTheClusterSoftmax) {
  struct Case {
    int64_t rows, n;
    LibrarySoftmax kernel;
  };
  for (const Case& c : {Case{1000, 100003, LibrarySoftmax::cluster},   // N % 4 != 0
                        Case{256, 100002, LibrarySoftmax::cluster},    // even, still not 16-byte vectors
                        Case{512, 100004, LibrarySoftmax::ticket},     // a short last chunk
                        Case{256, 100004, LibrarySoftmax::cluster},    // 3328 chunks in all: too few to spread
                        Case{16, 65536, LibrarySoftmax::cluster},      // 128 chunks in all
                        Case{64, 80 * 8192, LibrarySoftmax::ticket},   // the most chunks a row
                        Case{64, 80 * 8192 + 4, LibrarySoftmax::cluster},
                        Case{16, 4194304, LibrarySoftmax::cluster}}) {  // problems/softmax_long_rows.py
    SCOPED_TRACE(c.n);
    auto m = match(row_softmax_graph("softmax", c.rows, c.n));
    ASSERT_TRUE(m.plan_as<RowSoftmaxPlan>()) << m.reason;
    EXPECT_EQ(library_softmax_refusal(*m.plan_as<RowSoftmaxPlan>()), "");
    EXPECT_EQ(library_softmax_kernel(*m.plan_as<RowSoftmaxPlan>()), c.kernel);
    const std::string src = seed_source(row_softmax_graph("softmax", c.rows, c.n));
    const bool ticket = c.kernel == LibrarySoftmax::ticket;
    EXPECT_EQ(contains(src, "TKS_THREADS"), ticket);
    EXPECT_EQ(contains(src, "SMC_THREADS"), !ticket);
    EXPECT_EQ(m.pattern(), std::string(ticket ? "library ticket softmax: " : "library cluster softmax: ") +
                               "softmax(x, dim=-1)");
    EXPECT_EQ(contains(src, "The kernel is the library's cluster softmax, library/softmax_cluster.cu"), !ticket);
  }
}

TEST(LibrarySoftmaxRoute, ShortRowsAndOtherOperandsKeepTheRowKernelAndSayWhy) {
  auto short_rows = match(row_softmax_graph("softmax", 4096, 65535));
  ASSERT_TRUE(short_rows.plan_as<RowSoftmaxPlan>()) << short_rows.reason;
  EXPECT_EQ(library_softmax_refusal(*short_rows.plan_as<RowSoftmaxPlan>()),
            "rows of 65535 values, fewer than 65536: the row kernel's second read still comes from the L2 (and the "
            "ticket softmax takes rows of 16-byte vectors of at least 8192 values)");
  EXPECT_EQ(short_rows.description(), "row softmax y = softmax(x, dim=-1)");
  EXPECT_TRUE(contains(seed_source(row_softmax_graph("softmax", 4096, 65535)), "SMX_THREADS"));
  auto at_the_bound = match(row_softmax_graph("softmax", 4096, 65536));
  ASSERT_TRUE(at_the_bound.plan_as<RowSoftmaxPlan>()) << at_the_bound.reason;
  EXPECT_EQ(library_softmax_refusal(*at_the_bound.plan_as<RowSoftmaxPlan>()), "");

  auto two_inputs = match(row_softmax_graph("softmax", 4096, 393216, true));
  ASSERT_TRUE(two_inputs.plan_as<RowSoftmaxPlan>()) << two_inputs.reason;
  EXPECT_EQ(library_softmax_refusal(*two_inputs.plan_as<RowSoftmaxPlan>()),
            "the softmax's operand is not the contract's only input (the library kernel reads inputs[0] alone)");
  EXPECT_TRUE(contains(seed_source(row_softmax_graph("softmax", 4096, 393216, true)), "SMX_THREADS"));
}

// Rows shorter than 65536 values take the ticket softmax only in a tensor of at least 4096 chunks of 8192
// values (library_softmax.h: measured from 4096 chunks up, lost at 512); the rest keep the row kernel and say why.
TEST(LibrarySoftmaxRoute, ShortRowsOfALargeTensorAreTheTicketSoftmax) {
  for (const auto& [rows, n] : {std::pair<int64_t, int64_t>{4096, 8192}, {4096, 16384}, {1024, 49152}, {16384, 8192}}) {
    SCOPED_TRACE(fmt::format("{} x {}", rows, n));
    auto m = match(row_softmax_graph("log_softmax", rows, n));
    ASSERT_TRUE(m.plan_as<RowSoftmaxPlan>()) << m.reason;
    EXPECT_EQ(library_softmax_refusal(*m.plan_as<RowSoftmaxPlan>()), "");
    EXPECT_EQ(library_softmax_kernel(*m.plan_as<RowSoftmaxPlan>()), LibrarySoftmax::ticket);
    EXPECT_EQ(m.description(), "row softmax (the library's ticket softmax) y = log_softmax(x, dim=-1)");
    const std::string src = seed_source(row_softmax_graph("log_softmax", rows, n));
    EXPECT_TRUE(contains(src, "constexpr bool kLogSoftmax = true;  // set by the seed: log_softmax")) << src.substr(0, 3000);
    EXPECT_TRUE(contains(src, fmt::format("the tensor's {} chunks of 8192 values (at least 4096)", rows * (n / 8192))))
        << src.substr(0, 3000);
  }
  // 4095 chunks: one short of the bound.
  auto few = match(row_softmax_graph("softmax", 4095, 8192));
  ASSERT_TRUE(few.plan_as<RowSoftmaxPlan>()) << few.reason;
  EXPECT_EQ(library_softmax_refusal(*few.plan_as<RowSoftmaxPlan>()),
            "rows of 8192 values, fewer than 65536, in 4095 chunks of 8192 values, fewer than 4096: the row kernel's "
            "second read still comes from the L2, and too few chunks to pay for spreading them over every SM");
  EXPECT_EQ(few.description(), "row softmax y = softmax(x, dim=-1)");
  EXPECT_TRUE(contains(seed_source(row_softmax_graph("softmax", 4095, 8192)), "SMX_THREADS"));
  // A short last chunk counts as a chunk: 2048 rows of 8196 values are 4096 chunks.
  auto short_last = match(row_softmax_graph("softmax", 2048, 8196));
  ASSERT_TRUE(short_last.plan_as<RowSoftmaxPlan>()) << short_last.reason;
  EXPECT_EQ(library_softmax_refusal(*short_last.plan_as<RowSoftmaxPlan>()), "");
  // Rows shorter than a chunk, or not of 16-byte vectors, keep the row kernel however large the tensor.
  for (const auto& [rows, n] : {std::pair<int64_t, int64_t>{65536, 4096}, {8192, 16383}}) {
    auto m = match(row_softmax_graph("softmax", rows, n));
    ASSERT_TRUE(m.plan_as<RowSoftmaxPlan>()) << m.reason;
    EXPECT_TRUE(contains(library_softmax_refusal(*m.plan_as<RowSoftmaxPlan>()), "of at least 8192 values"))
        << library_softmax_refusal(*m.plan_as<RowSoftmaxPlan>());
  }
}

TEST(LibrarySoftmaxKernel, ALibraryWithoutTheLogLineIsAnError) {
  struct Case {
    int64_t n;
    const char* file;
    const char* line;
  };
  for (const Case& c :
       {Case{393216, "library/softmax_ticket.cu", "constexpr bool kLogSoftmax = false;  // log_softmax_ticket.cu: true\n"},
        Case{100003, "library/softmax_cluster.cu",
             "constexpr bool kLogSoftmax = false;  // log_softmax_cluster.cu: true\n"}}) {
    SCOPED_TRACE(c.file);
    auto m = match(row_softmax_graph("log_softmax", 4096, c.n));
    ASSERT_TRUE(m.plan_as<RowSoftmaxPlan>()) << m.reason;
    auto missing = generate_library_softmax_kernel(*m.plan_as<RowSoftmaxPlan>(), CommentText("p.py"), "// a library file that was rewritten\n");
    ASSERT_FALSE(missing.ok());
    EXPECT_TRUE(contains(missing.error().message, std::string(c.file) + " does not have the line"))
        << missing.error().message;
    EXPECT_FALSE(generate_library_softmax_kernel(*m.plan_as<RowSoftmaxPlan>(), CommentText("p.py"), std::string(c.line) + c.line).ok());
    EXPECT_TRUE(generate_library_softmax_kernel(*m.plan_as<RowSoftmaxPlan>(), CommentText("p.py"), c.line).ok());
  }
}

// The seed is the library file's knobs and source rules, untouched by the header and the constant. (Its
// build is the library kernel's: the attack manifest's honest entries compile and judge it.)
TEST(LibrarySoftmaxKernel, KeepsTheLibrarysKnobsAndSourceRules) {
  const std::string ticket = seed_source(row_softmax_graph("softmax", 4096, 393216));
  auto knobs = parse_knobs(ticket);
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  EXPECT_EQ(knobs->describe(knobs->defaults()), "TKS_THREADS=128 TKS_STAGES=6 TKS_BULK_STORE=0");
  EXPECT_TRUE(check_source_rules(ticket).empty());
  const std::string cluster = seed_source(row_softmax_graph("softmax", 1000, 100003));
  knobs = parse_knobs(cluster);
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  EXPECT_EQ(knobs->describe(knobs->defaults()), "SMC_CLUSTER=16 SMC_THREADS=256 SMC_STAGES=4 SMC_PERSISTENT=1 SMC_PREFETCH=1 SMC_FAST_EXP=1 SMC_HOLD=0 SMC_ORDERED=0 SMC_EARLY_FOLD=2");
  EXPECT_TRUE(check_source_rules(cluster).empty());
}

}  // namespace
