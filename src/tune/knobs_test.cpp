#include "tune/knobs.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>

#include "compile/source_rules.h"

using namespace cutegen;

namespace {

const char* kTwoKnobs = R"(#include <cutegen/kernel.h>
// cutegen:knob BLOCK_THREADS in {128, 256, 512, 1024}
#ifndef BLOCK_THREADS
#define BLOCK_THREADS 256
#endif

// cutegen:knob VEC in {1, 2, 4}
#ifndef VEC
#define VEC 4  // 16-byte accesses
#endif
// cutegen:require BLOCK_THREADS * VEC <= 2048
// cutegen::numel is prose, not a directive
int x = BLOCK_THREADS * VEC;
)";

std::string error_of(const std::string& source) {
  auto r = parse_knobs(source);
  return r.ok() ? "" : r.error().message;
}

std::string knob(const std::string& name, const std::string& values, const std::string& def) {
  return "// cutegen:knob " + name + " in {" + values + "}\n#ifndef " + name + "\n#define " + name + " " + def +
         "\n#endif\n";
}

}  // namespace

TEST(Knobs, ParsesNamesValuesDefaultsAndConstraints) {
  auto spec = parse_knobs(kTwoKnobs);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_EQ(spec->knobs.size(), 2u);
  EXPECT_EQ(spec->knobs[0].name, "BLOCK_THREADS");
  EXPECT_EQ(spec->knobs[0].values, (std::vector<int64_t>{128, 256, 512, 1024}));
  EXPECT_EQ(spec->knobs[0].default_value, 256);
  EXPECT_EQ(spec->knobs[0].line, 2);
  EXPECT_EQ(spec->knobs[1].default_value, 4);
  ASSERT_EQ(spec->constraints.size(), 1u);
  EXPECT_EQ(spec->constraints[0].text, "BLOCK_THREADS * VEC <= 2048");
  EXPECT_TRUE(spec->satisfies({512, 4}));
  EXPECT_FALSE(spec->satisfies({1024, 4}));
  EXPECT_EQ(spec->describe({512, 2}), "BLOCK_THREADS=512 VEC=2");
}

TEST(Knobs, ASourceWithoutDirectivesHasNoKnobs) {
  auto spec = parse_knobs("// cutegen::numel(t) counts elements\nint main() {}\n");
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(spec->empty());
}

TEST(Knobs, MistakesAreOneLineErrorsNamingTheLine) {
  // The default must be among the values.
  EXPECT_EQ(error_of(knob("T", "128, 256", "512")), "line 3: knob T: the default 512 is not among its values");
  // Duplicate names and values.
  EXPECT_NE(error_of(knob("T", "1, 2", "1") + knob("T", "1, 2", "2")).find("knob T is declared twice (first on line 1)"),
            std::string::npos);
  EXPECT_NE(error_of(knob("T", "1, 2, 1", "1")).find("the value 1 is listed twice"), std::string::npos);
  // An unknown knob in a constraint, and one declared only after it.
  EXPECT_EQ(error_of(knob("T", "1, 2", "1") + "// cutegen:require T * VEC <= 8\n"),
            "line 5: cutegen:require names 'VEC', which is not a knob declared above it");
  EXPECT_NE(error_of("// cutegen:require T > 0\n" + knob("T", "1", "1")).find("not a knob declared above it"),
            std::string::npos);
  // The guarded #define is required, with a number.
  EXPECT_NE(error_of("// cutegen:knob T in {1, 2}\n#define T 1\n").find("must be followed by #ifndef T"),
            std::string::npos);
  EXPECT_NE(error_of("// cutegen:knob T in {1, 2}\n#ifndef T\n#define T one\n#endif\n").find("whole number"),
            std::string::npos);
  EXPECT_NE(error_of("// cutegen:knob T in {1, 2}\n#ifndef T\n#define T 1\n").find("no #endif line"), std::string::npos);
  // Malformed directives.
  EXPECT_NE(error_of("// cutegen:knob T {1, 2}\n").find("expected 'in {'"), std::string::npos);
  EXPECT_NE(error_of("// cutegen:knob T in {1, x}\n").find("whole numbers"), std::string::npos);
  EXPECT_NE(error_of("// cutegen:knob T in {1 2}\n").find("expected ',' or '}'"), std::string::npos);
  EXPECT_NE(error_of("// cutegen:knobs T in {1}\n").find("unknown directive cutegen:knobs"), std::string::npos);
  EXPECT_NE(error_of(knob("T", "1, 2", "1") + "// cutegen:require T < (2\n").find("missing ')'"), std::string::npos);
  EXPECT_NE(error_of(knob("T", "1, 2", "1") + "// cutegen:require\n").find("without a condition"), std::string::npos);
  // Defaults that break a constraint.
  EXPECT_EQ(error_of(knob("T", "1, 2", "2") + "// cutegen:require T < 2\n"),
            "line 5: the defaults (T=2) break cutegen:require T < 2");
  // Every error is one line.
  EXPECT_EQ(error_of(knob("T", "1, 2", "3")).find('\n'), std::string::npos);
}

TEST(Knobs, ConstraintsFollowCsPrecedenceAndDivisionByZeroFails) {
  std::string src = knob("A", "0, 1, 2, 3", "1") + knob("B", "0, 4, 8", "4") +
                    "// cutegen:require (A + 1) * B % 8 == 0 || A == 3 && !(B > 4)\n"
                    "// cutegen:require 64 / B >= 8 - -1 * 0\n";
  auto spec = parse_knobs(src);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_TRUE(spec->satisfies({1, 4}));   // 8 % 8 == 0
  EXPECT_FALSE(spec->satisfies({0, 4}));  // 4 % 8 != 0, A != 3
  EXPECT_TRUE(spec->satisfies({2, 8}));   // 24 % 8 == 0, 64/8 = 8
  EXPECT_TRUE(spec->satisfies({3, 4}));   // 16 % 8 == 0
  EXPECT_FALSE(spec->satisfies({1, 0}));  // 64 / 0: the constraint fails
}

TEST(Knobs, PlanHoldsEveryFeasibleVariantWithTheDefaultFirst) {
  auto spec = parse_knobs(kTwoKnobs);
  ASSERT_TRUE(spec.ok());
  auto plan = plan_variants(*spec, 100);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->combinations, 12u);
  EXPECT_EQ(plan->feasible, 11u);  // 1024 x 4 breaks the constraint
  EXPECT_FALSE(plan->sampled);
  ASSERT_EQ(plan->variants.size(), 11u);
  EXPECT_EQ(plan->variants.front(), (KnobValues{256, 4}));
  std::set<KnobValues> unique(plan->variants.begin(), plan->variants.end());
  EXPECT_EQ(unique.size(), 11u);
  EXPECT_EQ(unique.count({1024, 4}), 0u);
}

TEST(Knobs, ASampleIsDeterministicAndKeepsTheDefault) {
  auto spec = parse_knobs(knob("A", "1, 2, 3, 4, 5, 6, 7, 8", "5") + knob("B", "1, 2, 3, 4, 5, 6, 7, 8", "8"));
  ASSERT_TRUE(spec.ok());
  auto a = plan_variants(*spec, 10);
  auto b = plan_variants(*spec, 10);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->sampled);
  EXPECT_EQ(a->feasible, 64u);
  ASSERT_EQ(a->variants.size(), 10u);
  EXPECT_EQ(a->variants, b->variants);
  EXPECT_EQ(a->variants.front(), (KnobValues{5, 8}));
  EXPECT_EQ(std::count(a->variants.begin(), a->variants.end(), KnobValues{5, 8}), 1);
  // A sample of one is the default alone; zero is refused.
  auto one = plan_variants(*spec, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->variants, (std::vector<KnobValues>{{5, 8}}));
  EXPECT_FALSE(plan_variants(*spec, 0).ok());
}

// A sample tries every knob away from its default before any combination: with room for 11 of
// elementwise.cu's 72 variants it holds exactly the 10 one-knob neighbours of the default (among them the
// one-pass launch a hash-ordered sample of 12 missed on the H200).
TEST(Knobs, ASampleTriesEachKnobAloneFirst) {
  auto spec = parse_knobs(knob("EW_THREADS", "128, 256, 512, 1024", "256") + knob("EW_VEC", "4, 8", "4") +
                          knob("EW_UNROLL", "1, 2, 4, 8", "4") + knob("EW_GRID_STRIDE", "0, 1", "1") +
                          knob("EW_BLOCKS_PER_SM", "4, 8, 16", "8") +
                          "// cutegen:require EW_VEC * EW_UNROLL <= 32\n"
                          "// cutegen:require EW_GRID_STRIDE == 1 || EW_BLOCKS_PER_SM == 8\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  auto plan = plan_variants(*spec, 11);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->sampled);
  ASSERT_EQ(plan->variants.size(), 11u);
  const KnobValues def{256, 4, 4, 1, 8};
  EXPECT_EQ(plan->variants.front(), def);
  for (std::size_t i = 1; i < plan->variants.size(); ++i) {
    int differing = 0;
    for (std::size_t k = 0; k < def.size(); ++k) differing += plan->variants[i][k] != def[k];
    EXPECT_EQ(differing, 1) << "variant " << i << " is not a one-knob neighbour";
  }
  EXPECT_EQ(std::count(plan->variants.begin(), plan->variants.end(), KnobValues{256, 4, 4, 0, 8}), 1);
  // Room for only six: the first round gives each knob one other value before any knob gets a second.
  auto six = plan_variants(*spec, 6);
  ASSERT_TRUE(six.ok());
  std::set<std::size_t> knobs_moved;
  for (std::size_t i = 1; i < six->variants.size(); ++i)
    for (std::size_t k = 0; k < def.size(); ++k)
      if (six->variants[i][k] != def[k]) knobs_moved.insert(k);
  EXPECT_EQ(knobs_moved.size(), 5u);
}

TEST(Knobs, TooManyCombinationsIsAnError) {
  std::string values;
  for (int i = 0; i < 101; ++i) values += (i ? ", " : "") + std::to_string(i);
  auto spec = parse_knobs(knob("A", values, "0") + knob("B", values, "0") + knob("C", values, "0"));
  ASSERT_TRUE(spec.ok());
  auto plan = plan_variants(*spec, 10);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message.find("over 1000000 combinations"), std::string::npos);
}

TEST(Knobs, BakingRewritesOnlyTheDefaultsAndStaysTunable) {
  auto spec = parse_knobs(kTwoKnobs);
  ASSERT_TRUE(spec.ok());
  std::string baked = bake_knobs(kTwoKnobs, *spec, {1024, 2});
  EXPECT_NE(baked.find("#define BLOCK_THREADS 1024\n"), std::string::npos);
  EXPECT_NE(baked.find("#define VEC 2  // 16-byte accesses\n"), std::string::npos);
  EXPECT_NE(baked.find("// cutegen:knob BLOCK_THREADS in {128, 256, 512, 1024}"), std::string::npos);
  auto again = parse_knobs(baked);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->defaults(), (KnobValues{1024, 2}));
  // Baking the defaults changes nothing.
  EXPECT_EQ(bake_knobs(kTwoKnobs, *spec, spec->defaults()), kTwoKnobs);
}

TEST(Knobs, TheSourceRulesAcceptTheKnobSyntax) {
  EXPECT_TRUE(check_source_rules(kTwoKnobs).empty());
}

TEST(Knobs, TheElementwiseLibraryKernelDeclaresValidKnobs) {
  std::ifstream in(std::string(CUTEGEN_SOURCE_DIR) + "/library/elementwise.cu");
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(source.empty());
  auto spec = parse_knobs(source);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->knobs.size(), 5u);
  auto plan = plan_variants(*spec, 1000);
  ASSERT_TRUE(plan.ok());
  // 4 x 2 x 4 tile shapes, minus those over 32 values a thread (8 x 8), each one-pass or with three
  // grid-stride occupancies.
  EXPECT_EQ(plan->feasible, 28u * 4u);
  EXPECT_TRUE(check_source_rules(source).empty());
}

// The row library kernels (issue 15): knobs that parse, pass the source rules, and constraints that
// keep exactly the combinations their comments promise.
struct LibraryKnobs {
  const char* file;
  std::size_t knobs;
  std::size_t feasible;
};

void PrintTo(const LibraryKnobs& k, std::ostream* os) { *os << k.file; }  // test names, not bytes

class RowLibraryKernels : public ::testing::TestWithParam<LibraryKnobs> {};

TEST_P(RowLibraryKernels, DeclareValidKnobs) {
  std::ifstream in(std::string(CUTEGEN_SOURCE_DIR) + "/library/" + GetParam().file);
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(source.empty()) << GetParam().file;
  auto spec = parse_knobs(source);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->knobs.size(), GetParam().knobs);
  auto plan = plan_variants(*spec, 1000);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->feasible, GetParam().feasible);
  EXPECT_TRUE(check_source_rules(source).empty());
}

INSTANTIATE_TEST_SUITE_P(
    Issue15, RowLibraryKernels,
    // The softmaxes' SMC_HOLD takes 3 values and SMC_EARLY_FOLD those below SMC_STAGES (1, 2, 3, 3 for
    // 1, 2, 4, 8 stages) with SMC_PREFETCH=1; without it both are 0, for each of the 4 stage counts.
    ::testing::Values(LibraryKnobs{"softmax_cluster.cu", 9, 2u * 3u * 2u * 2u * 2u * (3u * (1u + 2u + 3u + 3u) + 4u)},
                      LibraryKnobs{"log_softmax_cluster.cu", 9, 2u * 3u * 2u * 2u * 2u * (3u * (1u + 2u + 3u + 3u) + 4u)},
                      // threads x stages x bulk store, no constraint
                      LibraryKnobs{"softmax_ticket.cu", 3, 3u * 3u * 2u},
                      LibraryKnobs{"log_softmax_ticket.cu", 3, 3u * 3u * 2u},
                      // 6 (threads, CTAs per SM) pairs with at most 1024 threads per SM, x stages x 2 x 2
                      LibraryKnobs{"layernorm_rows_grid.cu", 5, 6u * 3u * 2u * 2u},
                      // (threads, vec) with vec * threads <= 512: 128x1, 128x2, 256x1, 256x2, 512x1
                      LibraryKnobs{"rmsnorm_channels.cu", 2, 5u},
                      // (columns, groups) with columns * groups <= 1024: 5 + 4 + 3 + 2, x loads in flight x row threads
                      LibraryKnobs{"reduce_dim.cu", 4, 14u * 3u * 3u},
                      // gather: (tile N, wgmma, stages) without 128 x 4 stages under wgmma = 7; the TMA path: off
                      // (its knobs at their defaults: one kernel) or on with M x N <= 8192 (7: M 64 or 128, N 16 to 128) x promotion (3) x
                      // cluster (2) x (stages (4) unpaired + stages but 3 (3) paired, each but 0 with 1 or 2 CTAs
                      // per SM) x the output store (2); the direct path (TMA off, mma.sync: tile N x stages = 4) x its
                      // 4 channel tiles
                      LibraryKnobs{"conv_implicit_gemm.cu", 14,
                                   7u * (1u + 7u * 3u * 2u * ((1u + 3u * 2u) + (1u + 2u * 2u)) * 2u) + 4u * 4u}),
    [](const ::testing::TestParamInfo<LibraryKnobs>& info) {
      std::string name = info.param.file;
      return name.substr(0, name.find('.'));  // the file stem: letters, digits and '_'
    });
// The loop tunes a seed with 12 variants (tune.loop_max_variants). For the cluster softmaxes that must hold
// every allowed one-knob neighbour of the defaults: the log-softmax measured fastest at SMC_EARLY_FOLD=1 and
// with SMC_HOLD=8 (benchmarks/results.md), values the shared file's defaults cannot take.
TEST(Knobs, TheLoopsSampleOfTheSoftmaxHoldsEveryOneKnobNeighbour) {
  std::ifstream in(std::string(CUTEGEN_SOURCE_DIR) + "/library/log_softmax_cluster.cu");
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto spec = parse_knobs(source);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const KnobValues def = spec->defaults();
  std::size_t neighbours = 0;  // counted from the full plan, independently of the sampler
  auto all = plan_variants(*spec, 100000);
  ASSERT_TRUE(all.ok());
  for (auto& v : all->variants) {
    int differing = 0;
    for (std::size_t k = 0; k < def.size(); ++k) differing += v[k] != def[k];
    neighbours += differing == 1;
  }
  auto plan = plan_variants(*spec, 12);
  ASSERT_TRUE(plan.ok());
  ASSERT_LE(neighbours + 1, plan->variants.size()) << "the loop's sample can no longer try every knob alone";
  std::size_t in_sample = 0;
  for (auto& v : plan->variants) {
    int differing = 0;
    for (std::size_t k = 0; k < def.size(); ++k) differing += v[k] != def[k];
    in_sample += differing == 1;
  }
  EXPECT_EQ(in_sample, neighbours);
  auto with = [&](const char* name, int64_t value) {
    KnobValues v = def;
    for (std::size_t k = 0; k < spec->knobs.size(); ++k)
      if (spec->knobs[k].name == name) v[k] = value;
    return std::count(plan->variants.begin(), plan->variants.end(), v);
  };
  EXPECT_EQ(with("SMC_EARLY_FOLD", 1), 1);
  EXPECT_EQ(with("SMC_HOLD", 8), 1);
}

TEST(Knobs, TheLibraryGemmsDeclareValidKnobs) {
  // Feasible counts: the product of the values, less the tiles whose accumulators would not fit the
  // consumer threads' registers, cooperative tiles under 128 rows, and explicit stage counts over the
  // shared-memory budget (counted independently of the parser when the files were written); the store knob
  // (GT_STORE, GX_STORE) doubles the count, constraining nothing.
  struct Expected {
    const char* file;
    std::size_t knobs, feasible;
  };
  for (const auto& [name, knobs, feasible] : {Expected{"gemm_sm90_tf32.cu", 10, 3584}, Expected{"gemm_sm90_3xtf32.cu", 9, 2688},
                                              Expected{"gemm_sm90_bf16.cu", 8, 1088}}) {
    std::ifstream in(std::string(CUTEGEN_SOURCE_DIR) + "/library/" + name);
    std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(source.empty()) << name;
    auto spec = parse_knobs(source);
    ASSERT_TRUE(spec.ok()) << name << ": " << spec.error().message;
    EXPECT_EQ(spec->knobs.size(), knobs) << name;
    auto plan = plan_variants(*spec, 10000);
    ASSERT_TRUE(plan.ok()) << name;
    EXPECT_EQ(plan->feasible, feasible) << name;
    EXPECT_TRUE(check_source_rules(source).empty()) << name;
  }
}
