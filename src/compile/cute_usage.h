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
#include <optional>
#include <set>
#include <stop_token>
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

// Which positions of a tensor access's inline chain are CuTe sites.
enum class SiteScope {
  // Every position outside CuTe's headers: the -O0 analysis, whose chains end at the function compiled.
  whole_chain,
  // Only the innermost one, the line that called into CuTe: for the build's own -O3 PTX (build_evidence
  // below), whose chains also run through functions inlined only there -- a helper's call line would make
  // every raw store of its body count as CuTe's, which the -O0 analysis does not allow.
  innermost,
};

// Parses the -O0 PTX. `cute_dir` is <CUTLASS include>/cute as nvcc saw it.
CuteAnalysis analyse_cute_usage(const std::string& ptx, const std::filesystem::path& cute_dir,
                                SiteScope scope = SiteScope::whole_chain);

// The same rule read from the build's own PTX (-O3, with line info), when that alone proves it: every one of
// `kernels` reaches a CuTe layout evaluation there and no inline assembly carries line information. Then the
// build's machine code (built_cute.h, against these sites) needs no unoptimised compile: code -O3 kept was in
// the source, so this evidence is a part of what -O0 would find, and its sites a subset of the -O0 sites, which
// makes the check on the machine code stricter, never looser. Empty when it does not prove it (a 1-D access
// -O3 folds into raw address arithmetic): the analysis compile decides, as before.
std::optional<CuteAnalysis> build_evidence(const std::string& ptx, const std::filesystem::path& cute_dir,
                                           const std::vector<std::string>& kernels);

// One "no-cute" violation per kernel of the library that does not use CuTe (or is missing from the
// analysis), naming it.
std::vector<CheckViolation> cute_violations(const std::vector<std::string>& kernels, const CuteAnalysis& analysis);

// The analysis compile's result. It runs beside the build, before the library's kernels are known;
// cute_check_violations() judges them once they are.
struct CuteAnalysisRun {
  bool compiled = false;    // the PTX was produced and parsed into `analysis`
  bool timed_out = false;
  bool cancelled = false;   // stopped: the build's own evidence was enough
  CuteAnalysis analysis;
  std::vector<CheckViolation> violations;  // a failed analysis compile: one cute-unverifiable
  double seconds = 0;
};

// Runs the analysis compile (`command`, in `dir`, writing `ptx_name` there and removing it afterwards)
// and parses its PTX. A failing analysis compile is a violation quoting its first error (when the build
// succeeds, the candidate relies on something only optimised code allows); an Error means nvcc could
// not be started or its PTX not read.
// `stop`: requested once the build's own evidence is enough; the compile is killed and the run `cancelled`.
Result<CuteAnalysisRun> run_cute_analysis(ProcessRunner& runner, const std::vector<std::string>& command,
                                          const std::filesystem::path& dir, const std::string& ptx_name,
                                          std::chrono::milliseconds timeout,
                                          const std::filesystem::path& cutlass_include, const QuotableFiles& quotable,
                                          std::stop_token stop = {});

// The violations of the library's `kernels` under `run` (not meaningful for a timed-out run).
std::vector<CheckViolation> cute_check_violations(const CuteAnalysisRun& run, const std::vector<std::string>& kernels);

}  // namespace cutegen
