#include "report/best_dir.h"

#include <fmt/format.h>

#include "common/fs.h"
#include "common/json_text.h"
#include "compile/load_time_code.h"
#include "report/kernelbench_export.h"
#include "report/torch_export.h"
#include "store/replace_dir.h"

namespace cutegen {
namespace fs = std::filesystem;
namespace {

Status copy_into(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return Error{fmt::format("cannot copy {} to {}: {}", from.string(), to.string(), ec.message())};
  return ok_status();
}

Status fill(const fs::path& dir, const BestKernel& best, std::string& export_note) {
  if (!best.evaluation.problem) return Error{"internal: the best kernel's evaluation has no problem facts to export"};
  auto exported = make_torch_export(*best.evaluation.problem);
  if (!exported) return exported.error();
  auto problem_source = read_file(best.problem_file);
  if (!problem_source) return problem_source.error();
  auto kernelbench = make_kernelbench_file({.kernel_source = best.source,
                                            .problem_source = *problem_source,
                                            .problem = *best.evaluation.problem,
                                            .verified_by = verified_by_line(best.evaluation),
                                            .build = best.build,
                                            .other_shapes = other_verified_shapes(best.evaluation)});
  if (!kernelbench) return Error{"model_new.py: " + kernelbench.error().message};
  export_note = kernelbench->note;
  if (auto r = write_file_atomic(dir / "kernel.cu", best.source); !r) return r;
  if (auto r = write_file_atomic(dir / "eval.json", dump_json(best.evaluation.to_json(), 2)); !r) return r;
  if (auto r = write_file_atomic(dir / "problem.py", *problem_source); !r) return r;
  if (auto r = export_library(best.evaluation.library, dir / "kernel.so"); !r) return r;
  if (auto r = write_file_atomic(dir / fmt::format("{}_op.py", exported->op_name), exported->op_module); !r) return r;
  return write_file_atomic(dir / "model_new.py", kernelbench->text);
}

}  // namespace

// The user's own process loads the copy unconfined (the torch op), so the check that no host code runs
// at load time is made again on the very file exported, whatever verdict the cache recorded.
Status export_library(const fs::path& library, const fs::path& copy) {
  if (auto r = copy_into(library, copy); !r) return r;
  auto found = check_load_time_code(copy);
  Status refused = ok_status();
  if (!found) refused = Error{fmt::format("cannot export {}: {}", library.string(), found.error().message)};
  else if (!found->empty()) refused = Error{fmt::format("refusing to export {}: {}", library.string(), found->front().message)};
  if (!refused) {
    std::error_code ec;
    fs::remove(copy, ec);
  }
  return refused;
}

Result<BestWritten> write_best(const RunFiles& files, const BestKernel& best) {
  std::error_code ec;
  const std::string& library = best.evaluation.library;
  if (library.empty() || !fs::exists(library, ec))
    return Error{fmt::format("the best kernel's library {} is missing (compile cache cleared during the run?); "
                             "best/ keeps the previous best",
                             library)};
  const fs::path target = files.dir() / "best";
  if (auto r = remove_replace_leftovers(target); !r) return r.error();
  auto staging = make_unique_dir(files.dir(), "best.tmp-");
  if (!staging) return staging.error();
  fs::permissions(*staging, fs::perms(0755), ec);  // mkdtemp's 0700 would make best/ private
  std::string export_note;
  if (auto r = fill(*staging, best, export_note); !r) {
    fs::remove_all(*staging, ec);
    return Error{r.error().message + "; best/ keeps the previous best"};
  }
  auto swapped = replace_dir(*staging, target);
  if (!swapped) {
    fs::remove_all(*staging, ec);
    return swapped.error();
  }
  BestWritten out{target, "", export_note};
  if (!swapped->in_one_step)
    out.note = fmt::format("the filesystem of {} cannot exchange directories in one step: best/ is replaced by two "
                           "renames (briefly absent, never mixed)",
                           files.dir().string());
  return out;
}

}  // namespace cutegen
