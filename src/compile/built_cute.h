#pragma once
// "Every kernel uses CuTe", checked again on the code that runs: the optimised build.
//
// The unoptimised analysis compile (cute_usage.h) proves that a kernel's source reaches a CuTe layout
// evaluation; it cannot tell whether the build keeps that code. CuTe in a branch -O3 deletes (a flag
// the optimiser folds) or in one that never runs, beside raw code that writes the outputs, passed it.
// So the build's machine code is read too: nvdisasm prints each kernel's SASS with its line table
// (the build compiles with -lineinfo), every instruction with its inline chain. An instruction is
// CuTe's when a position of its chain is one the analysis found using CuTe (CuteAnalysis::cute_sites:
// the candidate's `gY(i) = v;`, a CUTLASS collective's `copy(...)`) — -O3 folds CuTe's own functions
// into the caller's lines, so the lines, not CuTe's headers, are what both compiles share (the
// preprocessed device code of both is proven identical, device_code_match.h).
//
// Required of each kernel (and the device functions it calls): at least one instruction that is
// CuTe's ("cute-not-built" otherwise), and at least one store to global memory that is CuTe's
// ("raw-stores" otherwise: its outputs are written by raw code). What this cannot see: which branch
// runs. A kernel that keeps a CuTe store in a branch never taken, or raw code on a source line (or
// in a macro expansion) that also uses CuTe, passes; docs/judge.md says so.
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/process.h"
#include "common/result.h"
#include "compile/check_violation.h"
#include "compile/sass_lines.h"

namespace cutegen {

// The violations of the library's `kernels` (mangled names) given their SASS and the analysis's CuTe
// sites (both compiles run in one directory, so their line tables spell the candidate's path alike).
std::vector<CheckViolation> built_cute_violations(const std::map<std::string, SassFunction>& sass,
                                                  const std::vector<std::string>& kernels,
                                                  const std::set<SourcePosition>& cute_sites);

// Runs `command` (nvdisasm --print-line-info-inline on one cubin, confined by the caller) and parses
// its output. An Error when nvdisasm cannot be started or fails: cutegen's problem, not the candidate's.
Result<std::map<std::string, SassFunction>> disassemble(ProcessRunner& runner, const std::vector<std::string>& command,
                                                       const std::filesystem::path& dir, std::chrono::milliseconds timeout);

// nvdisasm: $CUTEGEN_NVDISASM, else beside `nvcc` (the toolkit's bin/), else on PATH, else the copy
// scripts/setup unpacks into third_party/cuobjdump. An Error saying how to install it otherwise.
Result<std::filesystem::path> find_nvdisasm(const std::string& nvcc);

}  // namespace cutegen
