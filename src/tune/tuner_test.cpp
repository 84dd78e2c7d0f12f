#include "tune/tuner.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>

using namespace cutegen;

namespace {

const char* kSource = R"(// cutegen:knob THREADS in {128, 256, 512}
#ifndef THREADS
#define THREADS 256
#endif
// cutegen:knob UNROLL in {1, 2}
#ifndef UNROLL
#define UNROLL 1
#endif
int x = THREADS * UNROLL;
)";

std::string key(const std::vector<Define>& d) {
  std::string s;
  for (const auto& e : d) s += e.name + "=" + e.value + " ";
  return s;
}

Evaluation timed(double ms, double noise = 0.001) {
  Evaluation e;
  e.time = CandidateTime{};
  e.time->stats.median_ms = ms;
  e.time->stats.iqr_ms = noise;
  return e;
}
Evaluation failing(Verdict v, const std::string& reason) {
  Evaluation e;
  e.verdict = v;
  e.reason = reason;
  return e;
}

// Scripted compile outcomes and times per variant ("THREADS=512 UNROLL=2 "), and per baked source for
// the full verification (keyed by the defaults found in it).
class FakeBackend : public TuneBackend {
 public:
  FakeBackend() { fulls["THREADS=256 UNROLL=1 "] = timed(1.0); }  // the default, judged in full
  std::map<std::string, CompileVerdict> compile_verdicts;  // default: ok
  std::map<std::string, Evaluation> screens;               // default: 1.0 ms
  std::map<std::string, Evaluation> fulls;                 // keyed by "THREADS=.. UNROLL=.. " of the baked source
  std::vector<std::string> compiled, screened, verified;
  std::mutex mu;

  Result<CompileOutcome> compile(const CompileRequest& r) override {
    std::lock_guard lock(mu);
    compiled.push_back(key(r.defines));
    CompileOutcome o;
    auto v = compile_verdicts.find(key(r.defines));
    o.verdict = v == compile_verdicts.end() ? CompileVerdict::ok : v->second;
    if (!o.ok()) o.violations.push_back({"cute-missing", "kernel k does not use CuTe"});
    return o;
  }
  std::vector<std::size_t> screen_batches;  // how many variants each screen_all call was given
  Result<std::vector<Evaluation>> screen_all(const std::vector<CompileRequest>& requests) override {
    screen_batches.push_back(requests.size());
    return TuneBackend::screen_all(requests);
  }
  Result<Evaluation> screen(const CompileRequest& r) override {
    EXPECT_EQ(r.source, kSource);  // variants are the same source with defines
    screened.push_back(key(r.defines));
    auto s = screens.find(key(r.defines));
    return s == screens.end() ? timed(1.0) : s->second;
  }
  Result<Evaluation> verify(const std::string& source, const std::string&) override {
    auto spec = parse_knobs(source);
    EXPECT_TRUE(spec.ok());
    std::string k = key(knob_defines(*spec, spec->defaults()));
    verified.push_back(k);
    auto f = fulls.find(k);
    return f == fulls.end() ? timed(0.9) : f->second;
  }
};

TuneOptions options(int jobs = 3) {
  TuneOptions o;
  o.jobs = jobs;
  return o;
}

}  // namespace

TEST(Tuner, ChoosesTheFastestPassingVariantAndBakesItIn) {
  FakeBackend b;
  b.screens["THREADS=512 UNROLL=2 "] = timed(0.5);
  b.screens["THREADS=128 UNROLL=2 "] = timed(0.6);
  auto r = tune_kernel(kSource, b, options());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(b.compiled.size(), 6u);
  EXPECT_EQ(b.screened.size(), 6u);
  // Once on the winner, then the default it must beat in full too.
  EXPECT_EQ(b.verified, (std::vector<std::string>{"THREADS=512 UNROLL=2 ", "THREADS=256 UNROLL=1 "}));
  EXPECT_FALSE(r->default_kept);
  EXPECT_EQ(r->rows[r->chosen].values, (KnobValues{512, 2}));
  EXPECT_NE(r->source.find("#define THREADS 512\n"), std::string::npos);
  EXPECT_NE(r->source.find("#define UNROLL 2\n"), std::string::npos);
  ASSERT_TRUE(r->evaluation);
  EXPECT_DOUBLE_EQ(r->evaluation->median_ms(), 0.9);  // the full evaluation's time, not the screened one
  EXPECT_NE(r->summary.find("chose THREADS=512 UNROLL=2"), std::string::npos) << r->summary;
  EXPECT_NE(r->summary.find("0.9000 ms in full vs 1.0000 ms"), std::string::npos) << r->summary;
  auto j = r->to_json();
  EXPECT_EQ(j["variants"].size(), 6u);
  EXPECT_EQ(j["chosen_values"]["THREADS"], 512);
  EXPECT_EQ(j["variants"][0]["default"], true);
  EXPECT_DOUBLE_EQ(j["variants"][r->chosen]["screened_ms"].get<double>(), 0.5);
  std::string md = r->markdown();
  EXPECT_NE(md.find("| THREADS | UNROLL |"), std::string::npos) << md;
  EXPECT_NE(md.find("**chosen**"), std::string::npos);
}

TEST(Tuner, FailingVariantsAreRecordedAndNeverChosen) {
  FakeBackend b;
  b.compile_verdicts["THREADS=512 UNROLL=1 "] = CompileVerdict::rejected;
  b.screens["THREADS=512 UNROLL=2 "] = failing(Verdict::mismatch, "output 0: 12 of 4096 elements bad");
  b.screens["THREADS=128 UNROLL=1 "] = timed(0.7);
  auto r = tune_kernel(kSource, b, options(1));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(b.screened.size(), 5u);  // the rejected one is never run
  EXPECT_EQ(b.screen_batches, std::vector<std::size_t>{5});  // the rest together, in one batch
  EXPECT_EQ(r->rows[r->chosen].values, (KnobValues{128, 1}));
  for (const auto& row : r->rows) {
    if (row.values == KnobValues{512, 1}) {
      EXPECT_EQ(row.compile, "rejected");
      EXPECT_NE(row.compile_note.find("does not use CuTe"), std::string::npos);
      EXPECT_FALSE(row.verdict);
    }
    if (row.values == KnobValues{512, 2}) {
      EXPECT_EQ(row.verdict, Verdict::mismatch);
      EXPECT_NE(row.reason.find("12 of 4096"), std::string::npos);
      EXPECT_FALSE(row.screened_ms);
    }
  }
}

TEST(Tuner, AWinnerThatFailsFullVerificationFallsBackToTheNext) {
  FakeBackend b;
  b.screens["THREADS=512 UNROLL=2 "] = timed(0.5);
  b.screens["THREADS=512 UNROLL=1 "] = timed(0.6);
  b.fulls["THREADS=512 UNROLL=2 "] = failing(Verdict::nondeterministic, "two runs differ");
  b.fulls["THREADS=512 UNROLL=1 "] = timed(0.61);
  auto r = tune_kernel(kSource, b, options());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(b.verified,
            (std::vector<std::string>{"THREADS=512 UNROLL=2 ", "THREADS=512 UNROLL=1 ", "THREADS=256 UNROLL=1 "}));
  EXPECT_EQ(r->rows[r->chosen].values, (KnobValues{512, 1}));
  EXPECT_NE(r->source.find("#define UNROLL 1\n"), std::string::npos);
  EXPECT_DOUBLE_EQ(r->evaluation->median_ms(), 0.61);
  for (const auto& row : r->rows)
    if (row.values == KnobValues{512, 2}) {
      EXPECT_EQ(row.full, "failed");
      EXPECT_NE(row.reason.find("nondeterministic"), std::string::npos);
    }
}

TEST(Tuner, WhenNothingBeatsTheDefaultItIsKeptAndSaidSo) {
  FakeBackend b;
  b.screens["THREADS=256 UNROLL=1 "] = timed(1.0, 0.01);
  b.screens["THREADS=128 UNROLL=1 "] = timed(0.99);  // within 2% of the default: noise
  auto r = tune_kernel(kSource, b, options());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->default_kept);
  EXPECT_EQ(r->chosen, 0u);
  EXPECT_EQ(r->source, kSource);
  EXPECT_EQ(b.verified, (std::vector<std::string>{"THREADS=256 UNROLL=1 "}));  // the default, judged in full
  EXPECT_NE(r->summary.find("kept the default (THREADS=256 UNROLL=1): no variant beat the default"), std::string::npos)
      << r->summary;

  // The loop holds the default's full evaluation already: no verification then.
  FakeBackend b2;
  b2.screens = b.screens;
  auto o = options();
  o.verify_default = false;
  auto r2 = tune_kernel(kSource, b2, o);
  ASSERT_TRUE(r2.ok());
  EXPECT_TRUE(b2.verified.empty());
  EXPECT_FALSE(r2->evaluation);
}

TEST(Tuner, AScreenedLeadThatIsNotFasterInFullKeepsTheDefault) {
  FakeBackend b;
  b.screens["THREADS=512 UNROLL=2 "] = timed(0.5);
  b.fulls["THREADS=512 UNROLL=2 "] = timed(0.99);
  auto r = tune_kernel(kSource, b, options());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->default_kept);
  EXPECT_EQ(r->chosen, 0u);
  EXPECT_EQ(r->source, kSource);
  ASSERT_TRUE(r->evaluation);
  EXPECT_DOUBLE_EQ(r->evaluation->median_ms(), 1.0);  // the default's full evaluation is what is reported
  EXPECT_NE(r->summary.find("THREADS=512 UNROLL=2 led in screening but was not faster in full"), std::string::npos)
      << r->summary;
}

TEST(Tuner, AllWinnersFailingFullVerificationKeepsTheDefault) {
  FakeBackend b;
  b.screens["THREADS=512 UNROLL=2 "] = timed(0.5);
  b.fulls["THREADS=512 UNROLL=2 "] = failing(Verdict::mismatch, "bad");
  auto r = tune_kernel(kSource, b, options());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->default_kept);
  EXPECT_NE(r->summary.find("failed full verification"), std::string::npos) << r->summary;
}

TEST(Tuner, AKernelWithoutKnobsOrAToolFailureIsAnError) {
  FakeBackend b;
  auto none = tune_kernel("int x;\n", b, options());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("declares no knobs"), std::string::npos);

  auto bad = tune_kernel("// cutegen:knob T in {1}\n#ifndef T\n#define T 2\n#endif\n", b, options());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "kernel.cu: line 3: knob T: the default 2 is not among its values");

  class Broken : public FakeBackend {
    Result<CompileOutcome> compile(const CompileRequest&) override { return Error{"nvcc missing"}; }
  } broken;
  auto r = tune_kernel(kSource, broken, options());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "nvcc missing");
}

TEST(TuneConfig, ReadsItsKeysAndRefusesUnknownOnes) {
  EXPECT_EQ(TuneConfig{}.loop_max_variants, 12u);
  auto c = apply_tune_config({}, {{"max_variants", 8}, {"loop_max_variants", 3}, {"jobs", 4}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->max_variants, 8u);
  EXPECT_EQ(c->loop_max_variants, 3u);
  EXPECT_EQ(c->jobs, 4);
  EXPECT_FALSE(apply_tune_config({}, {{"max_variants", 0}}).ok());
  auto unknown = apply_tune_config({}, {{"variants", 8}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "config: unknown key tune.variants (known: max_variants, loop_max_variants, jobs)");
}
