#include "prompt/prompt_files.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "common/testdata/test_helpers.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {
using cutegen::testing::contains;


// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

fs::path repo_root() { return CUTEGEN_SOURCE_ROOT; }

}  // namespace

TEST(PromptFiles, DefaultsToTheSourceTree) {
  unsetenv("CUTEGEN_PROMPTS_DIR");
  auto dir = prompts_dir();
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  EXPECT_EQ(fs::weakly_canonical(*dir), fs::weakly_canonical(repo_root() / "prompts"));
  auto paths = locate_prompt_paths();
  ASSERT_TRUE(paths.ok()) << paths.error().message;
  EXPECT_TRUE(fs::exists(paths->examples / "softmax_ticket.cu"));
}

TEST(PromptFiles, EnvironmentOverrideWinsAndIsChecked) {
  auto dir = fs::temp_directory_path() / "cutegen_prompt_files_test";
  fs::remove_all(dir);
  fs::create_directories(dir / "custom");
  std::ofstream(dir / "custom" / "rules.md") << "my rules\n";
  {
    ScopedEnv env("CUTEGEN_PROMPTS_DIR", (dir / "custom").string());
    auto found = prompts_dir();
    ASSERT_TRUE(found.ok()) << found.error().message;
    EXPECT_EQ(*found, dir / "custom");
    // The examples are not beside the custom dir: the built-in ones are used.
    auto paths = locate_prompt_paths();
    ASSERT_TRUE(paths.ok()) << paths.error().message;
    EXPECT_EQ(fs::weakly_canonical(paths->examples), fs::weakly_canonical(repo_root() / "library"));
    // Loading the incomplete dir names the first missing file and how to fix it.
    auto lib = PromptLibrary::load(*paths);
    ASSERT_FALSE(lib.ok());
    EXPECT_TRUE(contains(lib.error().message, "cute_guide.md")) << lib.error().message;
    EXPECT_TRUE(contains(lib.error().message, "CUTEGEN_PROMPTS_DIR")) << lib.error().message;
  }
  {
    ScopedEnv env("CUTEGEN_PROMPTS_DIR", (dir / "missing").string());
    auto found = prompts_dir();
    ASSERT_FALSE(found.ok());
    EXPECT_TRUE(contains(found.error().message, "CUTEGEN_PROMPTS_DIR=" + (dir / "missing").string() + " has no rules.md"))
        << found.error().message;
  }
  fs::remove_all(dir);
}

TEST(PromptFiles, EmptyPromptFileIsAnError) {
  auto dir = fs::temp_directory_path() / "cutegen_prompt_files_empty_test";
  fs::remove_all(dir);
  fs::copy(repo_root() / "prompts", dir, fs::copy_options::recursive);
  std::ofstream(dir / "menu_conv.md") << "  \n";
  PromptPaths paths{dir, repo_root() / "library"};
  auto lib = PromptLibrary::load(paths);
  ASSERT_FALSE(lib.ok());
  EXPECT_TRUE(contains(lib.error().message, "menu_conv.md (the conv optimisation menu) is empty")) << lib.error().message;
  fs::remove_all(dir);
}

TEST(PromptFiles, LoadsEveryLibraryKernelThePromptsCanShow) {
  unsetenv("CUTEGEN_PROMPTS_DIR");
  auto paths = locate_prompt_paths();
  ASSERT_TRUE(paths.ok()) << paths.error().message;
  auto lib = PromptLibrary::load(*paths);
  ASSERT_TRUE(lib.ok()) << lib.error().message;
  for (std::string_view file : example_files()) {
    const ExampleKernel& k = lib->example(file);
    EXPECT_EQ(k.file, file);
    EXPECT_TRUE(contains(k.source, "cutegen_forward")) << file << " is not a contract kernel";
    EXPECT_TRUE(contains(k.source, "cutegen:knob")) << file << " declares no knobs";
  }
  EXPECT_THROW(lib->example("gemm_tiled.cu"), std::out_of_range) << "a toy is no longer shown";
}

TEST(PromptFiles, AMissingLibraryKernelStopsTheLoad) {
  auto dir = fs::temp_directory_path() / "cutegen_prompt_files_examples";
  fs::remove_all(dir);
  fs::create_directories(dir / "kernels");
  for (const auto& e : fs::directory_iterator(repo_root() / "library"))
    if (e.path().filename() != "rmsnorm_channels.cu") fs::copy_file(e.path(), dir / "kernels" / e.path().filename());
  PromptPaths paths{repo_root() / "prompts", dir / "kernels"};
  auto lib = PromptLibrary::load(paths);
  ASSERT_FALSE(lib.ok());
  EXPECT_TRUE(contains(lib.error().message, "rmsnorm_channels.cu (a library kernel the prompts show)"))
      << lib.error().message;
  fs::remove_all(dir);
}

TEST(PromptFiles, WorkloadClassNames) {
  for (WorkloadClass c : all_workload_classes()) {
    auto parsed = parse_workload_class(to_string(c));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, c);
  }
  auto bad = parse_workload_class("matmul");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(contains(bad.error().message, "use one of: gemm, elementwise, reduction, conv, attention, other"))
      << bad.error().message;
}

TEST(PromptFiles, VerdictsMapOntoFailureKinds) {
  EXPECT_EQ(*failure_kind_for_verdict(Verdict::compile_error), FailureKind::compile_error);
  EXPECT_EQ(*failure_kind_for_verdict(Verdict::rejected), FailureKind::rejected);
  EXPECT_EQ(*failure_kind_for_verdict(Verdict::hidden_work), FailureKind::runtime_error);
  EXPECT_EQ(*failure_kind_for_verdict(Verdict::host_compute), FailureKind::runtime_error);
  EXPECT_EQ(*failure_kind_for_verdict(Verdict::nondeterministic), FailureKind::wrong_result);
  EXPECT_EQ(*failure_kind_for_verdict(Verdict::result_reuse), FailureKind::wrong_result);
  EXPECT_FALSE(failure_kind_for_verdict(Verdict::pass).ok());
  // Every failing verdict the judge can give is one the prompts know how to describe.
  for (int v = static_cast<int>(Verdict::compile_error); v <= static_cast<int>(kLastVerdict); ++v)
    EXPECT_TRUE(failure_kind_for_verdict(static_cast<Verdict>(v)).ok()) << to_string(static_cast<Verdict>(v));
}
