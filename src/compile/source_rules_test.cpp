#include "compile/source_rules.h"

#include <gtest/gtest.h>

#include "common/fs.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

bool refused(const std::string& source, const std::string& code, int line) {
  for (const auto& v : check_source_rules(source))
    if (v.code == code && v.message.rfind("line " + std::to_string(line) + ":", 0) == 0) return true;
  return false;
}

std::string all(const std::vector<CheckViolation>& vs) {
  std::string s;
  for (const auto& v : vs) s += "[" + v.code + "] " + v.message + "\n";
  return s;
}

}  // namespace

TEST(IncludeProblem, AllowsToolkitStandardAndCuteHeadersOnly) {
  for (const char* ok : {"cute/tensor.hpp", "cutlass/numeric_types.h", "cutegen/kernel.h", "cuda_runtime.h", "vector",
                         "cstdint", "cuda/std/atomic", "cub/cub.cuh", "sys/types.h", "bits/c++config.h",
                         "cooperative_groups/reduce.h", "mma.h", "my_helpers.cuh"})
    EXPECT_EQ(include_problem(ok), std::nullopt) << ok;
  for (const char* bad : {"/etc/passwd", "/dev/zero", "../secret.h", "cute/../../../../etc/passwd", "~/.env", ".env",
                          "home/user/.env", "candidate.cu", "kernel.so", "a\\b.h", "", "etc/passwd", "cute/./x.hpp"})
    EXPECT_NE(include_problem(bad), std::nullopt) << bad;
}

TEST(SourceRules, AbsoluteParentAndComputedIncludesAreRefusedWithTheirLine) {
  EXPECT_TRUE(refused("#include <cute/tensor.hpp>\n#include \"/etc/passwd\"\n", "include-not-allowed", 2));
  EXPECT_TRUE(refused("\n\n#  include </dev/zero>\n", "include-not-allowed", 3));
  EXPECT_TRUE(refused("#include \"../outside.h\"\n", "include-not-allowed", 1));
  EXPECT_TRUE(refused("#define F \"/etc/passwd\"\n#include F\n", "include-computed", 2));
  EXPECT_TRUE(refused("#include_next <vector>\n", "include-not-allowed", 1));
  EXPECT_TRUE(refused("#import \"x.h\"\n", "include-not-allowed", 1));
  EXPECT_TRUE(refused("#if __has_include(\"/etc/passwd\")\n#endif\n", "include-not-allowed", 1));
  EXPECT_TRUE(refused("#if __has_include(SECRET)\n#endif\n", "include-computed", 1));
  auto msg = all(check_source_rules("#include \"/etc/passwd\"\n"));
  EXPECT_NE(msg.find("/etc/passwd"), std::string::npos) << msg;
  EXPECT_NE(msg.find("<cute/...>"), std::string::npos) << msg;  // says what to do instead
}

TEST(SourceRules, DirectiveSpellingsDoNotHideAnInclude) {
  EXPECT_TRUE(refused("%:include \"/etc/passwd\"\n", "include-not-allowed", 1));                   // digraph
  EXPECT_TRUE(refused("# /* gap */ include \"/etc/passwd\"\n", "include-not-allowed", 1));         // comment
  EXPECT_TRUE(refused("int a;\n#inc\\\nlude \"/etc/passwd\"\n", "include-not-allowed", 2));        // splice
  EXPECT_TRUE(refused("#include /* x\n */ \"/etc/passwd\"\n", "include-not-allowed", 1));           // multi-line comment
  EXPECT_TRUE(refused("  \t#\tinclude\t</dev/zero>\n", "include-not-allowed", 1));
}

// GCC (nvcc's preprocessor for both sides) takes form feed, vertical tab and NUL as blanks and a lone
// carriage return as a line end, and skips a byte-order mark: each was a directive the rules missed.
TEST(SourceRules, BlanksAndLineEndsAsTheirPreprocessorReadsThemDoNotHideADirective) {
  using namespace std::string_literals;
  EXPECT_TRUE(refused("int a;\n\f#line 5 \"cute/tensor.hpp\"\n", "line-directive", 2));
  EXPECT_TRUE(refused("int a;\n\v#line 5 \"cute/tensor.hpp\"\n", "line-directive", 2));
  EXPECT_TRUE(refused("int a;\n\0#line 5 \"cute/tensor.hpp\"\n"s, "line-directive", 2));
  EXPECT_TRUE(refused("int a;\n#\f\v line 5 \"cute/tensor.hpp\"\n", "line-directive", 2));
  EXPECT_TRUE(refused("int a;\n#\0line 5\n"s, "line-directive", 2));
  EXPECT_TRUE(refused("int a;\r#line 5 \"cute/tensor.hpp\"\n", "line-directive", 2));
  EXPECT_TRUE(refused("int a;\r\n\r# 5 \"cute/tensor.hpp\"\n", "line-directive", 3));
  EXPECT_TRUE(refused("\xEF\xBB\xBF#line 5 \"cute/tensor.hpp\"\n", "line-directive", 1));
  EXPECT_TRUE(refused("int a;\r#include </etc/passwd>\n", "include-not-allowed", 2));
  EXPECT_TRUE(refused("\f#\vinclude </etc/passwd>\n", "include-not-allowed", 1));
  EXPECT_TRUE(refused("#li\\\r\nne 5 \"cute/tensor.hpp\"\n", "line-directive", 1));  // spliced across CR LF
  // A splice still joins across blanks before the line end, and a literal keeps its contents.
  EXPECT_TRUE(check_source_rules("#define A 1 \\\r\n+2\nconst char* s = \"a\\f#line 3\";\n").empty());
}

TEST(SourceRules, LineDirectivesAndGnuLinemarkersAreRefused) {
  EXPECT_TRUE(refused("int a;\n#line 10 \"cute/tensor.hpp\"\n", "line-directive", 2));
  EXPECT_TRUE(refused("# 1 \"/usr/include/cute/tensor.hpp\"\n__global__ void k() {}\n", "line-directive", 1));
  EXPECT_TRUE(refused("#123\n", "line-directive", 1));
}

TEST(SourceRules, EmbedAndFileReadingAssemblerAreRefused) {
  EXPECT_TRUE(refused("const char d[] = {\n#embed \"/etc/passwd\"\n};\n", "embed", 2));
  EXPECT_TRUE(refused("#if __has_embed(\"/etc/passwd\")\n#endif\n", "embed", 1));
  EXPECT_TRUE(refused("asm(\".incbin \\\"/etc/passwd\\\"\");\n", "asm-reads-file", 1));
  EXPECT_TRUE(refused("asm(R\"(.include \"/etc/passwd\")\");\n", "asm-reads-file", 1));
  EXPECT_TRUE(refused("#define S(x) #x\nasm(S(.incbin \"/etc/passwd\"));\n", "asm-reads-file", 2));
}

TEST(SourceRules, PragmasThatChangeHowFilesAreFoundAreRefused) {
  EXPECT_TRUE(refused("#pragma GCC dependency \"/etc/passwd\"\n", "pragma-not-allowed", 1));
  EXPECT_TRUE(refused("#pragma GCC system_header\n", "pragma-not-allowed", 1));
  EXPECT_TRUE(refused("_Pragma(\"GCC dependency \\\"/etc/passwd\\\"\")\n", "pragma-not-allowed", 1));
  EXPECT_TRUE(refused("#define P(x) _Pragma(#x)\n", "pragma-not-allowed", 1));
  EXPECT_TRUE(check_source_rules("#pragma once\n#pragma unroll\n_Pragma(\"unroll\")\n").empty());
}

TEST(SourceRules, HostCodeAtLoadOrUnloadIsRefused) {
  EXPECT_TRUE(refused("__attribute__((constructor)) void f() {}\n", "load-time-code", 1));
  EXPECT_TRUE(refused("static void g() __attribute__ ((__destructor__));\n", "load-time-code", 1));
  EXPECT_TRUE(refused("__attribute__((used, constructor(101))) void f() {}\n", "load-time-code", 1));
  EXPECT_TRUE(refused("[[gnu::constructor]] void f() {}\n", "load-time-code", 1));
  EXPECT_TRUE(refused("[[gnu::destructor]] void f() {}\n", "load-time-code", 1));
  EXPECT_TRUE(refused("__attribute__((section(\".init_array\"))) void (*p)() = f;\n", "load-time-code", 1));
  EXPECT_TRUE(refused("[[gnu::section(\".fini_array\")]] void (*p)() = f;\n", "load-time-code", 1));
  EXPECT_TRUE(refused("__attribute__((section(\".ctors\"))) void (*p)() = f;\n", "load-time-code", 1));
  EXPECT_TRUE(refused("asm(\".pushsection .init_array\");\n", "load-time-code", 1));
  EXPECT_TRUE(refused("int x;\nvoid f() { atexit(g); }\n", "load-time-code", 2));
  EXPECT_TRUE(refused("void f() { at_quick_exit(g); }\n", "load-time-code", 1));
}

TEST(SourceRules, BuildTimeMacrosAreRefused) {
  EXPECT_TRUE(refused("constexpr char t[] = __TIME__;\n", "nondeterministic-build", 1));
  EXPECT_TRUE(refused("const char* d = __DATE__ __TIMESTAMP__;\n", "nondeterministic-build", 1));
}

TEST(SourceRules, CommentsAndLiteralsAreNotCode) {
  std::string src =
      "// #include \"/etc/passwd\" and __attribute__((constructor)) in a comment\n"
      "/* #line 3\n"
      "#include </dev/zero> */\n"
      "const char* a = \"#include </dev/zero> [[gnu::constructor]] atexit __TIME__\";\n"
      "const char* b = R\"x(\n"
      "#include \"/etc/passwd\"\n"
      "# 1 \"cute/tensor.hpp\"\n"
      ")x\";\n"
      "char c = '#'; long d = 1'000'000; char e = '\\'';\n"
      "#include <cute/tensor.hpp>\n"
      "int constructor_count = 0;  // a variable named like the attribute is fine\n";
  auto v = check_source_rules(src);
  EXPECT_TRUE(v.empty()) << all(v);
}

TEST(SourceRules, ExamplesAndHonestTestKernelsPass) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(CUTEGEN_SOURCE_DIR) / "library")) files.push_back(e.path());
  for (const char* t : {"tma_copy.cu", "wgmma_gemm.cu", "cp_async_cluster.cu", "cute_1d_index.cu", "import_doors.cu"})
    files.push_back(fs::path(CUTEGEN_TESTDATA) / t);
  ASSERT_GE(files.size(), 8u);
  for (const auto& f : files) {
    auto text = read_file(f);
    ASSERT_TRUE(text.ok()) << f;
    auto v = check_source_rules(*text);
    EXPECT_TRUE(v.empty()) << f << "\n" << all(v);
  }
}

// A file that issues wgmma must define NDEBUG before its first #include: an assert expanded in any header's
// device code (CuTe's TMA traits, CUTLASS's fast_math.h) is a call, and ptxas then serialises every wgmma of
// the kernel -- no error, only a "Potential Performance Loss" note. The library convolution defined it after
// cute/tensor.hpp and ran its TMA path that way for a week of measurements.
TEST(SourceRules, WgmmaLibraryFilesDefineNdebugBeforeAnyHeader) {
  int checked = 0;
  for (const auto& e : fs::directory_iterator(fs::path(CUTEGEN_SOURCE_DIR) / "library")) {
    auto text = read_file(e.path());
    ASSERT_TRUE(text.ok()) << e.path();
    if (text->find("GMMA") == std::string::npos && text->find("collective_builder") == std::string::npos) continue;
    ++checked;
    const auto define = text->find("#define NDEBUG");
    const auto include = text->find("#include");
    ASSERT_NE(include, std::string::npos) << e.path();
    EXPECT_LT(define, include) << e.path() << ": #define NDEBUG must come before the first #include";
  }
  EXPECT_GE(checked, 4) << "the GEMMs and the convolution issue wgmma";
}
