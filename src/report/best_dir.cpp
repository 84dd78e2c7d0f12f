#include "report/best_dir.h"

#include <fmt/format.h>

#include "common/json_text.h"
#include "report/torch_export.h"

namespace cutegen {

Status write_best(const RunFiles& files, const BestKernel& best) {
  // Checked before anything is written, so best/ never mixes two kernels.
  std::error_code ec;
  if (best.library.empty() || !std::filesystem::exists(best.library, ec))
    return Error{fmt::format("the best kernel's library {} is missing (compile cache cleared during the run?); "
                             "best/ keeps the previous best",
                             best.library.string())};
  if (auto r = files.write("best/kernel.cu", best.source); !r) return r;
  if (auto r = files.write("best/eval.json", dump_json(best.evaluation, 2)); !r) return r;
  if (auto r = files.copy_in(best.problem_file, "best/problem.py"); !r) return r;
  if (auto r = files.copy_in(best.library, "best/kernel.so"); !r) return r;
  auto exported = make_torch_export(best.metadata, "problem.py");
  if (!exported) return exported.error();
  if (auto r = files.write(fmt::format("best/{}_op.py", exported->op_name), exported->op_module); !r) return r;
  return files.write("best/model_new.py", exported->model_new);
}

}  // namespace cutegen
