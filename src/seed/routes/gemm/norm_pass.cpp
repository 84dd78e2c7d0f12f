#include "seed/routes/gemm/norm_pass.h"

namespace cutegen::seed {

const char* gemm_norm_pass_text() {
  static constexpr const char* kText =
#include "seed/norm_pass.inc"
      ;
  return kText;
}

}  // namespace cutegen::seed
