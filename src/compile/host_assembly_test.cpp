#include "compile/host_assembly.h"

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen;
using cutegen::testing::contains;
using cutegen::testing::TempDir;

namespace {

std::string all_messages(const std::vector<CheckViolation>& vs) {
  std::string s;
  for (const auto& v : vs) s += "[" + v.code + "] " + v.message + "\n";
  return s;
}

}  // namespace

// Every way GNU as 2.40 was seen to obey a file-reading directive (tried with `as` on a secret file):
// any letter case, after labels, after ';' or a C comment, and built by the assembler's own macros.
TEST(HostAssembly, EveryStatementThatCouldReadAFileIsRefused) {
  for (const char* s : {
           "\t.incbin \"/etc/passwd\"\n",
           "\t.INCBIN \"/etc/passwd\"\n",
           "\t.IncBin\t\"/etc/passwd\",0,16\n",
           "leak: .incbin \"/etc/passwd\"\n",
           "a: b: .incbin \"/etc/passwd\"\n",
           "\tnop; .incbin \"/etc/passwd\"\n",
           "\tnop;.incbin\"/etc/passwd\"\n",
           "/* c */.incbin \"/etc/passwd\"\n",
           "\t.section .rodata ; .include \"/etc/passwd\"\n",
           "\t.INCLUDE \"/etc/passwd\"\n",
           // Text generators: each of these put `.incbin` together from pieces in a test with `as`.
           ".macro m a,b\n.\\a\\()\\b \"/etc/passwd\"\n.endm\nm inc,bin\n",
           ".irp d,incbin\n.\\d \"/etc/passwd\"\n.endr\n",
           ".irpc c,i\n.\\c\\()ncbin \"/etc/passwd\"\n.endr\n",
           ".altmacro\n",
           ".MACRO m\n.endm\n",
           ".mri 1\n",
       }) {
    auto v = check_host_assembly(s);
    ASSERT_FALSE(v.empty()) << s;
    EXPECT_EQ(v.front().code, "asm-reads-file") << s;
  }
}

// What GCC writes for honest host code: names that contain a refused word are not directives.
TEST(HostAssembly, OrdinaryCompilerOutputPasses) {
  const char* s =
      "\t.file\t\"candidate.cudafe1.cpp\"\n"
      "\t.section\t.rodata.include,\"a\"\n"
      ".LC0:\n\t.string\t\"see foo.include\"\n"
      "\t.text\n\t.globl\t_ZN4cute7includeEv\n"
      "_ZN4cute7includeEv:\n\tcall\t_ZN7incbin5macroEv@PLT\n"
      "\t.incbinx 1\n"  // another (unknown) directive
      "\t.rept 2\n\tnop\n\t.endr\n"
      "\t.ident\t\"GCC: (Debian 12.2.0-14) 12.2.0\"\n";
  EXPECT_TRUE(check_host_assembly(s).empty()) << all_messages(check_host_assembly(s));
}

// The message quotes the statement (the candidate's own asm text, made printable) so its author can find it.
TEST(HostAssembly, TheMessageQuotesTheStatement) {
  auto v = check_host_assembly("\t.section .rodata\nleak: .incbin \"/etc/shadow\", 0, 64\x1b[2J\n\t.text\n");
  ASSERT_EQ(v.size(), 1u) << all_messages(v);
  EXPECT_TRUE(contains(v[0].message, "'leak: .incbin \"/etc/shadow\", 0, 64?[2J'")) << v[0].message;
  EXPECT_TRUE(contains(v[0].message, "reads a file")) << v[0].message;
  auto macro = check_host_assembly(".macro m a,b\n.endm\n");
  ASSERT_EQ(macro.size(), 1u);
  EXPECT_TRUE(contains(macro[0].message, "'.macro m a,b'")) << macro[0].message;
}

TEST(HostAssembly, ManyStatementsAreSummarised) {
  std::string s;
  for (int i = 0; i < 20; ++i) s += ".incbin \"/f" + std::to_string(i) + "\"\n";
  auto v = check_host_assembly(s);
  ASSERT_EQ(v.size(), 9u);
  EXPECT_TRUE(contains(v.back().message, "not listed")) << v.back().message;
}

TEST(HostAssembly, EveryKeptAssemblyFileIsRead) {
  TempDir dir;
  ASSERT_TRUE(write_file_atomic(dir.path / "candidate.s", "\t.text\n\tret\n").ok());
  ASSERT_TRUE(write_file_atomic(dir.path / "kernel_dlink.s", "\t.incbin \"/etc/passwd\"\n").ok());
  ASSERT_TRUE(write_file_atomic(dir.path / "candidate.ii", ".incbin is preprocessed C++ here, not assembly\n").ok());
  auto v = check_kept_host_assembly(dir.path, "candidate", true);
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->size(), 1u) << all_messages(*v);
  EXPECT_TRUE(contains((*v)[0].message, "/etc/passwd"));
}

// A build that succeeded must have left the candidate's assembly: otherwise the check saw nothing.
TEST(HostAssembly, AMissingCandidateAssemblyIsAnErrorOnlyWhenTheBuildRanTheAssembler) {
  TempDir dir;
  auto required = check_kept_host_assembly(dir.path, "candidate", true);
  ASSERT_FALSE(required.ok());
  EXPECT_TRUE(contains(required.error().message, "candidate.s")) << required.error().message;
  auto failed_build = check_kept_host_assembly(dir.path, "candidate", false);
  ASSERT_TRUE(failed_build.ok());
  EXPECT_TRUE(failed_build->empty());
}
