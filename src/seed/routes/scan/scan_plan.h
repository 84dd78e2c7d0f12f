#pragma once
// The scan route's plan (scan_route.h).
#include <cstdint>
#include <string>
#include <vector>

#include "seed/plan_parts.h"

namespace cutegen::seed {

// y = the inclusive cumsum or cumprod of x over one dimension (reverse: from the end, as
// flip(cumsum(flip(x, d), d), d) computes it), x viewed as (outer, extent, inner) around it. Exclusive (a cumsum
// only, exclusive_scan.h): position p of the dimension scans x's position p - 1, position 0 the identity.
enum class ScanOp { cumsum, cumprod };

struct ScanPlan {
  ScanOp op = ScanOp::cumsum;
  bool reverse = false;
  bool exclusive = false;
  int64_t outer = 1, extent = 1, inner = 1;
  int num_contract_inputs = 0;
  // What is scanned: a pointwise chain (steps, result) of same-shape operands x0, x1, ... (float32, or
  // bool read as 0/1 as torch promotes it); a plain input is the chain "x0".
  std::vector<int> inputs;
  std::vector<std::string> dtypes;
  std::vector<std::string> names;
  std::vector<PointwiseStep> steps;
  std::string result = "x0";
  std::string pattern;
};

}  // namespace cutegen::seed
