#pragma once
// best/ of a run: everything a user takes away. Rewritten (atomically, file by file) whenever the
// loop finds a new best, so an interrupted run still leaves its best kernel usable.
//   kernel.cu  eval.json  kernel.so  <op>_op.py  model_new.py  problem.py
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/run_files.h"

namespace cutegen {

struct BestKernel {
  std::string source;
  nlohmann::json evaluation;          // the judge's report (and the loop's summary of it)
  std::filesystem::path library;      // the built kernel.so; empty when unknown (then no exports)
  nlohmann::json metadata;            // the worker's problem metadata
  std::filesystem::path problem_file; // the reference problem, copied beside the exports
};

Status write_best(const RunFiles& files, const BestKernel& best);

}  // namespace cutegen
