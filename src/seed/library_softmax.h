#pragma once
// The seed of a softmax or log-softmax over long rows: the library's cluster softmax itself
// (examples/kernels/softmax_cluster.cu, compiled in as text), not the seed's row kernel
// (row_softmax_kernel.h). The row kernel reads each row twice; once a row is too long for its second read
// to come from the L2, that is two DRAM reads. The cluster kernel holds a row in a thread-block cluster's
// shared memory and reads it once: on an H200, KernelBench 23/24 (4096 x 393216 fp32) ran 3.64 / 3.94 ms
// against the row kernel's 4.94 / 4.80 (benchmarks/gpu-check-2026-12-01f.md, -e.md).
#include <cstdint>
#include <string>

#include "common/result.h"
#include "seed/matcher.h"

namespace cutegen::seed {

// Rows of at least this many fp32 values (256 KB) go to the cluster kernel. From about there the row
// kernel's second read stops coming from the L2 (132 SMs' rows in flight fill an H200's 50 MB), and on
// the H200 the cluster kernel ran 4096 x 65536 in 0.689 ms of events against the row kernel's 0.797
// (benchmarks/gpu-check-2026-12-01e.md, gpu-suite-2026-11-30.md). Shorter rows were not measured: they keep it.
inline constexpr int64_t kLibrarySoftmaxMinRow = 65536;

// "" when the plan is one the cluster kernel takes and is chosen for: the contract's only input (the
// library reads inputs[0] and refuses other counts) and rows of at least kLibrarySoftmaxMinRow. Else why not.
std::string library_softmax_refusal(const RowSoftmaxPlan& plan);

// The candidate: a header saying what and why, then the library source with kLogSoftmax set from the plan.
// Error when the library file no longer has that line as the seed expects.
Result<std::string> generate_library_softmax_kernel(const RowSoftmaxPlan& plan, const std::string& problem_name);
// The same from a given library text (the tests' way to show that a changed library file is an Error).
Result<std::string> generate_library_softmax_kernel(const RowSoftmaxPlan& plan, const std::string& problem_name,
                                                    std::string library);

}  // namespace cutegen::seed
