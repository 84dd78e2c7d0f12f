#pragma once
// The host side's assembly, checked as the assembler reads it. GNU as reads a file for two directives,
// `.include` and `.incbin`: an asm statement that reaches one embeds a host file in the library or
// quotes it back in the compile log. The C++ spelling of an asm string cannot be judged (escapes such
// as "\x2eincbin", octal "\056", literals concatenated ".inc" "bin", macros, raw strings), so the
// build keeps the assembly gcc hands the assembler (-save-temps=obj, nvcc_command) and this check
// reads that text, where every spelling has become the plain directive.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "compile/check_violation.h"

namespace cutegen {

// "asm-reads-file" violations for `assembly` (one .s file): every `.include` or `.incbin` token, in any
// letter case, and the assembler's own text generators that could put one together out of pieces
// (`.macro`, `.irp`, `.irpc`, `.altmacro`) or drop the leading dot (`.mri`). A token counts wherever
// it starts a word, not only where a statement starts: a false alarm is a string in host data that
// happens to hold ".include", a miss would be a host file in the library.
std::vector<CheckViolation> check_host_assembly(std::string_view assembly);

// Checks every *.s file in `keep_dir` (nvcc --keep-dir with -Xcompiler -save-temps=obj). Error when
// `required` and the candidate's own `<candidate_stem>.s` is not there: nvcc ran the assembler on a
// file this check never saw (another nvcc or host compiler names its temporaries differently).
Result<std::vector<CheckViolation>> check_kept_host_assembly(const std::filesystem::path& keep_dir,
                                                             const std::string& candidate_stem, bool required);

}  // namespace cutegen
