#pragma once
// "Every kernel uses CuTe", checked per kernel.
//
// The rule: a kernel uses CuTe when its own device code, or a device function it calls, maps a
// coordinate to an offset through a CuTe layout — cute::crd2idx from CuTe's own headers. Every
// tensor element access (gX(i), gX(m, n)), slice (gX(_, k)), local_tile/local_partition, TiledCopy or
// TiledMMA partition and every copy/gemm over tensors goes through it; a raw pointer taken out of a
// tensor (t.data()[i]) or CuTe used only on the host or only #included does not.
//
// The evidence: optimised code cannot carry it (-O3 folds 1-D tensor indexing into the same address
// arithmetic as a raw pointer), so the candidate is compiled a second time, device code only, to PTX
// at -O0 with line info (compile_options.h: cute_analysis_command). There every inlined CuTe function
// keeps a `.loc` naming it (function_name) and the header it came from. Files come from `.file`
// entries, which the source rules stop a candidate from forging (#line, linemarkers); inline assembly
// is skipped, and a `.loc` or `.file` inside it is a violation of its own.
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/process.h"
#include "common/result.h"
#include "compile/check_violation.h"
#include "compile/diagnostics.h"
#include "compile/sass_lines.h"

namespace cutegen {

struct CuteAnalysis {
  std::map<std::string, bool> uses_cute;  // per kernel (.entry), mangled name
  std::vector<std::string> forged;        // functions whose inline asm holds line-info directives
  // Where CuTe is used, as source lines: for every tensor access (crd2idx, cute::Tensor's operator()
  // or operator[]), each position of its inline chain outside CuTe's own headers (the candidate's
  // `gY(i) = v;`, the line calling a helper that returns gY(i), a CUTLASS collective's `copy(...)`).
  // The check on the optimised build (built_cute.h) looks for these lines in its machine code, where
  // -O3 has folded CuTe's own functions away.
  std::set<SourcePosition> cute_sites;
};

// Parses the -O0 PTX. `cute_dir` is <CUTLASS include>/cute as nvcc saw it.
CuteAnalysis analyse_cute_usage(const std::string& ptx, const std::filesystem::path& cute_dir);

// One "no-cute" violation per kernel of the library that does not use CuTe (or is missing from the
// analysis), naming it.
std::vector<CheckViolation> cute_violations(const std::vector<std::string>& kernels, const CuteAnalysis& analysis);

// The analysis compile's result. It runs beside the build, before the library's kernels are known;
// cute_check_violations() judges them once they are.
struct CuteAnalysisRun {
  bool compiled = false;    // the PTX was produced and parsed into `analysis`
  bool timed_out = false;
  CuteAnalysis analysis;
  std::vector<CheckViolation> violations;  // a failed analysis compile: one cute-unverifiable
  double seconds = 0;
};

// Runs the analysis compile (`command`, in `dir`, writing `ptx_name` there and removing it afterwards)
// and parses its PTX. A failing analysis compile is a violation quoting its first error (when the build
// succeeds, the candidate relies on something only optimised code allows); an Error means nvcc could
// not be started or its PTX not read.
Result<CuteAnalysisRun> run_cute_analysis(ProcessRunner& runner, const std::vector<std::string>& command,
                                          const std::filesystem::path& dir, const std::string& ptx_name,
                                          std::chrono::milliseconds timeout,
                                          const std::filesystem::path& cutlass_include, const QuotableFiles& quotable);

// The violations of the library's `kernels` under `run` (not meaningful for a timed-out run).
std::vector<CheckViolation> cute_check_violations(const CuteAnalysisRun& run, const std::vector<std::string>& kernels);

}  // namespace cutegen
