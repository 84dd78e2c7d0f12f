#pragma once
// "Every kernel uses CuTe", checked again on the code that runs: the optimised build.
//
// The unoptimised analysis compile (cute_usage.h) proves that a kernel's source reaches a CuTe layout
// evaluation; it cannot tell whether the build keeps that code. CuTe in a branch -O3 deletes (a flag
// the optimiser folds) or in one that never runs, beside raw code that writes the outputs, passed it.
// So the build's machine code is read too: nvdisasm prints each kernel's SASS with its line table
// (the build compiles with -lineinfo), every instruction with its inline chain. An instruction is
// CuTe's when a position of its chain is one the analysis found on the way to a CuTe tensor access
// (CuteAnalysis::cute_sites: the candidate's `gY(i) = v;`, the line calling a helper that returns
// `gY(i)`, a CUTLASS collective's `copy(...)` and the candidate's call of that collective) — -O3 folds
// CuTe's own functions into the caller's lines, so the lines, not CuTe's headers, are what both
// compiles share (the preprocessed device code of both is proven identical, device_code_match.h) — or
// when it is code of CuTe's tensor algorithms or atoms (cute/algorithm/, cute/atom/: the store inside
// copy(frag, gY(_, i)), whose call may sit on another line than the indexing).
//
// Required of each kernel (and the device functions it calls): at least one instruction that is
// CuTe's ("cute-not-built" otherwise), and, when it stores to global memory at all, at least one such
// store that is CuTe's ("raw-stores" otherwise: its outputs are written by raw code). What this cannot
// see: which branch runs, or what a line does besides using CuTe. A kernel that keeps a CuTe store in
// a branch never taken; raw code on a line (or in a macro expansion) that also reaches a CuTe access;
// raw stores inside a helper function whose call line reaches one (the whole body inlined at that
// line); or a cute::copy into a one-element tensor over a raw address: these pass (docs/judge.md).
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

// The violations of the library's `kernels` (mangled names) given their SASS, the analysis's CuTe
// sites (both compiles run in one directory, so their line tables spell the candidate's path alike)
// and CuTe's header directory (<CUTLASS include>/cute).
std::vector<CheckViolation> built_cute_violations(const std::map<std::string, SassFunction>& sass,
                                                  const std::vector<std::string>& kernels,
                                                  const std::set<SourcePosition>& cute_sites,
                                                  const std::filesystem::path& cute_dir);

// Runs `command` (nvdisasm --print-line-info-inline on one cubin, confined by the caller) and parses
// its output. An Error when nvdisasm cannot be started or fails: cutegen's problem, not the candidate's.
Result<std::map<std::string, SassFunction>> disassemble(ProcessRunner& runner, const std::vector<std::string>& command,
                                                       const std::filesystem::path& dir, std::chrono::milliseconds timeout);

// nvdisasm: $CUTEGEN_NVDISASM, else beside `nvcc` (the toolkit's bin/), else on PATH, else the copy
// scripts/setup unpacks into third_party/cuobjdump. An Error saying how to install it otherwise.
Result<std::filesystem::path> find_nvdisasm(const std::string& nvcc);

}  // namespace cutegen
