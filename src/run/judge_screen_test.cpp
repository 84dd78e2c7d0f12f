// Judge::screen_all on scripted evidence: which kernels share one worker session (`screen_candidates`) and with
// which workspace hints, which are screened alone, and how the group's answer becomes one report per kernel. (The worker's side of the group:
// python/tests/test_screen_group.py; both sides together: judge_worker_test.cpp.)
#include <map>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"
#include "run/judge.h"
#include "run/roofline.h"  // kCalibrationVersion

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

// Compiles each source to what the test set for it: a library path, or a failure.
class ScriptedCompiler final : public Compiler {
 public:
  std::map<std::string, CompileOutcome> outcomes;
  int compiles = 0;
  Result<CompileOutcome> compile(const CompileRequest& r) override {
    ++compiles;
    return outcomes.at(r.source);
  }
};

nlohmann::json record(const std::string& verdict, double median_ms, int index, int candidates) {
  nlohmann::json stats = {{"median_ms", median_ms}, {"iqr_ms", 0.01}, {"min_ms", median_ms}, {"max_ms", median_ms},
                          {"runs", 10}};
  nlohmann::json r = {{"verdict", verdict},
                      {"reason", verdict == "pass" ? "" : "trial 0 (problem inputs) failed: mismatch"},
                      {"failed_check", nullptr},
                      {"checks", nlohmann::json::array()},
                      {"runner", {{"end", "exit code 0"}, {"calibrated", index == 0}}},
                      {"calibration", {{"ping_ms", 0.02}}},
                      {"audits", {{"timed_calls", 20}, {"sampled", 20}, {"full", 0}}},
                      {"calls", nlohmann::json::array()}};
  if (candidates > 1) r["screening_group"] = {{"candidates", candidates}, {"index", index}, {"calibrated_by", 0}};
  if (verdict == "pass") {
    r["time"] = stats;
    r["time"].update({{"slower_kind", "signed"}, {"per_kind", {{"problem", stats}, {"signed", stats}}},
                      {"overhead_ms", 0.02}, {"overrun_ms", 0.0}, {"event_median_ms", median_ms}});
  }
  return r;
}

class JudgeScreenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"p1", "p2", "p3"})
      ASSERT_TRUE(cutegen::testing::build_shared_object(libs_.path / (std::string(name) + ".so"),
                                               "extern \"C\" int cutegen_forward() { return 0; }\n"));
    ASSERT_TRUE(cutegen::testing::build_shared_object(libs_.path / "ws.so",
                                             "extern \"C\" long cutegen_workspace_bytes() { return 64; }\n"
                                             "extern \"C\" int cutegen_forward_ws() { return 0; }\n"));
    for (const char* name : {"p1", "p2", "p3", "ws"}) {
      CompileOutcome o;
      o.verdict = CompileVerdict::ok;
      o.library = libs_.path / (std::string(name) + ".so");
      o.key = name;
      compiler_.outcomes[name] = o;
    }
    CompileOutcome bad;
    bad.verdict = CompileVerdict::compile_error;
    bad.log = "k.cu(3): error: identifier \"x\" is undefined";
    compiler_.outcomes["bad"] = bad;
    // The roofline's ceilings for the fake GPU, so a kernel screened alone (a whole evaluation) needs no calibration.
    ASSERT_TRUE(write_file_atomic(libs_.path / "cache/calibration/Fake_GPU.json",
                                  "{\"version\":" + std::to_string(kCalibrationVersion) +
                                      R"(,"gpu":"Fake GPU","hbm_gbps":4000,"tflops":{"fp32":50,"tf32":400,"fp16":700,"bf16":700}})")
                    .ok());
  }

  // The worker: `group` answers screen_candidates (busy `busy` times first), `alone` every evaluate_candidate.
  Result<std::vector<EvalReport>> screen(const std::vector<std::string>& sources) {
    worker_ = std::make_unique<FakeReferenceWorker>([this](const std::string& op,
                                                           const nlohmann::json& args) -> Result<nlohmann::json> {
      if (op == "load") return nlohmann::json{{"name", "relu"}, {"gpu", "Fake GPU"}, {"dtype", "float32"}, {"min_bytes", 8000000},
                                          {"flops", 1000000}};
      requests_.push_back({op, args});
      if (op == "screen_candidates") {
        if (busy_ > 0) {
          --busy_;
          return Error{"the CPU was too busy to time on", ErrorKind::machine_busy};
        }
        if (group_.is_null()) {  // one passing record per library asked
          nlohmann::json records = nlohmann::json::array();
          const std::size_t n = args["libraries"].size();
          for (std::size_t i = 0; i < n; ++i) records.push_back(record("pass", 1.0 + i, static_cast<int>(i), static_cast<int>(n)));
          return nlohmann::json{{"records", records}};
        }
        return group_;
      }
      if (op == "evaluate_candidate") return alone_;
      if (op == "free_buffers") return nlohmann::json{{"reserved_bytes", 0}};
      return Error{"unexpected op " + op};
    });
    EvalOptions o;
    o.runner = "/fake/cutegen-runner";
    o.work_dir = libs_.path / "work";
    o.cache_root = libs_.path / "cache";
    o.busy_retry_pauses = {std::chrono::seconds(0)};
    judge_ = std::make_unique<Judge>(compiler_, *worker_, o);
    std::vector<CompileRequest> kernels;
    for (const auto& source : sources) kernels.push_back({source, "k.cu", {}});
    return judge_->screen_all("problem.py", kernels);
  }

  std::vector<std::string> ops() const {
    std::vector<std::string> out;
    for (const auto& [op, args] : requests_) out.push_back(op);
    return out;
  }

  cutegen::testing::TempDir libs_{"cutegen-judge-screen-"};
  ScriptedCompiler compiler_;
  std::unique_ptr<FakeReferenceWorker> worker_;
  std::unique_ptr<Judge> judge_;
  std::vector<std::pair<std::string, nlohmann::json>> requests_;
  nlohmann::json group_;
  nlohmann::json alone_ = record("pass", 3.0, 0, 1);
  int busy_ = 0;
};

}  // namespace

TEST_F(JudgeScreenTest, KernelsWithoutAWorkspaceShareOneSessionAndEachGetsItsReport) {
  group_ = {{"records", {record("pass", 2.0, 0, 3), record("mismatch", 0, 1, 3), record("pass", 1.5, 2, 3)}},
            {"phase_seconds", {{"timed_staging", 0.4}}}};
  auto reports = screen({"p1", "p2", "p3"});
  ASSERT_TRUE(reports.ok()) << reports.error().message;
  ASSERT_EQ(ops(), std::vector<std::string>{"screen_candidates"});
  const nlohmann::json& request = requests_[0].second;
  EXPECT_EQ(request["libraries"], nlohmann::json({(libs_.path / "p1.so").string(), (libs_.path / "p2.so").string(),
                                                   (libs_.path / "p3.so").string()}));
  EXPECT_FALSE(request.contains("library"));
  // Screening's settings: a fifth of the calls, no other shapes; in a group the problem trial alone (the signed and
  // scaled ones are the full evaluation's).
  ASSERT_EQ(request["trials"].size(), 1u);
  EXPECT_EQ(request["trials"][0]["kind"], "problem");
  EXPECT_EQ(request["runs"], 20);
  EXPECT_EQ(request["generalize"], 0);
  EXPECT_EQ(request["screening"], true);
  ASSERT_EQ(reports->size(), 3u);
  EXPECT_EQ((*reports)[0].verdict, Verdict::pass);
  EXPECT_EQ((*reports)[1].verdict, Verdict::mismatch);
  EXPECT_EQ((*reports)[2].verdict, Verdict::pass);
  EXPECT_DOUBLE_EQ((*reports)[2].median_ms(), 1.5);
  for (std::size_t i = 0; i < 3; ++i) {
    const EvalReport& r = (*reports)[i];
    EXPECT_TRUE(r.screened);
    EXPECT_EQ(r.library, (libs_.path / ("p" + std::to_string(i + 1) + ".so")).string());
    EXPECT_EQ(r.session["screening_group"]["index"], i);
    EXPECT_EQ(r.session["group_phase_seconds"]["timed_staging"], 0.4);
    EXPECT_EQ(r.seeds, (*reports)[0].seeds);  // one trial plan for the group
    EXPECT_EQ(r.seeds.size(), 1u);
    EXPECT_TRUE(r.phase_seconds.contains("session"));
  }
}

TEST_F(JudgeScreenTest, AFailedCompileIsReportedAndAWorkspaceKernelIsGroupedWithItsHint) {
  group_ = {{"records", {record("pass", 3.0, 0, 3), record("pass", 2.0, 1, 3), record("pass", 2.5, 2, 3)}}};
  auto reports = screen({"bad", "ws", "p2", "p1"});
  ASSERT_TRUE(reports.ok()) << reports.error().message;
  ASSERT_EQ(ops(), std::vector<std::string>{"screen_candidates"});
  EXPECT_EQ(requests_[0].second["libraries"], nlohmann::json({(libs_.path / "ws.so").string(),
                                                              (libs_.path / "p2.so").string(),
                                                              (libs_.path / "p1.so").string()}));
  // The judge's reading of each library's exports: the worker asks the workspace kernel's size first.
  EXPECT_EQ(requests_[0].second["workspaces"], nlohmann::json({true, false, false}));
  EXPECT_FALSE(requests_[0].second.contains("workspace"));
  ASSERT_EQ(reports->size(), 4u);
  EXPECT_EQ((*reports)[0].verdict, Verdict::compile_error);
  EXPECT_TRUE((*reports)[0].screened);
  EXPECT_DOUBLE_EQ((*reports)[1].median_ms(), 3.0);
  EXPECT_DOUBLE_EQ((*reports)[2].median_ms(), 2.0);
  EXPECT_DOUBLE_EQ((*reports)[3].median_ms(), 2.5);
}

TEST_F(JudgeScreenTest, ALoneKernelAndAnUnreadableLibraryAreScreenedAlone) {
  compiler_.outcomes["gone"] = compiler_.outcomes["p1"];
  compiler_.outcomes["gone"].library = "/nonexistent/kernel.so";  // no exports to read: it may have a workspace
  auto reports = screen({"p1", "gone", "bad"});
  ASSERT_TRUE(reports.ok()) << reports.error().message;
  // Each evaluated alone, as `evaluate` does: the second's build has the worker free the first's buffers.
  EXPECT_EQ(ops(), (std::vector<std::string>{"evaluate_candidate", "free_buffers", "evaluate_candidate"}));
  EXPECT_EQ(requests_[0].second["library"], (libs_.path / "p1.so").string());
  EXPECT_EQ(requests_[2].second["library"], "/nonexistent/kernel.so");
  EXPECT_FALSE(requests_[2].second.contains("workspace"));  // unreadable: no hint
  EXPECT_EQ((*reports)[2].verdict, Verdict::compile_error);
}

TEST_F(JudgeScreenTest, OneKernelIsScreenedAloneAndCompiledOnce) {
  auto reports = screen({"p1"});
  ASSERT_TRUE(reports.ok()) << reports.error().message;
  EXPECT_EQ(ops(), std::vector<std::string>{"evaluate_candidate"});
  EXPECT_EQ(requests_[0].second["screening"], true);
  EXPECT_EQ(requests_[0].second["trials"].size(), 3u);  // alone: the signed and scaled trials too
  EXPECT_EQ(compiler_.compiles, 1);
  ASSERT_EQ(reports->size(), 1u);
  EXPECT_TRUE((*reports)[0].screened);
  EXPECT_DOUBLE_EQ((*reports)[0].median_ms(), 3.0);
}

TEST_F(JudgeScreenTest, ABusyMachineMeasuresTheWholeGroupAgain) {
  busy_ = 1;
  group_ = {{"records", {record("pass", 2.0, 0, 2), record("pass", 2.5, 1, 2)}}};
  auto reports = screen({"p1", "p2"});
  ASSERT_TRUE(reports.ok()) << reports.error().message;
  EXPECT_EQ(ops(), (std::vector<std::string>{"screen_candidates", "screen_candidates"}));
  EXPECT_NE(requests_[0].second["work_dir"], requests_[1].second["work_dir"]);  // a fresh session each time
  EXPECT_EQ((*reports)[1].session["busy_retries"], 1);
}

TEST_F(JudgeScreenTest, AnAnswerWithoutARecordPerKernelIsAWorkerBug) {
  group_ = {{"records", {record("pass", 2.0, 0, 2)}}};
  auto reports = screen({"p1", "p2"});
  ASSERT_FALSE(reports.ok());
  EXPECT_NE(reports.error().message.find("one record for each of the 2"), std::string::npos) << reports.error().message;
}

TEST_F(JudgeScreenTest, MoreKernelsThanAGroupHoldsGoAsEvenGroupsOfTwoOrMore) {
  // The worker takes 2 to kMaxScreeningGroup a request: nine kernels go as five and four, never eight and one.
  for (std::size_t n : {kMaxScreeningGroup + 1, 2 * kMaxScreeningGroup + 1}) {
    requests_.clear();
    std::vector<std::string> sources;
    for (std::size_t i = 0; i < n; ++i) {
      sources.push_back("v" + std::to_string(i));
      compiler_.outcomes[sources.back()] = compiler_.outcomes["p1"];
    }
    auto reports = screen(sources);
    ASSERT_TRUE(reports.ok()) << reports.error().message;
    std::vector<std::size_t> sizes;
    for (const auto& [op, args] : requests_) {
      EXPECT_EQ(op, "screen_candidates");
      sizes.push_back(args["libraries"].size());
    }
    if (n == kMaxScreeningGroup + 1) {
      EXPECT_EQ(sizes, (std::vector<std::size_t>{kMaxScreeningGroup / 2, kMaxScreeningGroup / 2 + 1}));
    } else {
      EXPECT_EQ(sizes.size(), 3u);
    }
    for (std::size_t s : sizes) EXPECT_TRUE(s >= 2 && s <= kMaxScreeningGroup) << s;
    ASSERT_EQ(reports->size(), n);
    // Each group's records land on its own kernels: the second group's first kernel has its first record.
    EXPECT_DOUBLE_EQ((*reports)[sizes[0]].median_ms(), 1.0);
    EXPECT_DOUBLE_EQ((*reports)[sizes[0] + 1].median_ms(), 2.0);
  }
}
