#pragma once
// The scan route (docs/seed.md, "Scans"): cumsum/cumprod over one dimension of a contiguous fp32 forward
// input or of a pointwise chain of same-shape float32 or bool inputs, and the reverse scan
// flip(cumsum(flip(x, d), d), d) of an input.
#include "seed/route.h"
#include "seed/routes/scan/scan_plan.h"

namespace cutegen::seed {

Result<ScanPlan> match_scan(const OpGraph& g);
// "scan y = ..."
std::string scan_description(const ScanPlan& plan);
std::string scan_pattern(const ScanPlan& plan);
Result<std::string> emit_scan(const ScanPlan& plan, const CommentText& problem);

inline constexpr RouteDef<ScanPlan> kScanRoute{"scan", match_scan, scan_description, scan_pattern, emit_scan};

}  // namespace cutegen::seed
