#include "report/best_dir.h"

#include <fmt/format.h>

#include "common/fs.h"
#include "common/json_text.h"
#include "compile/load_time_code.h"
#include "report/torch_export.h"
#include "store/replace_dir.h"

namespace cutegen {
namespace fs = std::filesystem;
namespace {

Status copy_into(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return Error{fmt::format("cannot copy {} into best/: {}", from.string(), ec.message())};
  return ok_status();
}

// The user's own process loads best/kernel.so unconfined (the torch op), so the check that no host code
// runs at load time is made again on the very copy exported, whatever verdict the cache recorded.
Status check_exportable(const fs::path& copy, const std::string& library) {
  auto found = check_load_time_code(copy);
  if (!found) return Error{fmt::format("cannot export {}: {}", library, found.error().message)};
  if (!found->empty()) return Error{fmt::format("refusing to export {}: {}", library, found->front().message)};
  return ok_status();
}

Status fill(const fs::path& dir, const BestKernel& best) {
  if (!best.evaluation.problem) return Error{"internal: the best kernel's evaluation has no problem facts to export"};
  auto exported = make_torch_export(*best.evaluation.problem, "problem.py");
  if (!exported) return exported.error();
  if (auto r = write_file_atomic(dir / "kernel.cu", best.source); !r) return r;
  if (auto r = write_file_atomic(dir / "eval.json", dump_json(best.evaluation.to_json(), 2)); !r) return r;
  if (auto r = copy_into(best.problem_file, dir / "problem.py"); !r) return r;
  if (auto r = copy_into(best.evaluation.library, dir / "kernel.so"); !r) return r;
  if (auto r = check_exportable(dir / "kernel.so", best.evaluation.library); !r) return r;
  if (auto r = write_file_atomic(dir / fmt::format("{}_op.py", exported->op_name), exported->op_module); !r) return r;
  return write_file_atomic(dir / "model_new.py", exported->model_new);
}

}  // namespace

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
  if (auto r = fill(*staging, best); !r) {
    fs::remove_all(*staging, ec);
    return Error{r.error().message + "; best/ keeps the previous best"};
  }
  auto swapped = replace_dir(*staging, target);
  if (!swapped) {
    fs::remove_all(*staging, ec);
    return swapped.error();
  }
  BestWritten out{target, ""};
  if (!swapped->in_one_step)
    out.note = fmt::format("the filesystem of {} cannot exchange directories in one step: best/ is replaced by two "
                           "renames (briefly absent, never mixed)",
                           files.dir().string());
  return out;
}

}  // namespace cutegen
