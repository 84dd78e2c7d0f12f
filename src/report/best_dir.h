#pragma once
// best/ of a run: everything a user takes away. Rewritten whenever the loop finds a new best, so an
// interrupted run still leaves its best kernel usable. The new best/ is built complete in
// best.tmp-XXXXXX/ and swapped in with one rename (store/replace_dir.h), so best/ never mixes two
// kernels, not even for a moment, and a kill -9 mid-export leaves the previous best whole.
//   kernel.cu  eval.json  kernel.so  problem.py
//   <op>_op.py    the torch op over kernel.so (torch_export.h; `cutegen export --format op`)
//   model_new.py  the self-contained KernelBench submission (kernelbench_export.h)
// `cutegen export` makes these and the installable op package from best/ again (docs/export.md).
#include <filesystem>
#include <string>

#include "common/evaluation.h"
#include "common/result.h"
#include "report/export_parts.h"
#include "store/run_files.h"

namespace cutegen {

struct BestKernel {
  std::string source;
  Evaluation evaluation;              // it passed: its problem facts shape the exports, its library is kernel.so
  std::filesystem::path problem_file; // the reference problem, copied beside the exports
  KernelBuild build;                  // how the judge built it: model_new.py builds it the same way
};

struct BestWritten {
  std::filesystem::path dir;  // <run>/best
  // Set when the filesystem could not exchange directories in one step (store/replace_dir.h):
  // worth telling the user once.
  std::string note;
  // Set when model_new.py keeps the problem's reference forward() (kernelbench_export.h says when).
  std::string export_note;
};

// Copies a kernel library to `copy` for a user's own process to load, and checks that copy for code that
// runs at load time (the judge's check, made again on the very file exported). Error: the copy failed or
// the library has such code (the copy is removed then).
Status export_library(const std::filesystem::path& library, const std::filesystem::path& copy);

// Needs the run directory's lock (it removes leftovers of an interrupted export first).
Result<BestWritten> write_best(const RunFiles& files, const BestKernel& best);

}  // namespace cutegen
