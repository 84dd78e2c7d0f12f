#include "compile/nvcc_plan.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/process.h"
#include "compile/compile_options.h"
#include "compile/nvcc_compiler.h"
#include "compile/stub_ahead.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

std::string plan_read(const fs::path& p) {
  auto text = read_file(p);
  EXPECT_TRUE(text.ok()) << p;
  return text.ok() ? *text : "";
}

// nvcc 13.0's --dryrun of cutegen's build command (kept-build as --keep-dir), paths shortened.
NvccPlan recorded_plan() {
  auto plan = parse_nvcc_dryrun(plan_read(fs::path(CUTEGEN_TESTDATA) / "nvcc13_dryrun.txt"));
  EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().message);
  return plan.ok() ? *plan : NvccPlan{};
}

std::size_t index_of(const NvccPlan& plan, const std::string& start) {
  for (std::size_t i = 0; i < plan.commands.size(); ++i)
    if (plan.commands[i].rfind(start, 0) == 0) return i;
  ADD_FAILURE() << "no command starts with " << start;
  return 0;
}

}  // namespace

TEST(NvccPlan, TheDryRunSplitsIntoTheChildrensEnvironmentAndTheirCommands) {
  auto plan = recorded_plan();
  ASSERT_EQ(plan.commands.size(), 12u);
  EXPECT_EQ(plan.commands.front(), "rm kept-build/kernel_dlink.reg.c");
  EXPECT_EQ(plan.commands[2].substr(0, 9), "cudafe++ ");
  EXPECT_EQ(plan.commands[4].substr(0, 18), "\"$CICC_PATH/cicc\" ");
  bool cicc_path = false, space = false;
  for (const auto& [name, value] : plan.env) {
    cicc_path |= name == "CICC_PATH" && value == "/usr/local/cuda/bin/../nvvm/bin";
    space |= name == "_SPACE_" && value == " ";
  }
  EXPECT_TRUE(cicc_path);
  EXPECT_TRUE(space) << "a value is kept verbatim, spaces included";
  EXPECT_FALSE(parse_nvcc_dryrun("nvcc fatal   : Unknown option '--bogus'\n").ok());
}

TEST(NvccPlan, TheFrontEndRunsBesideTheDeviceCompileOnTheIdItIsGiven) {
  auto plan = recorded_plan();
  auto build = overlapped_build(plan, "kept-build");
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_EQ(build->module_id_file, "kept-build/candidate.module_id");
  EXPECT_EQ(build->device_image, "kept-build/candidate.cubin");
  const auto s = build->chains + build->rest;
  EXPECT_EQ(s.find("--gen_module_id_file"), std::string::npos) << "cudafe++ must read the id, not make its own";
  EXPECT_NE(s.find("CICC_PATH='/usr/local/cuda/bin/../nvvm/bin'; export CICC_PATH"), std::string::npos);
  // nvcc's removal of a file not made yet does not fail the build.
  EXPECT_NE(s.find("rm -f kept-build/kernel_dlink.reg.c || exit $?"), std::string::npos);
  // Two background chains: the front end (its preprocessing, cudafe++), the device compile (its
  // preprocessing, cicc, ptxas, fatbinary); then the host compile and the link, in order, after both.
  auto front = s.find("cudafe++"), device = s.find("$CICC_PATH/cicc"), waits = s.find("wait $device");
  auto host = s.find(" -c -x c++ ");
  ASSERT_NE(front, std::string::npos);
  ASSERT_NE(device, std::string::npos);
  ASSERT_NE(waits, std::string::npos);
  ASSERT_NE(host, std::string::npos);
  EXPECT_LT(front, device);
  EXPECT_LT(device, waits);
  EXPECT_LT(waits, host);
  EXPECT_NE(s.find("&\nfront=$!"), std::string::npos);
  EXPECT_NE(s.find("&\ndevice=$!"), std::string::npos);
  const auto ptxas = s.find("ptxas -arch=sm_90a"), fatbin = s.find("fatbinary --create=");
  EXPECT_TRUE(device < ptxas && ptxas < fatbin && fatbin < waits) << s;
  // The host compile and the link are the second script's, which has the environment too.
  EXPECT_EQ(build->chains.find(" -c -x c++ "), std::string::npos);
  EXPECT_NE(build->rest.find("CICC_PATH='/usr/local/cuda/bin/../nvvm/bin'; export CICC_PATH"), std::string::npos);
  EXPECT_EQ(build->rest.find("cudafe++"), std::string::npos);
  // A failed chain ends the script after its own output: an error is reported once.
  EXPECT_NE(s.find("[ $front_status -eq 0 ] || exit $front_status"), std::string::npos);
}

// The host compile from the early stub (stub_ahead.h): a second cicc, in its own directory, ended by an
// option libnvvm refuses; the device chain on its own; the host compile to assembly there; the assembler
// and the link after.
TEST(NvccPlan, TheHostCompileCanStartFromAnEarlyStub) {
  auto build = overlapped_build(recorded_plan(), "kept-build");
  ASSERT_TRUE(build.ok()) << build.error().message;
  const auto& a = build->ahead;
  ASSERT_TRUE(a.why_not.empty()) << a.why_not;
  EXPECT_EQ(a.source, "candidate.cu");
  EXPECT_EQ(a.stub, "kept-build/candidate.cudafe1.stub.c");
  EXPECT_EQ(a.fatbin_include, "kept-build/candidate.fatbin.c");
  EXPECT_EQ(a.embedded_fatbin, "kept-build/candidate.fatbin.c");
  EXPECT_EQ(a.assembly, "kept-build/candidate.s");
  // The front end beside the early chain, which runs in its own directory and stops after cicc's front end.
  const auto early = a.front.find("( cd 'stub-ahead' && ");
  ASSERT_NE(early, std::string::npos) << a.front;
  EXPECT_NE(a.front.find(std::string("--Xlibnvvm ") + kStopAfterFrontEnd, early), std::string::npos);
  EXPECT_LT(a.front.find("cudafe++"), early);
  EXPECT_EQ(a.front.find("ptxas"), std::string::npos);
  EXPECT_NE(a.front.find("exit $front_status"), std::string::npos) << "the early cicc's refusal is not the build's status";
  // The device chain whole; the host compile alone, to assembly, in the early directory; then the rest.
  for (const char* tool : {"$CICC_PATH/cicc", "ptxas", "fatbinary --create="})
    EXPECT_NE(a.device.find(tool), std::string::npos) << tool;
  EXPECT_EQ(a.device.find("cudafe++"), std::string::npos);
  EXPECT_EQ(a.device.find(kStopAfterFrontEnd), std::string::npos);
  EXPECT_NE(a.host.find("cd 'stub-ahead' || exit $?"), std::string::npos) << a.host;
  EXPECT_NE(a.host.find("'-S'"), std::string::npos) << a.host;
  EXPECT_EQ(a.host.find("nvlink"), std::string::npos);
  const auto assemble = a.after.find("'assembler' 'kept-build/candidate.s'"), link = a.after.find("nvlink");
  ASSERT_NE(assemble, std::string::npos) << a.after;
  EXPECT_LT(assemble, link);
  EXPECT_EQ(a.after.find("'-S'"), std::string::npos);
}

// The host compile through the precompiled prefix (host_pch.h): -S instead of -c and -save-temps (which
// would preprocess without the header's macros), an unusable .gch an error, then the driver assembling the
// assembly the check reads; and the header's own compile with the same flags as a c++-header.
TEST(NvccPlan, TheHostCompileHasAVariantThroughThePrecompiledPrefix) {
  auto build = overlapped_build(recorded_plan(), "kept-build");
  ASSERT_TRUE(build.ok()) << build.error().message;
  ASSERT_TRUE(build->no_host_pch.empty()) << build->no_host_pch;
  EXPECT_EQ(build->host_source, "kept-build/candidate.cudafe1.cpp");
  const std::string& r = build->rest_with_pch;
  auto to_s = r.find("'-S' '-Winvalid-pch' '-Werror=invalid-pch'");
  ASSERT_NE(to_s, std::string::npos) << r;
  const std::string line = r.substr(to_s, r.find('\n', to_s) - to_s);
  EXPECT_NE(line.find("'kept-build/candidate.cudafe1.cpp' '-o' 'kept-build/candidate.s'"), std::string::npos) << line;
  EXPECT_EQ(r.find("-save-temps=obj' '-O3"), std::string::npos) << "the host compile through the .gch keeps -save-temps";
  EXPECT_EQ(line.find("'-c'"), std::string::npos);
  auto assemble = r.find("'gcc' '-m64' '-c' '-x' 'assembler' 'kept-build/candidate.s' '-o' 'kept-build/candidate.o'");
  EXPECT_GT(assemble, to_s) << r;
  // The other steps (the device link, the library's link) are nvcc's, in order after it.
  EXPECT_GT(r.find("nvlink"), assemble);
  EXPECT_EQ(build->rest.find("'-S'"), std::string::npos) << "the plain steps changed";
  EXPECT_NE(r.find("CICC_PATH='/usr/local/cuda/bin/../nvvm/bin'; export CICC_PATH"), std::string::npos);

  const std::string& p = build->pch_script;
  EXPECT_NE(p.find("'-x' 'c++-header'"), std::string::npos) << p;
  EXPECT_NE(p.find("'cutegen-host-prefix.h' '-o' 'cutegen-host-prefix.h.gch'"), std::string::npos) << p;
  EXPECT_NE(p.find("'-O3'"), std::string::npos);
  EXPECT_NE(p.find("'-D__CUDA_ARCH_LIST__=900'"), std::string::npos);
  for (const char* absent : {"'-c'", "save-temps", "candidate.cudafe1.cpp", "candidate.o"})
    EXPECT_EQ(p.find(absent), std::string::npos) << absent << " in\n" << p;
}

TEST(NvccPlan, AHostCompileOfAnotherShapeHasNoPrecompiledVariantAndSaysWhy) {
  const auto good = recorded_plan();
  std::size_t host = 0;
  while (host < good.commands.size() && good.commands[host].find(" -c -x c++ ") == std::string::npos) ++host;
  ASSERT_LT(host, good.commands.size());
  auto without = [&](auto change) {
    auto p = good;
    change(p.commands[host]);
    auto b = overlapped_build(p, "kept-build");
    EXPECT_TRUE(b.ok()) << "the overlapped build itself must not depend on it";
    EXPECT_TRUE(b.ok() && b->rest_with_pch.empty() && b->pch_script.empty());
    // Nor can the host compile start from the early stub, which runs that variant: it says why too.
    EXPECT_TRUE(b.ok() && b->ahead.front.empty() && b->ahead.host.empty() &&
                b->ahead.why_not.find(b->no_host_pch) != std::string::npos)
        << (b.ok() ? b->ahead.why_not : "");
    return b.ok() ? b->no_host_pch : std::string("not built");
  };
  EXPECT_NE(without([](std::string& c) { c += " $EXTRA"; }).find("shell expansion"), std::string::npos);
  EXPECT_NE(without([](std::string& c) { c.replace(c.find(" -c "), 4, " -E "); }).find("not `-c -x c++"), std::string::npos);
  EXPECT_NE(without([](std::string& c) { c.replace(c.find("candidate.cudafe1.cpp"), 21, "other.cpp"); }).find("no step reads"),
            std::string::npos);
}

TEST(NvccPlan, APlanOfAnotherShapeIsRefusedSayingHow) {
  const auto good = recorded_plan();
  const auto front = index_of(good, "cudafe++"), cicc = index_of(good, "\"$CICC_PATH/cicc\"");
  {
    auto p = good;  // two device compiles (-arch=sm_90a gives compute_90 PTX besides)
    p.commands.insert(p.commands.begin() + cicc, p.commands[cicc]);
    auto r = overlapped_build(p, "kept-build");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("one cicc"), std::string::npos) << r.error().message;
  }
  {
    auto p = good;  // cudafe++ that does not make the id: nothing says cicc may start first
    auto& c = p.commands[front];
    c.replace(c.find("--gen_module_id_file "), 21, "");
    auto r = overlapped_build(p, "kept-build");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("does not generate the module id"), std::string::npos);
  }
  {
    auto p = good;  // the device chain reading what the front end writes
    p.commands[cicc] += " --extra \"kept-build/candidate.cudafe1.cpp\"";
    auto r = overlapped_build(p, "kept-build");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("reads kept-build/candidate.cudafe1.cpp"), std::string::npos) << r.error().message;
  }
  {
    auto p = good;  // the front end reading what the device compile writes
    p.commands[front] += " --extra kept-build/candidate.ptx";
    auto r = overlapped_build(p, "kept-build");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("front end reads kept-build/candidate.ptx"), std::string::npos);
  }
  {
    auto p = good;  // no preprocessing before cudafe++
    p.commands.erase(p.commands.begin() + front - 1);
    EXPECT_FALSE(overlapped_build(p, "kept-build").ok());
  }
}

TEST(NvccPlan, EnvironmentValuesAreQuotedForTheShell) {
  NvccPlan p = recorded_plan();
  p.env.emplace_back("ODD", "it's $HOME `x`");
  auto build = overlapped_build(p, "kept-build");
  ASSERT_TRUE(build.ok());
  EXPECT_NE(build->chains.find("ODD='it'\\''s $HOME `x`'; export ODD"), std::string::npos) << build->chains;
}

TEST(NvccPlan, ModuleIdsHaveNvccsShapeAndOnlyOthersAreForeign) {
  const auto id = module_id_for("candidate.cu", "375b697b0fd58afb9");
  EXPECT_EQ(id, "_375b697b_12_candidate_cu_0fd58afb");
  const std::string text = fmt::format("_ZN43_INTERNAL{}5scaleE _GLOBAL__N_{}6ignoreE", id, id);
  EXPECT_TRUE(foreign_module_ids(text, "candidate.cu", id).empty());
  auto foreign = foreign_module_ids(text + " _ZN43_INTERNAL_e94c4985_12_candidate_cu_20b18ec65scaleE", "candidate.cu", id);
  EXPECT_EQ(foreign, std::vector<std::string>{"_e94c4985_12_candidate_cu_20b18ec6"});
}

// On the installed toolkit: nvcc's own build, then the overlapped one given the id nvcc chose, in the same
// directory (the path is in the line table): the libraries are the same bytes. And a compile error is
// reported once, though both chains parse the source.
TEST(NvccPlanRealNvcc, TheOverlappedBuildWritesNvccsLibraryByteForByte) {
  PosixProcessRunner runner;
  CompileOptions options;
  auto toolchain = probe_toolchain(runner, options);
  if (!toolchain.ok()) GTEST_SKIP() << "no CUDA toolkit here: " << toolchain.error().message;
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-nvcc-plan-");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(write_file_atomic(*dir / "candidate.cu", plan_read(fs::path(CUTEGEN_TESTDATA) / "module_id_user.cu")).ok());
  auto cmd = nvcc_command(options, "candidate.cu", "kernel.so",
                          {toolchain->contract_include, toolchain->cutlass_include});
  ASSERT_TRUE(cmd.ok());
  for (const char* a : {"--keep", "--keep-dir", "kept-build"}) cmd->emplace_back(a);
  auto run = [&](std::vector<std::string> argv) {
    // TMPDIR in the test's directory, as the compiler gives its builds: a failed cicc leaves its
    // .lgenfe.bc in TMPDIR, which must not be the machine's /tmp.
    auto r = runner.run({.argv = std::move(argv), .timeout = std::chrono::seconds(300), .cwd = *dir, .private_dir = *dir});
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : ProcessResult{};
  };
  fs::create_directories(*dir / "kept-build");
  auto serial = run(*cmd);
  ASSERT_TRUE(serial.succeeded()) << serial.err;
  const std::string nvcc_library = plan_read(*dir / "kernel.so"), id = plan_read(*dir / "kept-build/candidate.module_id");
  ASSERT_FALSE(id.empty());
  EXPECT_NE(plan_read(*dir / "kept-build/candidate.cudafe1.stub.c").find(id), std::string::npos)
      << "the test kernel must make the stub name the id, or the comparison proves less";
  fs::remove_all(*dir / "kept-build");
  fs::remove(*dir / "kernel.so");
  fs::create_directories(*dir / "kept-build");

  auto dry = *cmd;
  dry.emplace_back("--dryrun");
  auto listed = run(dry);
  ASSERT_TRUE(listed.succeeded());
  auto plan = parse_nvcc_dryrun(listed.err + listed.out);
  ASSERT_TRUE(plan.ok());
  auto build = overlapped_build(*plan, "kept-build");
  ASSERT_TRUE(build.ok()) << build.error().message;
  ASSERT_TRUE(write_file_atomic(*dir / build->module_id_file, id).ok());
  ASSERT_TRUE(write_file_atomic(*dir / "chains.sh", build->chains).ok());
  ASSERT_TRUE(write_file_atomic(*dir / "rest.sh", build->rest).ok());
  auto chains = run({"/bin/sh", "chains.sh"});
  ASSERT_TRUE(chains.succeeded()) << chains.err;
  EXPECT_FALSE(fs::exists(*dir / "kernel.so"));
  EXPECT_TRUE(fs::exists(*dir / build->device_image));
  auto overlapped = run({"/bin/sh", "rest.sh"});
  ASSERT_TRUE(overlapped.succeeded()) << overlapped.err;
  EXPECT_TRUE(plan_read(*dir / "kernel.so") == nvcc_library) << "the overlapped build's library differs from nvcc's";
  EXPECT_TRUE(foreign_module_ids(plan_read(*dir / "kept-build/candidate.ptx"), "candidate.cu", id).empty());

  // The host compile from the early stub (stub_ahead.h), its fatbinary spliced into its assembly: nvcc's
  // library byte for byte as well.
  const auto& a = build->ahead;
  ASSERT_TRUE(a.why_not.empty()) << a.why_not;
  fs::remove(*dir / "kernel.so");
  fs::remove_all(*dir / "kept-build");
  fs::create_directories(*dir / "kept-build");
  const fs::path ahead = *dir / kStubAheadDir;
  fs::create_directories(ahead / "kept-build");
  fs::copy_file(*dir / a.source, ahead / a.source);
  for (const fs::path& root : {*dir, ahead}) ASSERT_TRUE(write_file_atomic(root / build->module_id_file, id).ok());
  for (const auto& [name, text] : {std::pair{"front.sh", a.front}, {"device.sh", a.device}, {"host.sh", a.host},
                                   {"after.sh", a.after}})
    ASSERT_TRUE(write_file_atomic(*dir / name, text).ok());
  auto front = run({"/bin/sh", "front.sh"});
  ASSERT_TRUE(front.succeeded()) << front.err;
  ASSERT_TRUE(fs::exists(ahead / a.stub)) << plan_read(*dir / "kept-build/stub-ahead.log");
  EXPECT_NE(plan_read(*dir / "kept-build/stub-ahead.log").find(kStopAfterFrontEnd), std::string::npos)
      << "the early cicc ends at libnvvm's refusal";
  EXPECT_FALSE(fs::exists(ahead / "kept-build/candidate.ptx")) << "the early cicc went on past its front end";
  for (const auto& e : fs::directory_iterator(*dir))  // the build's TMPDIR: the early cicc's is its own directory
    EXPECT_EQ(e.path().filename().string().find(".lgenfe.bc"), std::string::npos) << e.path();
  ASSERT_TRUE(write_file_atomic(ahead / build->host_source, plan_read(*dir / build->host_source)).ok());
  ASSERT_TRUE(write_file_atomic(ahead / a.fatbin_include, fatbin_placeholder()).ok());
  auto host = run({"/bin/sh", "host.sh"});  // before the device chain: it needs only the stub
  ASSERT_TRUE(host.succeeded()) << host.err;
  auto device = run({"/bin/sh", "device.sh"});
  ASSERT_TRUE(device.succeeded()) << device.err;
  EXPECT_TRUE(plan_read(ahead / a.stub) == plan_read(*dir / a.stub)) << "the early stub is not cicc's";
  const std::string fatbin_c = plan_read(*dir / a.embedded_fatbin);
  EXPECT_EQ(*placeholder_of(fatbin_c), fatbin_placeholder()) << fatbin_c.substr(0, 600);
  auto spliced = splice_fatbin(plan_read(ahead / a.assembly), fatbin_c);
  ASSERT_TRUE(spliced.ok()) << spliced.error().message;
  ASSERT_TRUE(write_file_atomic(*dir / a.assembly, *spliced).ok());
  auto after = run({"/bin/sh", "after.sh"});
  ASSERT_TRUE(after.succeeded()) << after.err;
  EXPECT_TRUE(plan_read(*dir / "kernel.so") == nvcc_library) << "the library built from the early stub differs from nvcc's";

  ASSERT_TRUE(write_file_atomic(*dir / "candidate.cu", "#include <cute/tensor_impl.hpp>\n__global__ void k(float* x) { x[0] = undefined_name; }\n").ok());
  auto failed = run({"/bin/sh", "chains.sh"});
  EXPECT_NE(failed.exit_code, 0);
  const std::string log = failed.out + failed.err;
  auto first = log.find("\"undefined_name\" is undefined");
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("\"undefined_name\" is undefined", first + 1), std::string::npos) << "reported twice:\n" << log;
  fs::remove_all(*dir);
}
