#include "compile/load_time_code.h"

#include <gtest/gtest.h>

#include <optional>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/process.h"
#include "common/testdata/test_helpers.h"
#include "compile/library_checks.h"

// The ELF logic on small shared objects that g++ builds the way nvcc's host compile does (-O3 -fPIC,
// linked with crti/crtbeginS like every kernel.so), in a second or two each: no nvcc. The real nvcc
// builds of these attacks are attacks/cute_only/load_time_*.cu (Manifest/AttackKernels).
namespace cutegen {
namespace {
namespace fs = std::filesystem;
using testing::contains;

class LoadTimeCode : public ::testing::Test {
 protected:
  // The library g++ (nvcc's default host compiler, found on PATH as nvcc finds it) builds from
  // `source`, or nullopt (a test failure saying why).
  std::optional<fs::path> build(const std::string& source, const std::string& optimisation = "-O3") {
    fs::path lib = dir_.path / fmt::format("lib{}.so", ++builds_);
    if (!testing::build_shared_object(lib, source, optimisation)) return std::nullopt;
    return lib;
  }
  // Every violation's message, one per line ("" for none).
  std::string violations(const std::string& source, const std::string& optimisation = "-O3") {
    auto lib = build(source, optimisation);
    if (!lib) return "(no library)";
    auto found = check_load_time_code(*lib);
    if (!found.ok()) return "error: " + found.error().message;
    std::string out;
    for (const auto& v : *found) {
      EXPECT_EQ(v.code, kLibraryLoadTimeCode);
      out += v.message + "\n";
    }
    return out;
  }

  testing::TempDir dir_{"cutegen-load-time-"};
  int builds_ = 0;
};

constexpr const char* kEntry = "extern \"C\" int cutegen_forward() { return 0; }\n";

// --- what the toolchain emits for a kernel without globals needing construction ---

TEST_F(LoadTimeCode, TheToolchainsOwnEntriesPass) {
  // crti's _init/_fini, crtbeginS's frame_dummy and __do_global_dtors_aux.
  EXPECT_EQ(violations(kEntry), "");
}

TEST_F(LoadTimeCode, IostreamsInitialiserPassesAtEveryHostOptimisationLevel) {
  // CuTe's config.hpp includes <iostream>: under g++ 12 every kernel has this _GLOBAL__sub_I_, whose
  // code depends on the host compile's -O (compile.flags): -O0 calls a helper that does the work.
  for (const char* level : {"-O3", "-O2", "-Os", "-O1", "-O0"})
    EXPECT_EQ(violations(std::string("#include <iostream>\n") + kEntry, level), "") << level;
}

TEST_F(LoadTimeCode, CodeThatRunsAtFirstUseIsNotLoadTimeCode) {
  // A function-local static and a thread_local are constructed inside a call, where the judge sees it.
  EXPECT_EQ(violations("struct S { S(); int v; };\nS::S() : v(42) {}\nthread_local S t;\n"
                       "extern \"C\" int cutegen_forward() { static S local; return t.v + local.v; }\n"),
            "");
}

// --- what a candidate may try ---

TEST_F(LoadTimeCode, AConstructorAttributeIsRefusedByName) {
  auto v = violations(std::string("__attribute__((constructor)) void at_load() {}\n") + kEntry);
  EXPECT_TRUE(contains(v, "DT_INIT_ARRAY lists at_load()")) << v;
}

TEST_F(LoadTimeCode, ADestructorAttributeIsRefused) {
  auto v = violations(std::string("__attribute__((destructor)) void at_unload() {}\n") + kEntry);
  EXPECT_TRUE(contains(v, "DT_FINI_ARRAY lists at_unload()")) << v;
  EXPECT_TRUE(contains(v, "unloaded")) << v;
}

TEST_F(LoadTimeCode, APointerPlacedInAnInitSectionIsRefused) {
  for (const char* section : {".init_array", ".ctors"}) {  // ld merges .ctors into .init_array
    auto v = violations(fmt::format("static void sneaky() {{}}\n__attribute__((section(\"{}\"), used)) static void "
                                    "(*p)() = sneaky;\n{}",
                                    section, kEntry));
    EXPECT_TRUE(contains(v, "DT_INIT_ARRAY lists sneaky()")) << section << ": " << v;
  }
  for (const char* section : {".fini_array", ".dtors"}) {
    auto v = violations(fmt::format("static void sneaky() {{}}\n__attribute__((section(\"{}\"), used)) static void "
                                    "(*p)() = sneaky;\n{}",
                                    section, kEntry));
    EXPECT_TRUE(contains(v, "DT_FINI_ARRAY lists sneaky()")) << section << ": " << v;
  }
}

TEST_F(LoadTimeCode, AGlobalWithADynamicInitialiserIsRefused) {
  const char* global = "struct S { S(); };\nS::S() {}\nS s;\n";
  // It joins <iostream>'s initialiser in one _GLOBAL__sub_I_ function...
  auto v = violations(std::string("#include <iostream>\n") + global + kEntry);
  EXPECT_TRUE(contains(v, "does more than construct <iostream>'s std::ios_base::Init")) << v;
  // ... or is the only one.
  v = violations(std::string(global) + kEntry);
  EXPECT_TRUE(contains(v, "does more than construct")) << v;
  // At every host optimisation level.
  for (const char* level : {"-O1", "-O0"}) {
    v = violations(std::string("#include <iostream>\n") + global + kEntry, level);
    EXPECT_TRUE(contains(v, "does more than construct")) << level << ": " << v;
  }
  // A non-constant initial value is a dynamic initialiser too, and so is a destructor.
  v = violations(std::string("#include <iostream>\nint f();\nint x = f();\nint f() { return 1; }\n") + kEntry);
  EXPECT_TRUE(contains(v, "does more than construct")) << v;
  v = violations(std::string("#include <iostream>\nstruct D { ~D(); };\nD::~D() {}\nD d;\n") + kEntry);
  EXPECT_TRUE(contains(v, "does more than construct")) << v;
}

TEST_F(LoadTimeCode, IostreamsBytesWithTheCandidatesOwnConstructorAreRefused) {
  // The initialiser is byte for byte <iostream>'s, but Init::Init is the candidate's own (defined
  // here, so reached through a PLT slot the loader fills with this library's function).
  auto v = violations(R"(namespace std { class ios_base { public: class Init { public: Init(); ~Init(); }; }; }
__attribute__((noinline)) std::ios_base::Init::Init() { asm volatile(""); }
__attribute__((noinline)) std::ios_base::Init::~Init() { asm volatile(""); }
static std::ios_base::Init ioinit;
)" + std::string(kEntry));
  EXPECT_TRUE(contains(v, "does more than construct")) << v;
}

TEST_F(LoadTimeCode, AToolchainNameOnTheCandidatesFunctionCountsAgainstTheToolchains) {
  // A local function may carry any name through an asm label: each known entry is allowed as often as
  // the toolchain emits it, once, so the real frame_dummy and the impostor are one too many. (Each
  // impostor does something: g++ drops an empty constructor.)
  auto v = violations(std::string("static volatile int ran;\nstatic void impostor() asm(\"frame_dummy\");\n"
                                  "__attribute__((constructor)) static void impostor() { ran = 1; }\n") + kEntry);
  EXPECT_TRUE(contains(v, "lists frame_dummy twice")) << v;
  v = violations(std::string("static volatile int ran;\nstatic void impostor() asm(\"__do_global_dtors_aux\");\n"
                             "__attribute__((destructor)) static void impostor() { ran = 1; }\n") + kEntry);
  EXPECT_TRUE(contains(v, "lists __do_global_dtors_aux twice")) << v;
  // g++'s initialiser beside an impostor of it: one of the two is refused, whichever comes first.
  v = violations(std::string("#include <iostream>\nstatic volatile int ran;\n"
                             "static void impostor() asm(\"_GLOBAL__sub_I_fake\");\n"
                             "__attribute__((constructor)) static void impostor() { ran = 1; }\n") + kEntry);
  EXPECT_TRUE(contains(v, "_GLOBAL__sub_I_")) << v;
  // A toolchain name in the wrong array is no toolchain entry.
  v = violations(std::string("static volatile int ran;\nstatic void impostor() asm(\"__do_global_dtors_aux\");\n"
                             "__attribute__((constructor)) static void impostor() { ran = 1; }\n") + kEntry);
  EXPECT_TRUE(contains(v, "DT_INIT_ARRAY lists __do_global_dtors_aux:")) << v;
}

TEST_F(LoadTimeCode, AnIfuncWithItsAddressTakenIsRefused) {
  // A global ifunc: the loader runs the resolver to fill the slot holding its address.
  auto v = violations(R"(extern "C" {
static int impl() { return 1; }
static void* resolver() { return (void*)impl; }
int picked() __attribute__((ifunc("resolver")));
int (*volatile keep)() = picked;
}
)" + std::string(kEntry));
  EXPECT_TRUE(contains(v, "picked is a GNU indirect function (ifunc)")) << v;
  // A local one becomes an R_X86_64_IRELATIVE relocation naming the resolver.
  v = violations(R"(extern "C" {
static int impl() { return 1; }
static void* resolver() { return (void*)impl; }
static int picked() __attribute__((ifunc("resolver")));
int (*volatile keep)() = picked;
}
)" + std::string(kEntry));
  EXPECT_TRUE(contains(v, "R_X86_64_IRELATIVE relocation runs the ifunc resolver resolver")) << v;
}

TEST_F(LoadTimeCode, CodeSplicedIntoInitOrFiniIsRefused) {
  // ld puts the candidate's .init piece between crti's prologue and crtn's epilogue of _init.
  auto v = violations(std::string("asm(\".pushsection .init,\\\"ax\\\",@progbits\\n nop\\n .popsection\");\n") +
                      kEntry);
  EXPECT_TRUE(contains(v, "DT_INIT runs code")) << v;
  v = violations(std::string("asm(\".pushsection .fini,\\\"ax\\\",@progbits\\n nop\\n .popsection\");\n") + kEntry);
  EXPECT_TRUE(contains(v, "DT_FINI runs code")) << v;
}

TEST_F(LoadTimeCode, DefiningTheWeakGmonStartHookIsRefused) {
  // crti's _init calls __gmon_start__ when it is defined: a candidate that defines it runs at load.
  auto v = violations(std::string("extern \"C\" void __gmon_start__() {}\n") + kEntry);
  EXPECT_TRUE(contains(v, "DT_INIT runs code")) << v;
}

TEST_F(LoadTimeCode, ALibraryForAnotherMachineIsAnErrorNotAPass) {
  auto lib = build(kEntry);
  ASSERT_TRUE(lib);
  auto bytes = read_file(*lib);
  ASSERT_TRUE(bytes.ok());
  (*bytes)[18] = static_cast<char>(183);  // e_machine = EM_AARCH64
  (*bytes)[19] = 0;
  ASSERT_TRUE(write_file_atomic(*lib, *bytes).ok());
  auto found = check_load_time_code(*lib);
  ASSERT_FALSE(found.ok());
  EXPECT_TRUE(contains(found.error().message, "only in x86-64 libraries")) << found.error().message;
}

// --- which entry points a library exports (library_entry_points: the judge's hint to the worker) ---

using LibraryEntryPoints = LoadTimeCode;

TEST_F(LibraryEntryPoints, TellsThePlainFormFromTheWorkspacePair) {
  auto plain = build(kEntry);
  auto pair = build("extern \"C\" long cutegen_workspace_bytes() { return 64; }\n"
                    "extern \"C\" int cutegen_forward_ws() { return 0; }\n");
  // A function of the right name that is not exported (static) or not a function is no entry point.
  auto hidden = build("static int cutegen_forward() { return 0; }\nint use() { return cutegen_forward(); }\n"
                      "extern \"C\" int cutegen_workspace_bytes = 3;\n");
  ASSERT_TRUE(plain && pair && hidden);
  auto p = library_entry_points(*plain);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_TRUE(p->forward && !p->workspace_bytes && !p->forward_ws);
  auto w = library_entry_points(*pair);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_TRUE(!w->forward && w->workspace_bytes && w->forward_ws);
  auto form = entry_form(*w);
  ASSERT_TRUE(form.ok());
  EXPECT_EQ(*form, EntryForm::workspace);
  auto h = library_entry_points(*hidden);
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_TRUE(!h->forward && !h->workspace_bytes && !h->forward_ws);
}

TEST_F(LibraryEntryPoints, AFileThatIsNoLibraryIsAnError) {
  fs::path text = dir_.path / "notes.so";
  ASSERT_TRUE(write_file_atomic(text, "not an ELF file").ok());
  auto r = library_entry_points(text);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "is not an ELF shared library")) << r.error().message;
  EXPECT_FALSE(library_entry_points(dir_.path / "missing.so").ok());
}

}  // namespace
}  // namespace cutegen
