// The ncu provider's paths through a scripted ncu (FakeProcessRunner): a normal run, counters without
// permission, ncu missing, nothing profiled, a timeout, ncu failing, and metrics ncu did not report.
// None of them may throw or crash; all but the first give a timing-only summary that says why.
#include "profile/ncu_profile_provider.h"

#include <cstdlib>

#include <gtest/gtest.h>

#include "common/testdata/fake_process_runner.h"
#include "common/fs.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

std::string profile_fixture(const std::string& name) {
  auto text = read_file(std::string(CUTEGEN_PROFILE_TESTDATA) + "/" + name);
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? *text : "";
}

std::string arg_after(const std::vector<std::string>& argv, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag) return argv[i + 1];
  return "";
}

// A fake ncu that writes `log` to the --log-file it was given and ends with `result`.
FakeProcessRunner::Handler ncu_writing(std::string log, ProcessResult result = FakeProcessRunner::exited(0)) {
  return [log, result](const ProcessSpec& spec) -> Result<ProcessResult> {
    if (!log.empty()) {
      auto w = write_file_atomic(arg_after(spec.argv, "--log-file"), log);
      if (!w) return w.error();
    }
    return result;
  };
}

class NcuProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-profile-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    request_.target = {"/build/cutegen-runner", "--job", "job.json", "--result", "result.json"};
    request_.work_dir = dir_ / "profile";
    request_.context.workload_class = "elementwise";
    request_.context.calls = 2;
    request_.context.measured_ms = 0.25;
    request_.context.floor_ms = 0.2;
    request_.context.floor_bound = "memory";
    options_.ncu = "/opt/nsight-compute/ncu";
    options_.timeout = std::chrono::seconds(42);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ProfileReport profile(FakeProcessRunner& runner) {
    NcuProfileProvider provider(runner, options_);
    auto r = provider.profile(request_);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : ProfileReport{};
  }

  void expect_timing_only(const ProfileReport& r) {
    EXPECT_TRUE(r.kernels.empty());
    EXPECT_NE(r.summary.find("No hardware counters: "), std::string::npos) << r.summary;
    EXPECT_NE(r.summary.find("0.25 ms per call measured vs floor 0.2 ms"), std::string::npos) << r.summary;
  }

  fs::path dir_;
  ProfileRequest request_;
  NcuOptions options_;
};

}  // namespace

TEST_F(NcuProviderTest, ProfilesTheRunnerAndSummarizes) {
  FakeProcessRunner runner(ncu_writing(profile_fixture("ncu_raw_h200.csv")));
  auto r = profile(runner);
  ASSERT_EQ(r.status, ProfileStatus::ok) << r.message;
  EXPECT_TRUE(r.message.empty());
  auto calls = runner.calls();  // a copy: calls() returns by value
  ASSERT_EQ(calls.size(), 1u);
  const auto& spec = calls[0];
  EXPECT_EQ(spec.argv.front(), "/opt/nsight-compute/ncu");
  EXPECT_EQ(spec.argv.back(), "result.json");
  EXPECT_EQ(spec.timeout, std::chrono::seconds(42));
  EXPECT_EQ(arg_after(spec.argv, "--log-file"), (request_.work_dir / "ncu-raw.csv").string());
  EXPECT_EQ(r.command, spec.argv);
  EXPECT_EQ(r.kernels.size(), 6u);
  EXPECT_FALSE(r.signals.empty());
  EXPECT_TRUE(r.notes.empty()) << r.notes.front();  // every requested metric was reported
  EXPECT_NE(r.summary.find("Nsight Compute profile: 6 kernels, 12 launches over 2 calls"), std::string::npos) << r.summary;
  auto j = r.to_json();
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["kernels"].size(), 6u);
  EXPECT_TRUE(j["kernels"][0]["metrics"].contains("launch__registers_per_thread"));
}

TEST_F(NcuProviderTest, PermissionErrorGivesTimingOnlySummary) {
  FakeProcessRunner runner(ncu_writing(profile_fixture("synthetic_permission_error.log"), FakeProcessRunner::exited(1)));
  auto r = profile(runner);
  EXPECT_EQ(r.status, ProfileStatus::counters_unavailable);
  EXPECT_NE(r.message.find("ERR_NVGPUCTRPERM"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos) << r.message;
  expect_timing_only(r);
  EXPECT_NE(r.summary.find("ERR_NVGPUCTRPERM"), std::string::npos);
  EXPECT_EQ(r.to_json()["status"], "counters_unavailable");
}

TEST_F(NcuProviderTest, PermissionErrorOnStderrWithoutALogFile) {
  FakeProcessRunner runner([](const ProcessSpec&) -> Result<ProcessResult> {
    return FakeProcessRunner::exited(1, "", profile_fixture("synthetic_permission_error.log"));
  });
  auto r = profile(runner);
  EXPECT_EQ(r.status, ProfileStatus::counters_unavailable);
  expect_timing_only(r);
}

TEST_F(NcuProviderTest, NcuThatCannotBeStartedIsMissing) {
  FakeProcessRunner runner([](const ProcessSpec&) -> Result<ProcessResult> {
    return Error{"`/opt/nsight-compute/ncu` not found on PATH"};
  });
  auto r = profile(runner);
  EXPECT_EQ(r.status, ProfileStatus::ncu_missing);
  EXPECT_NE(r.message.find("CUTEGEN_NCU"), std::string::npos) << r.message;
  expect_timing_only(r);
}

TEST_F(NcuProviderTest, NcuNotFoundAnywhereRunsNothing) {
  options_.ncu.clear();
  const char* old = std::getenv("CUTEGEN_NCU");
  std::string saved = old ? old : "";
  ::setenv("CUTEGEN_NCU", (dir_ / "no-such-ncu").c_str(), 1);
  FakeProcessRunner runner(ncu_writing(""));
  auto r = profile(runner);
  if (old) ::setenv("CUTEGEN_NCU", saved.c_str(), 1);
  else ::unsetenv("CUTEGEN_NCU");
  EXPECT_EQ(r.status, ProfileStatus::ncu_missing);
  EXPECT_TRUE(runner.calls().empty());
  expect_timing_only(r);
}

TEST_F(NcuProviderTest, NothingProfiled) {
  FakeProcessRunner runner([](const ProcessSpec&) -> Result<ProcessResult> {
    return FakeProcessRunner::exited(0, profile_fixture("ncu_no_kernels.log"));
  });
  auto r = profile(runner);
  EXPECT_EQ(r.status, ProfileStatus::no_kernels);
  EXPECT_NE(r.message.find("cutegen_harness_"), std::string::npos) << r.message;
  expect_timing_only(r);
}

TEST_F(NcuProviderTest, Timeout) {
  ProcessResult timed_out;
  timed_out.timed_out = true;
  timed_out.wall_seconds = 42;
  FakeProcessRunner runner(ncu_writing("", timed_out));
  auto r = profile(runner);
  EXPECT_EQ(r.status, ProfileStatus::timeout);
  EXPECT_NE(r.message.find("42 s"), std::string::npos) << r.message;
  expect_timing_only(r);
}

TEST_F(NcuProviderTest, NcuFailureQuotesNcusError) {
  // What ncu printed under gVisor on this workplace's machines.
  FakeProcessRunner runner(ncu_writing(
      "==PROF== Connected to process 9 (/build/cutegen-runner)\n"
      "==ERROR== Failed to initialize the profiler: LibraryNotLoaded\n",
      FakeProcessRunner::exited(1)));
  auto r = profile(runner);
  EXPECT_EQ(r.status, ProfileStatus::failed);
  EXPECT_NE(r.message.find("LibraryNotLoaded"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("exit code 1"), std::string::npos) << r.message;
  expect_timing_only(r);
}

// What the H200 showed with the runner killed under ncu: the message must say how far the runner got.
TEST_F(NcuProviderTest, AFailedProfileSaysHowFarTheRunnerGot) {
  FakeProcessRunner runner(ncu_writing("==ERROR== The application returned an error code (9).\n",
                                       FakeProcessRunner::exited(9)));
  request_.target_result = dir_ / "profile-result.json";
  ASSERT_TRUE(write_file_atomic(request_.target_result, R"({"phase": "setup", "failure": null})").ok());
  auto r = profile(runner);
  EXPECT_EQ(r.status, ProfileStatus::failed);
  EXPECT_NE(r.message.find("during its setup phase without reporting a failure"), std::string::npos) << r.message;
  ASSERT_TRUE(write_file_atomic(request_.target_result,
                                R"({"phase": "load", "failure": "load", "message": "no cutegen_forward"})").ok());
  r = profile(runner);
  EXPECT_NE(r.message.find("the runner failed in load (load): no cutegen_forward"), std::string::npos) << r.message;
  std::filesystem::remove(request_.target_result);
  r = profile(runner);
  EXPECT_NE(r.message.find("wrote no result file"), std::string::npos) << r.message;
  EXPECT_NE(r.summary.find("wrote no result file"), std::string::npos) << "the summary the LLM sees says it too";
}

TEST_F(NcuProviderTest, MetricsNcuDidNotReportBecomeANote) {
  // The capture asked for two metrics; ncu reported only gpu__time_duration.sum (and its launch data).
  FakeProcessRunner runner(ncu_writing(profile_fixture("ncu_unknown_metric.log")));
  auto r = profile(runner);
  ASSERT_EQ(r.status, ProfileStatus::ok);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("ncu did not report"), std::string::npos) << r.notes[0];
  EXPECT_NE(r.summary.find("Note: ncu did not report"), std::string::npos) << r.summary;
}

TEST_F(NcuProviderTest, TargetFailingUnderNcuIsNoted) {
  FakeProcessRunner runner(ncu_writing(profile_fixture("ncu_raw_h200.csv"), FakeProcessRunner::exited(4)));
  auto r = profile(runner);
  ASSERT_EQ(r.status, ProfileStatus::ok);
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("exit code 4") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST_F(NcuProviderTest, UnwritableWorkDirIsAnError) {
  ASSERT_TRUE(write_file_atomic(dir_ / "a-file", "x").ok());
  request_.work_dir = dir_ / "a-file" / "profile";
  FakeProcessRunner runner(ncu_writing(""));
  NcuProfileProvider provider(runner, options_);
  auto r = provider.profile(request_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("cannot create the profile directory"), std::string::npos);
}

TEST(FakeProfileProvider, RecordsRequestsAndAnswers) {
  FakeProfileProvider fake([](const ProfileRequest& req) -> Result<ProfileReport> {
    ProfileReport r;
    r.summary = "profiled " + req.context.workload_class;
    return r;
  });
  ProfileRequest req;
  req.context.workload_class = "gemm";
  auto r = fake.profile(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->summary, "profiled gemm");
  ASSERT_EQ(fake.requests.size(), 1u);
}
