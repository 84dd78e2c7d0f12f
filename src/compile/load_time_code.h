#pragma once
// No host code of the candidate runs when its library is loaded or unloaded. The runner loads it
// confined, but best/kernel.so is later loaded unconfined by the user's own PyTorch process (the
// exported op), so code that runs inside dlopen would run there with the user's rights before any
// verified call. Checked on the built library, the way the dynamic loader reads it, because a source
// rule cannot see everything a macro, an escape or an attribute can assemble:
//  * DT_INIT/DT_FINI run exactly crti's _init/_fini (byte for byte: code placed in the .init or .fini
//    section would run inside them);
//  * DT_INIT_ARRAY/DT_FINI_ARRAY list only the toolchain's own functions, each at most as often as the
//    toolchain emits it (a candidate's function may carry the same name): crtbeginS's frame_dummy and
//    __do_global_dtors_aux, nvcc's fatbinary registration, and g++'s static initialiser only when it
//    does nothing but construct <iostream>'s std::ios_base::Init (CuTe's config.hpp includes
//    <iostream>, so under g++ < 13 every CuTe translation unit has it); no DT_PREINIT_ARRAY;
//  * no GNU indirect function: an ifunc symbol or an R_X86_64_IRELATIVE relocation runs its resolver
//    inside dlopen.
// Code that runs at a call's first use (a function-local static, a thread_local's initialiser) is
// allowed: it runs inside a call, where the judge sees it.
#include <filesystem>
#include <vector>

#include "common/result.h"
#include "compile/check_violation.h"

typedef struct Elf Elf;  // libelf's handle (libelf.h declares it the same way)

namespace cutegen {

// The violation code of this check. The source rules' "load-time-code" refuses what they can see
// before nvcc; this one is what the built library itself holds.
inline constexpr const char* kLibraryLoadTimeCode = "library-load-time-code";

// The load-time code in an opened library, as violations that name it. An Error when the library
// cannot be judged at all: the sequences allowed were measured on x86-64 (g++ 12, glibc crti), so a
// library for any other machine is an Error, not a pass.
Result<std::vector<CheckViolation>> load_time_code_violations(Elf* elf);

// The same check on a library file. Every library cutegen exports passes it first.
Result<std::vector<CheckViolation>> check_load_time_code(const std::filesystem::path& library);

}  // namespace cutegen
