#pragma once
// A scan plan (plans.h) as a candidate .cu file: the row/column scan of scan_kernel.cu.in.
#include <string>

#include "seed/plans.h"

namespace cutegen::seed {

std::string generate_scan_kernel(const ScanPlan& plan, const std::string& problem_name);

}  // namespace cutegen::seed
