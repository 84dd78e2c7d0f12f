#include "compile/compile_options.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace cutegen;

TEST(CompileOptions, GencodeForTargets) {
  EXPECT_EQ(*gencode_for("sm_90a"), "arch=compute_90a,code=sm_90a");
  EXPECT_EQ(*gencode_for("sm_80"), "arch=compute_80,code=sm_80");
  EXPECT_EQ(*gencode_for("sm_100a"), "arch=compute_100a,code=sm_100a");
  auto bad = gencode_for("hopper");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("sm_90a"), std::string::npos);
}

TEST(CompileOptions, DefaultCommandHasOneGencodePassAndTheRequiredFlags) {
  auto cmd = nvcc_command(CompileOptions{}, "candidate.cu", "kernel.so", {"/inc/a", "/inc/b"});
  ASSERT_TRUE(cmd.ok());
  auto has = [&](const std::string& f) { return std::find(cmd->begin(), cmd->end(), f) != cmd->end(); };
  EXPECT_EQ(std::count(cmd->begin(), cmd->end(), "-gencode"), 1);
  EXPECT_TRUE(has("arch=compute_90a,code=sm_90a"));
  for (const char* f : {"-std=c++17", "-O3", "--expt-relaxed-constexpr", "-shared", "-fPIC", "-lineinfo", "--no-compress",
                        "-I/inc/a", "-I/inc/b", "candidate.cu"})
    EXPECT_TRUE(has(f)) << f;
  EXPECT_FALSE(has("-arch=sm_90a"));  // the shorthand compiles twice
  // The host assembly is kept for the check of file-reading directives (host_assembly.h).
  auto keep = std::find(cmd->begin(), cmd->end(), "-save-temps=obj");
  ASSERT_NE(keep, cmd->end());
  EXPECT_EQ(*(keep - 1), "-Xcompiler");
}

TEST(CompileOptions, ConfigOverridesAndRejectsUnknownKeys) {
  auto j = nlohmann::json::parse(R"({"arch": "sm_80", "extra_flags": ["-Xptxas=-v"], "timeout_s": 12})");
  auto o = apply_compile_config(CompileOptions{}, j);
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->arch, "sm_80");
  EXPECT_EQ(o->extra_flags, std::vector<std::string>{"-Xptxas=-v"});
  EXPECT_EQ(o->timeout.count(), 12);

  auto typo = apply_compile_config(CompileOptions{}, nlohmann::json::parse(R"({"flgs": []})"));
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("compile.flgs"), std::string::npos);
  auto bad_arch = apply_compile_config(CompileOptions{}, nlohmann::json::parse(R"({"arch": "90"})"));
  EXPECT_FALSE(bad_arch.ok());
  auto bad_type = apply_compile_config(CompileOptions{}, nlohmann::json::parse(R"({"flags": "-O3"})"));
  EXPECT_FALSE(bad_type.ok());
}

TEST(CompileOptions, MemoryLimitIsGenerousByDefaultAndConfigurable) {
  EXPECT_EQ(CompileOptions{}.memory_limit_mb, 16384u);
  auto o = apply_compile_config(CompileOptions{}, nlohmann::json::parse(R"({"memory_limit_mb": 8192})"));
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->memory_limit_mb, 8192u);
  for (const char* bad : {R"({"memory_limit_mb": 100})", R"({"memory_limit_mb": "lots"})", R"({"memory_limit_mb": 2048.5})"}) {
    auto r = apply_compile_config(CompileOptions{}, nlohmann::json::parse(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("compile.memory_limit_mb"), std::string::npos);
  }
}

TEST(CompileOptions, TheHostCompileFromTheEarlyStubIsOnByDefaultAndCanBeTurnedOff) {
  EXPECT_TRUE(CompileOptions{}.stub_ahead);
  auto o = apply_compile_config(CompileOptions{}, nlohmann::json::parse(R"({"stub_ahead": false})"));
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_FALSE(o->stub_ahead);
  auto r = apply_compile_config(CompileOptions{}, nlohmann::json::parse(R"({"stub_ahead": "no"})"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("compile.stub_ahead must be true or false"), std::string::npos);
}

TEST(CompileOptions, KeysThatChooseProgramsOrTheirFlagsNeedTrust) {
  for (const char* key : {"nvcc", "host_compiler", "flags", "extra_flags", "memory_limit_mb"})
    EXPECT_TRUE(compile_key_needs_trust(key)) << key;
  for (const char* key : {"arch", "std", "timeout_s"}) EXPECT_FALSE(compile_key_needs_trust(key)) << key;
}

TEST(CompileOptions, DirectDriverCallsAndTheDriverStubAreAlwaysThere) {
  auto cmd = nvcc_command(CompileOptions{}, "candidate.cu", "kernel.so", {"/inc"});
  ASSERT_TRUE(cmd.ok());
  auto has = [&](const std::string& f) { return std::find(cmd->begin(), cmd->end(), f) != cmd->end(); };
  EXPECT_TRUE(has("-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL"));
  EXPECT_TRUE(has("-lcuda"));
}

TEST(CompileOptions, TheCuteAnalysisCompileSeesTheSameSourceFlagsAndMacros) {
  CompileOptions o;
  o.extra_flags = {"-DTILE=128"};
  auto build = nvcc_command(o, "candidate.cu", "kernel.so", {"/inc/a", "/inc/b"});
  auto analysis = cute_analysis_command(o, "candidate.cu", "candidate.analysis.ptx", {"/inc/a", "/inc/b"});
  ASSERT_TRUE(build.ok() && analysis.ok());
  auto has = [&](const std::string& f) { return std::find(analysis->begin(), analysis->end(), f) != analysis->end(); };
  // Every argument is shared, in order, except the few that only say what to produce: a flag given to
  // one compile alone can change what the preprocessor sees (-Xcompiler -fPIC undefines __PIE__).
  auto without = [](std::vector<std::string> cmd, const std::vector<std::vector<std::string>>& drop) {
    for (const auto& seq : drop)
      for (auto it = cmd.begin(); it != cmd.end();) {
        if (static_cast<std::size_t>(cmd.end() - it) >= seq.size() && std::equal(seq.begin(), seq.end(), it))
          it = cmd.erase(it, it + static_cast<std::ptrdiff_t>(seq.size()));
        else
          ++it;
      }
    return cmd;
  };
  // -save-temps only keeps the host assembly for a check; the device translation units stay byte for
  // byte the same (compare_device_code proves it on every build).
  EXPECT_EQ(without(*build, {{"-shared"}, {"-cudart", "shared"}, {"--no-compress"}, {"-Xcompiler", "-save-temps=obj"},
                             {"-o", "kernel.so"}, {"-lcuda"}}),
            without(*analysis, {{"-ptx"}, {"-Xcicc", "-O0"}, {"-o", "candidate.analysis.ptx"}}));
  EXPECT_TRUE(has("-fPIC"));
  // It is device-only PTX without optimisation, into its own file.
  EXPECT_TRUE(has("-ptx"));
  auto o0 = std::find(analysis->begin(), analysis->end(), "-O0");
  ASSERT_NE(o0, analysis->end());
  EXPECT_EQ(*(o0 - 1), "-Xcicc");
  EXPECT_EQ(analysis->back(), "candidate.analysis.ptx");
  EXPECT_FALSE(has("-shared"));
}

TEST(CompileOptions, KnobDefinesReachBothCompilesAfterCutegensOwnMacros) {
  std::vector<Define> defines = {{"BLOCK_THREADS", "512"}, {"VEC", "-4"}};
  auto build = nvcc_command(CompileOptions{}, "candidate.cu", "kernel.so", {"/inc"}, defines);
  auto analysis = cute_analysis_command(CompileOptions{}, "candidate.cu", "candidate.analysis.ptx", {"/inc"}, defines);
  ASSERT_TRUE(build.ok() && analysis.ok());
  for (const auto* cmd : {&*build, &*analysis}) {
    auto own = std::find(cmd->begin(), cmd->end(), "-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL");
    auto knob = std::find(cmd->begin(), cmd->end(), "-DBLOCK_THREADS=512");
    ASSERT_NE(knob, cmd->end());
    EXPECT_LT(own, knob);
    EXPECT_NE(std::find(cmd->begin(), cmd->end(), "-DVEC=-4"), cmd->end());
  }
}

TEST(CompileOptions, DefinesThatCouldBecomeFlagsAreRefused) {
  for (const auto& d : std::vector<Define>{{"A B", "1"}, {"1X", "1"}, {"X", "1 -o /tmp/x"}, {"X", ""}, {"X", "$(id)"}}) {
    auto cmd = nvcc_command(CompileOptions{}, "candidate.cu", "kernel.so", {"/inc"}, {d});
    ASSERT_FALSE(cmd.ok()) << d.name << "=" << d.value;
    EXPECT_NE(cmd.error().message.find("cannot define"), std::string::npos) << cmd.error().message;
  }
}
