#pragma once
// The host compile started at the end of cicc's front end instead of after cicc, ptxas and fatbinary.
//
// The host compile reads two files the device compile writes: the host stub (cudafe1.stub.c: the kernels'
// launch stubs and registration), which cicc's front end writes, and the embedded fatbinary's C form
// (fatbin.c, an asm block of the device code's bytes), which fatbinary writes last. On a CUTLASS GEMM
// cicc's optimiser and ptxas after its front end are ~2 s, all of which the host compile (~2 s through the
// precompiled prefix) waited for.
//
// cicc writes its stub whole but only closes it when it exits, and has no switch to stop after its front
// end; an option libnvvm refuses (kStopAfterFrontEnd) ends it right there, the stub written. So a second
// cicc on the same input, in a directory of its own (kStubAheadDir, the same relative paths), ends with the
// stub while the first goes on; the host compile starts from that stub and from fatbin_placeholder(): the
// fatbinary's C form with a marker line where its data will be. Its assembly gets the data
// (splice_fatbin) once fatbinary has written it, and the assembler and the link run as nvcc's.
//
// Nothing is taken on trust: the early stub must equal cicc's own byte for byte, and nvcc's C form of the
// fatbinary must be the placeholder but for its data (placeholder_of), or the host compile runs again as
// nvcc's plan has it. With both, the library is nvcc's byte for byte (NvccPlanRealNvcc holds this).
#include <string>
#include <string_view>

#include "common/result.h"

namespace cutegen {

// The line that stands for the fatbinary's data in the placeholder and, verbatim, in the host assembly.
inline constexpr std::string_view kFatbinDataMarker = "cutegen_fatbin_data_follows";

// nvcc 13's fatbin.c with its `.quad` data lines replaced by one marker line and its array's size left out.
const std::string& fatbin_placeholder();

// `embedded_fatbin_c` (fatbinary's --embedded-fatbin output) with its data lines made the marker line and
// the array's size left out: fatbin_placeholder() when its format is the one the placeholder copies.
// Error: no data lines, or data lines that are not one run.
Result<std::string> placeholder_of(std::string_view embedded_fatbin_c);

// `assembly` (the host compile's output from the placeholder) with the marker line replaced by the data
// lines of `embedded_fatbin_c` as the assembler reads them (`.quad ...`). Error, saying which: the marker
// is not there exactly once (a candidate's own asm may not place it), or the C form has no data lines.
Result<std::string> splice_fatbin(std::string_view assembly, std::string_view embedded_fatbin_c);

}  // namespace cutegen
