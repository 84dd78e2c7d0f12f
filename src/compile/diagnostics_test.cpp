#include "compile/diagnostics.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen;

namespace {
std::string fixture(const std::string& name) {
  auto text = read_file(std::string(CUTEGEN_TESTDATA) + "/" + name);
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? *text : "";
}
int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
}  // namespace

// A real nvcc log (326 lines, 19 errors) for a CuTe rank mistake in cute_rank_error.cu.
TEST(CondenseNvccLog, CollapsesTemplateBacktracesOntoTheCandidatesLines) {
  auto log = fixture("nvcc_cute_rank_error.log");
  auto src = fixture("cute_rank_error.cu");
  auto d = condense_nvcc_log(log, "bad.cu", src);
  EXPECT_EQ(d.total_errors, 19);
  ASSERT_EQ(d.errors.size(), 3u);  // lines 12, 13, 14 of the candidate
  EXPECT_EQ(d.errors[0].candidate_line, 12);
  EXPECT_NE(d.errors[0].message.find("logical_divide: Too many modes in tiler."), std::string::npos);
  EXPECT_EQ(d.errors[0].origin, "cute/layout.hpp:1572");
  ASSERT_FALSE(d.errors[0].via.empty());
  EXPECT_EQ(d.errors[0].via.front(), "cute::local_partition");
  EXPECT_GT(d.errors[0].follow_on, 0);
  EXPECT_EQ(d.errors[1].candidate_line, 13);
  EXPECT_EQ(d.errors[2].candidate_line, 14);
  // The offending source line is quoted, [with ...] noise is gone, and it is short.
  EXPECT_NE(d.text.find("local_partition(tA, make_layout(make_shape(Int<8>{}, Int<4>{}, Int<2>{}))"), std::string::npos);
  EXPECT_EQ(d.text.find("[with"), std::string::npos);
  EXPECT_LE(count_lines(d.text), 40);
  EXPECT_NE(d.text.find("bad.cu:12:"), std::string::npos);
}

TEST(CondenseNvccLog, RespectsTheErrorLimit) {
  auto d = condense_nvcc_log(fixture("nvcc_cute_rank_error.log"), "bad.cu", fixture("cute_rank_error.cu"), 1);
  EXPECT_EQ(d.errors.size(), 1u);
  EXPECT_EQ(d.distinct_errors, 3);
  EXPECT_NE(d.text.find("first 1 shown"), std::string::npos);
}

TEST(CondenseNvccLog, DirectErrorInTheCandidate) {
  std::string log =
      "k.cu(7): error: identifier \"undefined_symbol_here\" is undefined\n"
      "    int unused = undefined_symbol_here;\n"
      "                 ^\n\n"
      "1 error detected in the compilation of \"k.cu\".\n";
  std::string src = "1\n2\n3\n4\n5\n6\n    int unused = undefined_symbol_here;\n";
  auto d = condense_nvcc_log(log, "k.cu", src);
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_EQ(d.errors[0].candidate_line, 7);
  EXPECT_TRUE(d.errors[0].origin.empty());
  EXPECT_NE(d.text.find("    7 |     int unused = undefined_symbol_here;"), std::string::npos);
}

TEST(CondenseNvccLog, PtxasErrorsHaveNoLineButAreKept) {
  std::string log =
      "ptxas error   : Entry function '_Z6kernelPf' uses too much shared data (0x20000 bytes, 0xc000 max)\n"
      "ptxas error   : Entry function '_Z6kernelPf' uses too much shared data (0x20000 bytes, 0xc000 max)\n";
  auto d = condense_nvcc_log(log, "k.cu", "");
  EXPECT_EQ(d.total_errors, 2);
  ASSERT_EQ(d.errors.size(), 1u);  // duplicates collapse
  EXPECT_EQ(d.errors[0].candidate_line, 0);
  EXPECT_NE(d.errors[0].message.find("ptxas: Entry function"), std::string::npos);
}

TEST(CondenseNvccLog, HostCompilerErrorsInNvccsGeneratedStub) {
  // The anonymous-namespace clash between a candidate and CuTe surfaces as g++ errors in nvcc's stub file.
  auto d = condense_nvcc_log(fixture("nvcc_anon_namespace_stub_error.log"), "relu_vec.cu", "");
  ASSERT_FALSE(d.errors.empty());
  EXPECT_NE(d.errors[0].message.find("is ambiguous"), std::string::npos);
  EXPECT_LE(count_lines(d.text), 40);
}

TEST(CondenseNvccLog, UnrecognisedOutputShowsTheTail) {
  auto d = condense_nvcc_log("Segmentation fault (core dumped)\n", "k.cu", "");
  EXPECT_TRUE(d.errors.empty());
  EXPECT_NE(d.text.find("Segmentation fault"), std::string::npos);
  EXPECT_NE(d.text.find("not recognised"), std::string::npos);
}

// What nvcc printed for a candidate that included a file with a secret in it (CUDA 13.0).
TEST(RedactNvccLog, TextFromFilesOutsideTheAllowedRootsIsNotShown) {
  std::string log =
      "/home/user/.env(1): error: this declaration has no storage class or type specifier\n"
      "  OPENAI_API_KEY=sk-secret-123\n"
      "  ^\n"
      "\n"
      "/home/user/.env(1): error: identifier \"sk\" is undefined\n"
      "  OPENAI_API_KEY=sk-secret-123\n"
      "                 ^\n"
      "\n"
      "/home/user/.env:2:5: error: found ':' in nested-name-specifier, expected '::'\n"
      "    2 | root:x:0:0:root:/root:/bin/bash\n"
      "      |     ^\n"
      "candidate.cu(7): error: identifier \"undefined_name\" is undefined\n"
      "    float x = undefined_name;\n"
      "              ^\n"
      "\n"
      "/opt/cutlass/include/cute/layout.hpp(1572): error: static assertion failed with \"Too many modes\"\n"
      "      static_assert(false, \"Too many modes\");\n"
      "      ^\n"
      "          detected during:\n"
      "            instantiation of \"void k()\" at line 9 of candidate.cu\n"
      "            instantiation of \"void leak() [with T=root]\" at line 2 of /home/user/.env\n"
      "\n"
      "5 errors detected in the compilation of \"candidate.cu\".\n";
  auto redacted = redact_nvcc_log(log, {"candidate.cu", {"/opt/cutlass/include", "/usr/include"}});
  for (const char* secret : {"sk-secret", "OPENAI_API_KEY", "root:x", "\"sk\"", "T=root"})
    EXPECT_EQ(redacted.find(secret), std::string::npos) << secret << "\n" << redacted;
  // One line for the run of reports from the file, without their line numbers.
  EXPECT_NE(redacted.find("/home/user/.env: (text from /home/user/.env not shown)\ncandidate.cu(7)"), std::string::npos)
      << redacted;
  EXPECT_EQ(redacted.find(".env(1)"), std::string::npos) << redacted;
  EXPECT_EQ(redacted.find(".env:2"), std::string::npos) << redacted;
  // The candidate's own errors and CuTe's keep their text.
  EXPECT_NE(redacted.find("identifier \"undefined_name\" is undefined\n    float x = undefined_name;"), std::string::npos);
  EXPECT_NE(redacted.find("static_assert(false, \"Too many modes\");"), std::string::npos);
  EXPECT_NE(redacted.find("at line 9 of candidate.cu"), std::string::npos);
  EXPECT_NE(redacted.find("5 errors detected"), std::string::npos);
  // The condensed diagnostic built from it quotes nothing of the file either, even when every error is
  // outside the candidate and it falls back to quoting the log's last lines.
  auto d = condense_nvcc_log(redacted, "candidate.cu", "int a;\n");
  EXPECT_EQ(d.text.find("sk-secret"), std::string::npos) << d.text;
  auto only_outside = redact_nvcc_log(log.substr(0, log.find("candidate.cu(7)")), {"candidate.cu", {"/opt/cutlass/include"}});
  auto fallback = condense_nvcc_log(only_outside + "nvcc exited\n", "candidate.cu", "");
  EXPECT_EQ(fallback.text.find("sk-secret"), std::string::npos) << fallback.text;
  EXPECT_EQ(fallback.text.find("root:x"), std::string::npos) << fallback.text;
}

TEST(RedactNvccLog, PathTricksDoNotMakeAFileQuotable) {
  std::string log = "/opt/cutlass/include/../../../etc/passwd(1): error: expected a declaration\n  root:x:0:0\n  ^\n"
                    "./candidate.cu(3): error: expected a \";\"\n  int a\n  ^\n";
  auto redacted = redact_nvcc_log(log, {"candidate.cu", {"/opt/cutlass/include"}});
  EXPECT_EQ(redacted.find("root:x"), std::string::npos) << redacted;
  EXPECT_NE(redacted.find("  int a\n"), std::string::npos) << redacted;
}

// The issue-32 probe: an asm string spelled "\x2einclude \"/etc/passwd\"" made the host assembler read
// the file, and its messages ("Error:", capitalised, which the redaction once did not know) quoted it
// line by line. Whatever word follows a location, the file it names decides.
TEST(RedactNvccLog, AssemblerMessagesFromAnotherFileAreHiddenWhateverTheirWords) {
  std::string log =
      "/tmp/stage/ccLdXZLr.s: Assembler messages:\n"
      "/etc/passwd:19: Error: junk at end of line, first unrecognized character is `:'\n"
      "/etc/passwd:24: Error: no such instruction: `postgresql administrator,,,:/var/lib/postgresql:/bin/bash'\n"
      "/etc/passwd:25: Warning: root:x:0:0\n"
      "/etc/passwd:26:  Info: macro invoked from here daemon:x:1:1\n"
      "/usr/bin/ld:/etc/shadow:1: ignoring invalid character `r' in expression\n"
      "In file included from /etc/hostname:3,\n"
      "                 from candidate.cu:2:\n"
      "/etc/hostname: In function 'void gpu_box_7()':\n"
      "/etc/hostname:1:5: note: gpu-box-7 here\n"
      "    1 | gpu-box-7\n"
      "candidate.cu:3: Warning: end of file not at end of a line\n"
      "/usr/bin/ld: kept-build/candidate.o: in function `cutegen_forward':\n"
      "candidate.cu:(.text+0x1d): undefined reference to `helper(int)'\n"
      "collect2: error: ld returned 1 exit status\n";
  auto redacted = redact_nvcc_log(log, {"candidate.cu", {"/opt/cutlass/include", "/usr/include"}});
  for (const char* secret : {"postgresql", "root:x", "daemon:x", "invalid character `r'", "gpu-box-7", "gpu_box_7",
                             ":19:", ":24:", ":3,"})
    EXPECT_EQ(redacted.find(secret), std::string::npos) << secret << "\n" << redacted;
  EXPECT_EQ(count_lines(redacted.substr(0, redacted.find("candidate.cu:3"))), 4) << redacted;  // one per file
  EXPECT_NE(redacted.find("/etc/passwd: (text from /etc/passwd not shown)\n/usr/bin/ld:/etc/shadow: (text from"),
            std::string::npos) << redacted;
  // The candidate's own reports and the linker's about its symbols stay as they were.
  EXPECT_NE(redacted.find("candidate.cu:3: Warning: end of file not at end of a line\n"), std::string::npos) << redacted;
  EXPECT_NE(redacted.find("in function `cutegen_forward':\ncandidate.cu:(.text+0x1d): undefined reference to `helper(int)'"),
            std::string::npos) << redacted;
  EXPECT_NE(redacted.find("collect2: error: ld returned 1 exit status"), std::string::npos) << redacted;
}

// A symbolic link beneath an allowed root may lead anywhere: the file it resolves to decides.
TEST(RedactNvccLog, ALinkBeneathAnAllowedRootDoesNotMakeItsTargetQuotable) {
  cutegen::testing::TempDir root;
  std::error_code ec;
  std::filesystem::create_directory_symlink("/etc", root.path / "etc_link", ec);
  ASSERT_FALSE(ec) << ec.message();
  std::filesystem::create_directory(root.path / "cute", ec);
  ASSERT_TRUE(write_file_atomic(root.path / "cute" / "layout.hpp", "// header\n").ok());
  std::string log = (root.path / "etc_link/passwd").string() + ":1: Error: no such instruction: `root:x:0:0'\n" +
                    (root.path / "cute/layout.hpp").string() + "(3): error: a real header's report\n";
  auto redacted = redact_nvcc_log(log, {"candidate.cu", {root.path}});
  EXPECT_EQ(redacted.find("root:x"), std::string::npos) << redacted;
  EXPECT_NE(redacted.find("a real header's report"), std::string::npos) << redacted;
}

// ptxas prints the serialised-wgmma note as `ptxas info`, with the kernel's whole mangled name; the library
// convolution shipped with one unnoticed (its NDEBUG came after cute/tensor.hpp).
TEST(PerformanceWarnings, SerialisedWgmmaIsFoundOnceWithTheKernelNameShortened) {
  const std::string name = "_ZN7cutlass13device_kernelINS_4conv6kernel13ConvUniversalINS1_16ConvProblemShapeILNS1_8Op"
                           "eratorE0ELi2EEEN7conv_ig8tma_path17PromotingMainloopEEEvNT_6ParamsE";
  const std::string note = "ptxas info    : (C7510) Potential Performance Loss: wgmma.mma_async instructions are "
                           "serialized due to wgmma pipeline crossing function boundary at a function call in the "
                           "function '" + name + "'";
  const std::string log = "ptxas info    : Used 150 registers\n" + note + "\n" + note + "\r\n" +
                          "candidate.cu(12): warning #177-D: variable \"x\" was declared but never referenced\n";
  auto found = performance_warnings(log);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rfind("(C7510) Potential Performance Loss: wgmma.mma_async instructions are serialized", 0), 0u)
      << found[0];
  EXPECT_NE(found[0].find(name.substr(0, 60) + "..."), std::string::npos) << found[0];
  EXPECT_EQ(found[0].find(name), std::string::npos) << "the whole mangled name was kept";
  EXPECT_TRUE(performance_warnings("ptxas info    : Used 150 registers\n").empty());
}
