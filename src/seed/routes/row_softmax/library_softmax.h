#pragma once
// The seed of a softmax or log-softmax over long rows, or over shorter rows of a large tensor: one of the
// library's softmax kernels itself (library/softmax_ticket.cu or softmax_cluster.cu, compiled in as
// text), not the seed's row kernel (row_softmax_kernel.h). The row kernel reads each row twice; once a row is
// too long for its second read to come from the L2, that is two DRAM reads. The library kernels read each row
// from DRAM once: on an H200, KernelBench 23/24 (4096 x 393216 fp32) ran 3.64 / 3.94 ms on the cluster kernel
// against the row kernel's 4.94 / 4.80 (benchmarks/results.md), and judge 3.12 / 3.21 on
// the ticket kernel (benchmarks/results.md).
#include <cstdint>
#include <string>

#include "common/result.h"
#include "seed/comment_text.h"
#include "seed/routes/row_softmax/row_softmax_plan.h"

namespace cutegen::seed {

// Rows of at least this many fp32 values (256 KB) go to a library kernel. From about there the row
// kernel's second read stops coming from the L2 (132 SMs' rows in flight fill an H200's 50 MB), and on
// the H200 the cluster kernel ran 4096 x 65536 in 0.689 ms of events against the row kernel's 0.797
// (benchmarks/results.md).
inline constexpr int64_t kLibrarySoftmaxMinRow = 65536;
// Shorter rows of 16-byte vectors, at least one 32 KB chunk long, go to the ticket softmax too when the
// tensor has at least this many chunks: spread over every SM, they beat the row kernel on the H200 from
// 4096 chunks (128 MB) up -- 4096 x 8192 0.078 ms against 0.095, 4096 x 16384 0.143 against 0.202 (eager
// 0.176), 16384 x 8192 0.273 against 0.362 -- while 256 x 16384 (512 chunks, 16 MB) ran 0.023 against
// 0.021: too few chunks to pay for the launch over every SM and its workspace memset
// (benchmarks/results.md). Between 512 and 4096 chunks was not measured.
inline constexpr int64_t kTicketMinChunks = 4096;
inline constexpr int64_t kTicketChunkValues = 8192;

// "" when the plan is one the library kernels take and are chosen for: the contract's only input (they
// read inputs[0] and refuse other counts), and rows of at least kLibrarySoftmaxMinRow or, for the ticket
// softmax, rows of 16-byte vectors of at least one chunk in a tensor of at least kTicketMinChunks chunks.
// Else why not.
std::string library_softmax_refusal(const RowSoftmaxPlan& plan);

// Which library kernel a row the library takes gets. The ticket softmax (library/softmax_ticket.cu:
// 32 KB chunks from one counter over every SM, a row's statistics met in workspace slots) where its chunks
// can hold the row -- rows of 16-byte vectors (N % 4 == 0) of at most kTicketMaxChunksPerRow chunks -- and the
// tensor has at least kTicketMinChunks of them; the cluster softmax otherwise (its streaming path is the
// better two-read kernel for the rest, and a small tensor's few clusters beat a launch over every SM). On an H200,
// KernelBench 23/24 judged faster on the ticket kernel (3.117 / 3.214 ms against 3.64-3.67 / 3.76;
// benchmarks/results.md).
enum class LibrarySoftmax { ticket, cluster };
// The file allows 16 CTAs x TKS_STAGES chunks a row; 16 x 5, its smallest stage count, so that every
// variant `cutegen tune` builds takes the ticket path for the rows routed to it.
inline constexpr int64_t kTicketMaxChunksPerRow = 80;
LibrarySoftmax library_softmax_kernel(const RowSoftmaxPlan& plan);

// The candidate: a header saying what and why, then the chosen library source with kLogSoftmax set from the
// plan. Error when the library file no longer has that line as the seed expects.
Result<std::string> generate_library_softmax_kernel(const RowSoftmaxPlan& plan, const CommentText& problem);
// The same from a given library text for the chosen kernel (the tests' way to show that a changed library
// file is an Error).
Result<std::string> generate_library_softmax_kernel(const RowSoftmaxPlan& plan, const CommentText& problem,
                                                    std::string library);

}  // namespace cutegen::seed
