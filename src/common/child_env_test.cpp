#include "common/child_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/line_process.h"
#include "common/process.h"

using namespace cutegen;
using namespace std::chrono_literals;

namespace {

// Sets a variable for one test and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

bool has(const std::vector<std::string>& env, const std::string& entry) {
  return std::find(env.begin(), env.end(), entry) != env.end();
}
bool has_name(const std::vector<std::string>& env, const std::string& name) {
  return std::any_of(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; });
}

}  // namespace

TEST(EnvAllowList, KeepsWhatToolsNeed) {
  for (const char* name : {"PATH", "LANG", "LC_ALL", "TZ", "TERM", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
                           "CUDA_HOME", "NVIDIA_VISIBLE_DEVICES", "CUTEGEN_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR",
                           "TRITON_CACHE_DIR", "CXX", "OMP_NUM_THREADS", "PYTORCH_CUDA_ALLOC_CONF"})
    EXPECT_TRUE(env_name_allowed(name)) << name;
}

TEST(EnvAllowList, DropsSecretsAndWhatPointsIntoTheUsersAccounts) {
  for (const char* name : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_KEY", "GITHUB_TOKEN", "HF_TOKEN",
                           "AWS_SECRET_ACCESS_KEY", "CUTEGEN_TEST_KEY", "CUDA_TOKEN", "TORCH_PASSWORD",
                           "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "HOME", "TMPDIR", "XDG_CACHE_HOME",
                           "NVCC_PREPEND_FLAGS", "PYTHONPATH", "LD_PRELOAD", ""})
    EXPECT_FALSE(env_name_allowed(name)) << name;
}

TEST(ChildEnvironment, AllowListHidesKeysAndMovesHomeAndTmpdir) {
  ScopedEnv key("OPENAI_API_KEY", "sk-test-secret");
  ScopedEnv path("CUTEGEN_T_VISIBLE", "yes");
  ProcessSpec spec{.env = {{"PYTHONPATH", "/opt/worker"}}, .private_dir = "/tmp/private-home"};
  auto env = child_environment(spec);
  EXPECT_FALSE(has_name(env, "OPENAI_API_KEY"));
  EXPECT_TRUE(has(env, "CUTEGEN_T_VISIBLE=yes"));
  EXPECT_TRUE(has(env, "HOME=/tmp/private-home"));
  EXPECT_TRUE(has(env, "TMPDIR=/tmp/private-home"));
  EXPECT_TRUE(has(env, "PYTHONPATH=/opt/worker"));  // set by the caller, so it passes
}

TEST(ChildEnvironment, WithoutAPrivateDirectoryThereIsNoHome) {
  ScopedEnv home("HOME", "/home/someone");
  auto env = child_environment(ProcessSpec{});
  EXPECT_FALSE(has_name(env, "HOME"));
  EXPECT_FALSE(has_name(env, "TMPDIR"));
}

TEST(ChildEnvironment, InheritModePassesEverything) {
  ScopedEnv key("OPENAI_API_KEY", "sk-test-secret");
  ProcessSpec spec{.environment = ProcessSpec::Environment::inherit};
  EXPECT_TRUE(has(child_environment(spec), "OPENAI_API_KEY=sk-test-secret"));
}

TEST(ChildEnvironment, PosixProcessRunnerAppliesIt) {
  ScopedEnv key("OPENAI_API_KEY", "sk-test-secret");
  auto dir = make_unique_dir(std::filesystem::temp_directory_path(), "cutegen-env-");
  ASSERT_TRUE(dir.ok());
  PosixProcessRunner r;
  auto res = r.run({.argv = {"sh", "-c", "echo ${OPENAI_API_KEY:-absent} $HOME $TMPDIR"}, .private_dir = *dir});
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->out, fmt::format("absent {} {}\n", dir->string(), dir->string()));
  auto inherited = r.run({.argv = {"sh", "-c", "echo ${OPENAI_API_KEY:-absent}"},
                          .environment = ProcessSpec::Environment::inherit});
  ASSERT_TRUE(inherited.ok());
  EXPECT_EQ(inherited->out, "sk-test-secret\n");
  std::filesystem::remove_all(*dir);
}

TEST(ChildEnvironment, LineProcessAppliesIt) {
  ScopedEnv key("ANTHROPIC_API_KEY", "sk-ant-test-secret");
  auto p = LineProcess::start({.argv = {"sh", "-c", "echo ${ANTHROPIC_API_KEY:-absent}"}}, "/dev/null");
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto line = p->read_line(5s);
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(*line, "absent");
}
