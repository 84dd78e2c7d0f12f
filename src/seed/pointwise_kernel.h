#pragma once
// A pointwise plan (matcher.h) as a candidate .cu file: the elementwise library kernel
// (pointwise_kernel.cu.in, compiled into the binary) with the chain as its device functor. The result
// is an ordinary candidate -- readable, knobs for the tuner, judged like any other.
#include <string>

#include "seed/matcher.h"

namespace cutegen::seed {

// `problem_name` goes into the header comment only.
std::string generate_pointwise_kernel(const PointwisePlan& plan, const std::string& problem_name);

}  // namespace cutegen::seed
