#pragma once
// The built library's machine code (SASS) with its line table, as `nvdisasm --print-line-info-inline`
// prints a cubin: every instruction with the source positions it came from, innermost inlined
// function first. The CuTe check on the build (built_cute.h) reads it; the instruction encodings are
// nvdisasm's business, the text is parsed here.
#include <map>
#include <set>
#include <string>
#include <vector>

namespace cutegen {

struct SourcePosition {
  std::string file;  // as the line table spells it (nvcc writes absolute paths)
  int line = 0;
  bool operator==(const SourcePosition&) const = default;
  auto operator<=>(const SourcePosition&) const = default;
};

struct SassInstruction {
  std::string opcode;                  // with its modifiers, predicate dropped: "STG.E.128"
  std::vector<SourcePosition> chain;   // innermost first; empty when the line table says nothing
};

struct SassFunction {
  bool kernel = false;                 // STO_CUDA_ENTRY: a __global__ function
  std::vector<SassInstruction> instructions;
  std::set<std::string> callees;       // functions of the cubin its CALL instructions name
};

// Function (mangled name, from its .text.NAME section) -> its code. Text that is not nvdisasm's
// format yields no functions; the caller treats a kernel missing from the map as unverifiable.
std::map<std::string, SassFunction> parse_sass_line_info(const std::string& text);

// "STG.E.128" -> true: an instruction that writes memory another thread or the host may read back —
// global stores, reductions and atomics (generic ST/ATOM, which may address global memory, included),
// TMA and bulk copies out of shared memory. Not shared-memory (STS, ATOMS) or local (STL) stores.
bool is_global_store(const std::string& opcode);

}  // namespace cutegen
