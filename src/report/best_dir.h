#pragma once
// best/ of a run: everything a user takes away. Rewritten whenever the loop finds a new best, so an
// interrupted run still leaves its best kernel usable. The new best/ is built complete in
// best.tmp-XXXXXX/ and swapped in with one rename (store/replace_dir.h), so best/ never mixes two
// kernels, not even for a moment, and a kill -9 mid-export leaves the previous best whole.
//   kernel.cu  eval.json  kernel.so  <op>_op.py  model_new.py  problem.py
#include <filesystem>
#include <string>

#include "common/evaluation.h"
#include "common/result.h"
#include "store/run_files.h"

namespace cutegen {

struct BestKernel {
  std::string source;
  Evaluation evaluation;              // it passed: its problem facts shape the exports, its library is kernel.so
  std::filesystem::path problem_file; // the reference problem, copied beside the exports
};

struct BestWritten {
  std::filesystem::path dir;  // <run>/best
  // Set when the filesystem could not exchange directories in one step (store/replace_dir.h):
  // worth telling the user once.
  std::string note;
};

// Needs the run directory's lock (it removes leftovers of an interrupted export first).
Result<BestWritten> write_best(const RunFiles& files, const BestKernel& best);

}  // namespace cutegen
