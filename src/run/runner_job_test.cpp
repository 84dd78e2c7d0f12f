// The runner's inputs and its reply format, on the CPU: the session and profiling job files, the
// serve protocol's commands, and the call reply the worker parses (python/cutegen_worker/runner_link.py).
#include "run/runner_job.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
namespace fs = std::filesystem;

#include "run/runner_sandbox.h"

#include "common/fs.h"

using namespace cutegen;

namespace {

nlohmann::json ref(uint64_t ptr) {
  return {{"kind", "tensor"}, {"dtype", "float32"}, {"shape", {4}}, {"stride", {1}}, {"nbytes", 16},
          {"ipc_handle", nullptr}, {"offset", 0}, {"data_ptr", ptr}};
}

}  // namespace

TEST(RunnerSession, ParsesTheSlotWithScalarPlaceholders) {
  nlohmann::json j = {{"library", "/c/kernel.so"}, {"device", 1}, {"private_dir", "/w/runner-1"},
                      {"inputs", {ref(64), nullptr}}, {"params", {ref(128)}},
                      {"outputs", {{ref(256)}, {ref(512)}}}};
  auto s = parse_runner_session(j);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->library, "/c/kernel.so");
  EXPECT_EQ(s->device, 1);
  ASSERT_EQ(s->inputs.size(), 2u);
  EXPECT_TRUE(s->inputs[0].has_value());
  EXPECT_FALSE(s->inputs[1].has_value());
  EXPECT_EQ(s->params.size(), 1u);
  ASSERT_EQ(s->outputs.size(), 2u);
  EXPECT_EQ(s->outputs[1][0].data_ptr, 512u);
  // The whole sandbox by default, narrow rules included.
  EXPECT_TRUE(s->sandbox.files && s->sandbox.syscalls && s->sandbox.deny_threads && s->sandbox.narrow);
  EXPECT_FALSE(s->sandbox.network);
  EXPECT_EQ(s->wait, GpuWait::hybrid);  // the default: a short spin, then the sleep the host-computing check needs
}

TEST(RunnerSession, TheGpuWaitIsBlockPollOrSpin) {
  auto none = nlohmann::json::array();
  nlohmann::json j = {{"library", "/k.so"}, {"private_dir", "/w"}, {"inputs", none}, {"params", none},
                      {"outputs", {{ref(1)}}}, {"wait", "spin"}};
  auto spin = parse_runner_session(j);
  ASSERT_TRUE(spin.ok()) << spin.error().message;
  EXPECT_EQ(spin->wait, GpuWait::spin);
  j["wait"] = "poll";
  EXPECT_EQ(parse_runner_session(j)->wait, GpuWait::poll);
  j["wait"] = "block";
  EXPECT_EQ(parse_runner_session(j)->wait, GpuWait::block);
  j["wait"] = "hybrid";
  EXPECT_EQ(parse_runner_session(j)->wait, GpuWait::hybrid);
  j["wait"] = "sleep";
  auto bad = parse_runner_session(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("expected \"block\", \"poll\", \"spin\" or \"hybrid\""), std::string::npos)
      << bad.error().message;
}

TEST(RunnerSession, RefusesWhatItCannotUse) {
  EXPECT_FALSE(parse_runner_session({{"library", "/k.so"}}).ok());
  auto empty = parse_runner_session({{"library", "/k.so"}, {"private_dir", "/w"}, {"inputs", nlohmann::json::array()},
                                     {"params", nlohmann::json::array()}, {"outputs", nlohmann::json::array()}});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("non-empty list of output sets"), std::string::npos);
  auto none = nlohmann::json::array();
  auto bad = parse_runner_session({{"library", "/k.so"}, {"private_dir", "/w"}, {"inputs", none}, {"params", none},
                                   {"outputs", {{ref(1)}}}, {"sandbox", {{"network", "yes"}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("sandbox.network must be true or false"), std::string::npos);
  auto unknown = parse_sandbox_settings({{"landlock", false}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown sandbox setting `landlock`"), std::string::npos);
}

nlohmann::json workspace_ref(uint64_t ptr, uint64_t bytes) {
  return {{"kind", "tensor"}, {"dtype", "uint8"}, {"shape", {bytes}}, {"stride", {1}}, {"nbytes", bytes},
          {"ipc_handle", nullptr}, {"offset", 0}, {"data_ptr", ptr}};
}

TEST(RunnerSession, TheWorkspaceIsOptionalAndMustBeBytes) {
  nlohmann::json j = {{"library", "/k.so"}, {"private_dir", "/w"}, {"inputs", {ref(64)}},
                      {"params", nlohmann::json::array()}, {"outputs", {{ref(256)}, {ref(512)}}}};
  auto plain = parse_runner_session(j);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_FALSE(plain->workspace.has_value());
  j["workspace"] = workspace_ref(4096, 2 << 20);
  auto with = parse_runner_session(j);
  ASSERT_TRUE(with.ok()) << with.error().message;
  ASSERT_TRUE(with->workspace.has_value());
  EXPECT_EQ(with->workspace->nbytes, uint64_t{2} << 20);
  EXPECT_EQ(with->workspace->data_ptr, 4096u);
  j["workspace"] = ref(4096);  // float32: not a byte buffer
  auto floats = parse_runner_session(j);
  ASSERT_FALSE(floats.ok());
  EXPECT_NE(floats.error().message.find("rank-1 uint8"), std::string::npos) << floats.error().message;
}

TEST(RunnerSession, TheWorkspaceBufferMustHoldWhatTheKernelAskedFor) {
  EXPECT_TRUE(check_workspace_buffer(0, std::nullopt).ok());  // a version-1 kernel
  auto none = check_workspace_buffer(1024, std::nullopt);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("asks for 1024 bytes of workspace but the harness mapped none"),
            std::string::npos);
  auto buffer = parse_tensor_ref(workspace_ref(1, 2048));
  ASSERT_TRUE(buffer.ok());
  EXPECT_TRUE(check_workspace_buffer(2048, *buffer).ok());
  auto small = check_workspace_buffer(4096, *buffer);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.error().message.find("buffer holds 2048"), std::string::npos) << small.error().message;
}

TEST(RunnerProfileJob, CarriesTheWorkspace) {
  nlohmann::json j = {{"library", "/k.so"}, {"private_dir", "/w"}, {"inputs", {ref(1)}}, {"outputs", {ref(2)}},
                      {"workspace", workspace_ref(8, 1 << 20)}};
  auto job = parse_runner_profile_job(j);
  ASSERT_TRUE(job.ok()) << job.error().message;
  ASSERT_TRUE(job->workspace.has_value());
  EXPECT_EQ(job->workspace->nbytes, uint64_t{1} << 20);
  j["workspace"] = nullptr;
  EXPECT_FALSE(parse_runner_profile_job(j)->workspace.has_value());
}

TEST(RunnerProfileJob, ParsesAndChecksCalls) {
  nlohmann::json j = {{"library", "/k.so"}, {"private_dir", "/w"}, {"inputs", {ref(1)}}, {"outputs", {ref(2)}},
                      {"calls", 3}, {"sandbox", {{"network", true}}}};
  auto job = parse_runner_profile_job(j);
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->calls, 3);
  EXPECT_TRUE(job->sandbox.network);
  j["calls"] = 0;
  EXPECT_FALSE(parse_runner_profile_job(j).ok());
}

TEST(RunnerCommand, EveryCommandButQuitCarriesANonce) {
  auto call = parse_runner_command(
      R"({"op":"call","nonce":"ab12","set":1,"scalars":[null,{"kind":"scalar","dtype":"float64","value":0.5}]})");
  ASSERT_TRUE(call.ok()) << call.error().message;
  EXPECT_EQ(call->op, RunnerCommand::Op::call);
  EXPECT_EQ(call->nonce, "ab12");
  EXPECT_EQ(call->output_set, 1);
  ASSERT_EQ(call->scalars.size(), 2u);
  EXPECT_FALSE(call->scalars[0].has_value());
  EXPECT_DOUBLE_EQ(call->scalars[1]->scalar_f, 0.5);
  EXPECT_EQ(parse_runner_command(R"({"op":"quit"})")->op, RunnerCommand::Op::quit);
  EXPECT_FALSE(parse_runner_command(R"({"op":"ping"})").ok());
  using Sweep = RunnerCommand::Sweep;
  EXPECT_EQ(parse_runner_command(R"({"op":"ping","nonce":"p"})")->sweep, Sweep::none);
  EXPECT_EQ(parse_runner_command(R"({"op":"ping","nonce":"p","sweep":true})")->sweep, Sweep::own);
  EXPECT_EQ(parse_runner_command(R"({"op":"ping","nonce":"p","sweep":"own"})")->sweep, Sweep::own);
  EXPECT_EQ(parse_runner_command(R"({"op":"ping","nonce":"p","sweep":"footprint"})")->sweep, Sweep::footprint);
  EXPECT_FALSE(parse_runner_command(R"({"op":"ping","nonce":"p","sweep":"yes"})").ok());
  EXPECT_FALSE(parse_runner_command(R"({"op":"ping","nonce":"p","sweep":1})").ok());
  EXPECT_EQ(parse_runner_command(R"({"op":"ping","nonce":"p"})")->repeat, 1);
  EXPECT_EQ(parse_runner_command(R"({"op":"ping","nonce":"p","sweep":"own","repeat":32})")->repeat, 32);
  for (const char* bad : {R"({"op":"ping","nonce":"p","repeat":0})", R"({"op":"ping","nonce":"p","repeat":1025})",
                          R"({"op":"ping","nonce":"p","repeat":2.5})", R"({"op":"ping","nonce":"p","repeat":"32"})"})
    EXPECT_FALSE(parse_runner_command(bad).ok()) << bad;
  EXPECT_FALSE(parse_runner_command(R"({"op":"format_disk","nonce":"x"})").ok());
  EXPECT_FALSE(parse_runner_command("not json").ok());
  auto tensor_as_scalar = parse_runner_command(nlohmann::json{{"op", "call"}, {"nonce", "n"}, {"scalars", {ref(1)}}}.dump());
  EXPECT_FALSE(tensor_as_scalar.ok());
}

TEST(RunnerCommand, LoadCarriesTheScalarsTheWorkspaceSizeIsAskedWith) {
  auto load = parse_runner_command(R"({"op":"load","nonce":"n1","scalars":[null,{"kind":"scalar","dtype":"int64","value":3}]})");
  ASSERT_TRUE(load.ok()) << load.error().message;
  EXPECT_EQ(load->op, RunnerCommand::Op::load);
  ASSERT_EQ(load->scalars.size(), 2u);
  EXPECT_EQ(load->scalars[1]->scalar_i, 3);
  EXPECT_TRUE(parse_runner_command(R"({"op":"load","nonce":"n2"})")->scalars.empty());
}

TEST(RunnerCommand, TheLoadReplyReportsTheWorkspaceSize) {
  auto line = load_reply("cd34", uint64_t{3} << 30);
  ASSERT_EQ(line.find('\n'), line.size() - 1);
  auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["nonce"], "cd34");
  EXPECT_EQ(j["ready"], true);
  EXPECT_EQ(j["workspace_bytes"].get<uint64_t>(), uint64_t{3} << 30);
  EXPECT_EQ(nlohmann::json::parse(load_reply("x", 0))["workspace_bytes"], 0);  // the worker refuses it
  EXPECT_TRUE(nlohmann::json::parse(load_reply("x", std::nullopt))["workspace_bytes"].is_null());  // version 1
}

TEST(RunnerCommand, TheCallReplyIsOneJsonLine) {
  auto line = call_reply("ab12", 1000, "CUTEGEN_ERROR_BAD_ARGUMENTS", "", 0.25);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["nonce"], "ab12");
  EXPECT_EQ(j["rc"], 1000);
  EXPECT_EQ(j["rc_name"], "CUTEGEN_ERROR_BAD_ARGUMENTS");
  EXPECT_TRUE(j["cuda_error"].is_null());
  EXPECT_DOUBLE_EQ(j["event_ms"].get<double>(), 0.25);
}

TEST(RunnerSandboxPolicy, StartReadsOnlyLoadedLibrariesTheDriversFilesAndTheCandidate) {
  namespace fs = std::filesystem;
  auto root = make_unique_dir(fs::temp_directory_path(), "cutegen-runner-policy-");
  ASSERT_TRUE(root.ok());
  // A driver directory that also holds a CUDA math library (as on systems with the toolkit from packages).
  fs::create_directories(*root / "driver");
  fs::create_directories(*root / "cache/ab");
  fs::create_directories(*root / "private");
  for (const char* f : {"driver/libcuda.so.1", "driver/libnvidia-ptxjitcompiler.so.1", "driver/libnvidia-nvvm.so.4",
                        "driver/libnvidia-ml.so.1", "driver/libcublas.so.13",
                        "cache/ab/kernel.so", "cache/ab/outcome.json", "libcudart.so.13"})
    ASSERT_TRUE(write_file_atomic(*root / f, "x").ok());
  RunnerSandboxSettings settings;
  settings.narrow = false;  // `wide`: all of /proc readable, all of /dev writable (the narrow rules: below)
  auto p = runner_start_policy(settings, *root / "private", *root / "cache/ab/kernel.so",
                               {*root / "libcudart.so.13", *root / "gone.so"}, *root / "driver");
  EXPECT_EQ(p.syscalls, SandboxPolicy::Syscalls::unrestricted);  // seccomp comes once CUDA is up
  EXPECT_TRUE(p.die_with_parent);
  EXPECT_TRUE(p.confine_tcp);
  auto has = [&](const fs::path& path) { return std::find(p.read_paths.begin(), p.read_paths.end(), path) != p.read_paths.end(); };
  EXPECT_TRUE(has("/proc") && has("/sys"));  // wide
  EXPECT_TRUE(has(*root / "libcudart.so.13"));
  EXPECT_TRUE(has(*root / "driver/libcuda.so.1") && has(*root / "driver/libnvidia-ml.so.1"));
  // The driver's run-time compilers stay closed: a candidate could compile hidden PTX past the CuTe check.
  EXPECT_FALSE(has(*root / "driver/libnvidia-ptxjitcompiler.so.1"));
  EXPECT_FALSE(has(*root / "driver/libnvidia-nvvm.so.4"));
  auto preloaded = runner_start_policy(settings, *root / "private", *root / "cache/ab/kernel.so",
                                       {*root / "driver/libnvidia-ptxjitcompiler.so.1"}, *root / "driver");
  EXPECT_NE(std::find(preloaded.read_paths.begin(), preloaded.read_paths.end(),
                      *root / "driver/libnvidia-ptxjitcompiler.so.1"), preloaded.read_paths.end())
      << "a compiler the runner had loaded before its sandbox (it stays mapped either way)";
  EXPECT_FALSE(has(*root / "driver/libcublas.so.13")) << "a math library beside the driver stays unreadable";
  EXPECT_FALSE(has(*root / "driver"));
  EXPECT_TRUE(has(*root / "cache/ab/kernel.so"));
  EXPECT_FALSE(has(*root / "cache/ab")) << "the candidate file, not its directory";
  EXPECT_FALSE(has(*root / "gone.so"));
  for (const char* broad : {"/usr", "/lib", "/etc", "/opt", "/root", "/home"}) EXPECT_FALSE(has(broad)) << broad;
  ASSERT_EQ(p.write_paths.size(), 3u);
  EXPECT_EQ(p.write_paths[0], *root / "private");
  EXPECT_EQ(p.write_paths[1], "/dev");
  EXPECT_EQ(p.write_paths[2], fs::path("/proc") / std::to_string(getpid()) / "task");  // thread names, nothing else
  ASSERT_TRUE(p.file_size_bytes.has_value());
  settings.network = true;
  ASSERT_EQ(setenv("CUDA_INJECTION64_PATH", (*root / "ncu/target/libInjection.so").c_str(), 1), 0);
  fs::create_directories(*root / "ncu/target");
  // cutegen starts ncu with a private HOME (ncu-home); the runner under ncu inherits it.
  const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  fs::create_directories(*root / "ncu-home");
  ASSERT_EQ(setenv("HOME", (*root / "ncu-home").c_str(), 1), 0);
  auto profiled = runner_start_policy(settings, *root / "private", *root / "cache/ab/kernel.so", {}, {});
  unsetenv("CUDA_INJECTION64_PATH");
  if (home.empty()) unsetenv("HOME");
  else setenv("HOME", home.c_str(), 1);
  EXPECT_FALSE(profiled.confine_tcp);
  EXPECT_NE(std::find(profiled.read_paths.begin(), profiled.read_paths.end(), *root / "ncu"), profiled.read_paths.end());
  auto writes = [&](const fs::path& x) {
    return std::find(profiled.write_paths.begin(), profiled.write_paths.end(), x) != profiled.write_paths.end();
  };
  EXPECT_TRUE(writes("/tmp"));
  EXPECT_TRUE(writes(*root / "ncu-home"));
  if (fs::exists("/dev/shm")) {
    EXPECT_TRUE(writes("/dev/shm"));
  }
  EXPECT_EQ(std::count(profiled.write_paths.begin(), profiled.write_paths.end(), fs::path("/proc")), 0);
  settings.files = false;
  auto open = runner_start_policy(settings, *root / "private", *root / "cache/ab/kernel.so", {}, {});
  EXPECT_TRUE(open.read_paths.empty() && open.write_paths.empty());
  fs::remove_all(*root);
}

TEST(RunnerSandboxPolicy, LoadAppliesTheRunnerProfileExceptUnderTheProfiler) {
  RunnerSandboxSettings settings;
  auto p = runner_load_policy(settings, 7);
  EXPECT_EQ(p.syscalls, SandboxPolicy::Syscalls::runner);
  EXPECT_TRUE(p.deny_threads);
  EXPECT_EQ(p.violation_fd, 7);
  // Under ncu: threads and TCP open, other processes (ncu, the worker, cutegen) still out of reach.
  settings.network = true;
  EXPECT_EQ(runner_load_policy(settings, 7).syscalls, SandboxPolicy::Syscalls::profiler);
  settings.syscalls = false;  // CUTEGEN_RUNNER_SANDBOX=files-only or off
  EXPECT_EQ(runner_load_policy(settings, 7).syscalls, SandboxPolicy::Syscalls::unrestricted);
  settings.syscalls = true;
  settings.network = false;
  settings.deny_threads = false;
  EXPECT_FALSE(runner_load_policy(settings, 7).deny_threads);
}

// ncu starts the runner from a thread of its own: a parent-death signal would kill the runner when
// that thread ends (every profile on the H200 failed that way).
TEST(RunnerSandboxPolicy, UnderTheProfilerTheRunnerDoesNotDieWithItsParentThread) {
  RunnerSandboxSettings settings;
  EXPECT_TRUE(runner_start_policy(settings, "/tmp/p", "/tmp/k.so", {}, {}).die_with_parent);
  settings.network = true;
  auto p = runner_start_policy(settings, "/tmp/p", "/tmp/k.so", {}, {});
  EXPECT_FALSE(p.die_with_parent);
  // ncu's libraries read the system and share memory through /dev/shm; still not /etc as a whole, nor
  // a home directory, nor other processes' /proc entries.
  auto has = [](const std::vector<fs::path>& v, const char* x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  if (fs::exists("/usr")) {
    EXPECT_TRUE(has(p.read_paths, "/usr"));
  }
  if (fs::exists("/dev/shm")) {
    EXPECT_TRUE(has(p.write_paths, "/dev/shm"));
  }
  for (const char* no : {"/etc", "/root", "/home", "/proc", "/"}) EXPECT_FALSE(has(p.read_paths, no)) << no;
  // ncu's target libraries that arrive without CUDA_INJECTION64_PATH (preloaded, or already loaded):
  // their whole installation is readable, which the H200 bisect showed the injection needs.
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-ncu-");
  ASSERT_TRUE(dir.ok());
  const fs::path lib = *dir / "nsight-compute/2025.3/target/linux-x64/libTreeLauncherTargetInjection.so";
  fs::create_directories(lib.parent_path());
  auto with_loaded = runner_start_policy(settings, "/tmp/p", "/tmp/k.so", {lib}, {});
  EXPECT_TRUE(has(with_loaded.read_paths, (*dir / "nsight-compute/2025.3").c_str()));
  fs::remove_all(*dir);
}

TEST(RunnerSandboxPreset, NamesTheSameSettingsAsTheWorker) {
  auto full = runner_sandbox_preset("full");
  ASSERT_TRUE(full.ok());
  auto parsed = parse_sandbox_settings(*full);
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->files && parsed->syscalls && parsed->deny_threads && parsed->narrow && !parsed->network);
  auto off = parse_sandbox_settings(*runner_sandbox_preset("off"));
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->files || off->syscalls || off->deny_threads);
  EXPECT_FALSE(parse_sandbox_settings(*runner_sandbox_preset("wide"))->narrow);
  for (const char* name : {"threads", "syscalls-only", "files-only"}) EXPECT_TRUE(runner_sandbox_preset(name).ok()) << name;
  auto bad = runner_sandbox_preset("none");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("CUTEGEN_RUNNER_SANDBOX=none is not one of"), std::string::npos);
}

TEST(RunnerSandboxPolicy, NarrowReadsOnlyItsOwnProcAndWritesOnlyTheGpusNodes) {
  namespace fs = std::filesystem;
  auto root = make_unique_dir(fs::temp_directory_path(), "cutegen-runner-narrow-");
  ASSERT_TRUE(root.ok());
  fs::create_directories(*root / "private");
  ASSERT_TRUE(write_file_atomic(*root / "kernel.so", "x").ok());
  RunnerSandboxSettings settings;  // narrow by default
  auto p = runner_start_policy(settings, *root / "private", *root / "kernel.so", {}, {});
  auto reads = [&](const fs::path& path) { return std::count(p.read_paths.begin(), p.read_paths.end(), path) > 0; };
  auto writes = [&](const fs::path& path) { return std::count(p.write_paths.begin(), p.write_paths.end(), path) > 0; };
  EXPECT_FALSE(reads("/proc")) << "other processes' environments";
  EXPECT_TRUE(reads(fs::path("/proc") / std::to_string(getpid())));
  EXPECT_FALSE(writes("/dev")) << "/dev/shm";
  EXPECT_TRUE(reads("/dev/urandom"));
  for (const auto& w : p.write_paths) {
    auto s = w.string();
    EXPECT_TRUE(w == *root / "private" || s.rfind("/dev/nvidia", 0) == 0 || s.rfind("/proc/", 0) == 0) << s;
  }
  fs::remove_all(*root);
}

// A runner started as root reads any process's environment through /proc unless it loses root's
// capabilities (the H200 run: attacks/sandbox/rt_read_environ.cu found cutegen's key in its grandparent's).
TEST(RunnerSandboxPolicy, WithoutCapabilitiesRootCannotReadAnotherProcesssEnvironment) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: what is dropped is root's capabilities";
  // A non-dumpable process of our own stands in for cutegen (which sets PR_SET_DUMPABLE 0).
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t target = fork();
  ASSERT_GE(target, 0);
  if (target == 0) {
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    char c = 1;
    (void)!write(ready[1], &c, 1);
    pause();
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  std::string environ = "/proc/" + std::to_string(target) + "/environ";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool before = std::ifstream(environ).good();
    if (!drop_capabilities().ok()) _exit(3);
    bool after = std::ifstream(environ).good();
    _exit(before && !after ? 0 : 4);
  }
  int status = 0;
  waitpid(child, &status, 0);
  kill(target, SIGKILL);
  waitpid(target, nullptr, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: the drop failed; 4: readable before and after, or never";
}
