#pragma once
// A scan plan (scan_plan.h) as a candidate .cu file: the row/column scan of scan_kernel.cu.in.
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/scan/scan_plan.h"

namespace cutegen::seed {

std::string generate_scan_kernel(const ScanPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
