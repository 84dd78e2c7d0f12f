#include "seed/routes/row_softmax/library_softmax.h"

#include <fmt/format.h>

#include "seed/library_text.h"

namespace cutegen::seed {
namespace {

// library/softmax_cluster.cu and softmax_ticket.cu, read at build time (src/CMakeLists.txt): one
// source of truth, so a fix to a library kernel is the seed's fix too. The log_softmax_*.cu files are the same
// files with kLogSoftmax true.
constexpr const char* kClusterSoftmaxLibrary =
#include "seed/softmax_cluster.inc"
    ;
constexpr const char* kTicketSoftmaxLibrary =
#include "seed/softmax_ticket.inc"
    ;

constexpr const char* kClusterSoftmaxLogLine = "constexpr bool kLogSoftmax = false;  // log_softmax_cluster.cu: true";
constexpr const char* kTicketSoftmaxLogLine = "constexpr bool kLogSoftmax = false;  // log_softmax_ticket.cu: true";

int64_t row_length(const RowSoftmaxPlan& p) { return p.shape.empty() ? 0 : p.shape.back(); }

int64_t chunks_per_row(const RowSoftmaxPlan& p) { return (row_length(p) + kTicketChunkValues - 1) / kTicketChunkValues; }

// The ticket softmax's 32 KB chunks over the whole tensor.
int64_t total_chunks(const RowSoftmaxPlan& p) {
  int64_t rows = 1;
  for (std::size_t i = 0; i + 1 < p.shape.size(); ++i) rows *= p.shape[i];
  return rows * chunks_per_row(p);
}

// Rows shorter than kLibrarySoftmaxMinRow that the ticket softmax takes (library_softmax.h says why). Such rows
// are at most 8 chunks long, so library_softmax_kernel picks the ticket file for every plan this accepts.
bool short_rows_for_the_ticket_softmax(const RowSoftmaxPlan& p) {
  return row_length(p) < kLibrarySoftmaxMinRow && row_length(p) % 4 == 0 && row_length(p) >= kTicketChunkValues &&
         total_chunks(p) >= kTicketMinChunks;
}

// The header's paragraph on why this library kernel, for the route library_softmax_kernel and
// library_softmax_refusal chose.
std::string why_this_kernel(const RowSoftmaxPlan& p, bool ticket, const char* file) {
  return short_rows_for_the_ticket_softmax(p)
          ? fmt::format(
                "// The kernel is the library's ticket softmax, {0}, as it is below but for\n"
                "// kLogSoftmax, which the seed sets from the graph. Chosen over the seed's row kernel\n"
                "// (src/seed/routes/row_softmax/row_softmax_kernel.cu.in, one CTA a row, which reads every row\n"
                "// twice) because the tensor's {1} chunks of {2} values (at least {3}) are enough to spread over every SM: each row is read from\n"
                "// DRAM once, in the order that moves bytes fastest. On an H200, 4096 x 16384 ran 0.143 ms so against the\n"
                "// row kernel's 0.202, 16384 x 8192 0.273 against 0.362 (benchmarks/results.md).\n"
                "//\n",
                file, total_chunks(p), kTicketChunkValues, kTicketMinChunks)
      : ticket ? fmt::format(
                   "// The kernel is the library's ticket softmax, {0}, as it is below but for\n"
                   "// kLogSoftmax, which the seed sets from the graph. Chosen over the seed's row kernel\n"
                   "// (src/seed/routes/row_softmax/row_softmax_kernel.cu.in, which reads every row twice) because\n"
                   "// rows of {1} values (at least {2}) are too long for that second read to come from the L2, and over the cluster softmax\n"
                   "// (softmax_cluster.cu) because its rows of 16-byte vectors fit the ticket kernel's chunks (at most {3} of\n"
                   "// {4} values): 32 KB chunks from one counter over every SM move bytes faster than rows streamed per\n"
                   "// cluster. On an H200, KernelBench's 4096 x 393216 softmax judged 3.117 ms (97% of the floor) against\n"
                   "// the cluster kernel's 3.64-3.67, the log-softmax 3.214 against 3.76 (benchmarks/results.md).\n"
                   "//\n",
                   file, row_length(p), kLibrarySoftmaxMinRow, kTicketMaxChunksPerRow, kTicketChunkValues)
             : fmt::format(
                   "// The kernel is the library's cluster softmax, {0}, as it is below but for\n"
                   "// kLogSoftmax, which the seed sets from the graph. Chosen over the seed's row kernel\n"
                   "// (src/seed/routes/row_softmax/row_softmax_kernel.cu.in, which reads every row twice) because\n"
                   "// rows of {1} values (at least {2}) are too long for that second read to come from the L2: this kernel holds a row in a thread-block\n"
                   "// cluster's shared memory and reads it from DRAM once (rows longer than a cluster holds, or not of 16-byte vectors,\n"
                   "// take its streaming path; the ticket softmax, softmax_ticket.cu, takes rows of 16-byte vectors in tensors\n"
                   "// of at least {3} of its chunks). On an H200, KernelBench's 4096 x 393216\n"
                   "// softmax ran 3.64 ms so against the row kernel's 4.94 (benchmarks/results.md).\n"
                   "//\n",
                   file, row_length(p), kLibrarySoftmaxMinRow, kTicketMinChunks);
}

}  // namespace

std::string library_softmax_refusal(const RowSoftmaxPlan& p) {
  if (p.num_contract_inputs != 1 || p.input != 0)
    return "the softmax's operand is not the contract's only input (the library kernel reads inputs[0] alone)";
  const int64_t n = row_length(p);
  if (n >= kLibrarySoftmaxMinRow || short_rows_for_the_ticket_softmax(p)) return "";
  if (n % 4 != 0 || n < kTicketChunkValues)
    return fmt::format("rows of {} values, fewer than {}: the row kernel's second read still comes from the L2 (and the "
                       "ticket softmax takes rows of 16-byte vectors of at least {} values)",
                       n, kLibrarySoftmaxMinRow, kTicketChunkValues);
  return fmt::format("rows of {} values, fewer than {}, in {} chunks of {} values, fewer than {}: the row kernel's "
                     "second read still comes from the L2, and too few chunks to pay for spreading them over every SM",
                     n, kLibrarySoftmaxMinRow, total_chunks(p), kTicketChunkValues, kTicketMinChunks);
}

LibrarySoftmax library_softmax_kernel(const RowSoftmaxPlan& p) {
  return row_length(p) % 4 == 0 && chunks_per_row(p) <= kTicketMaxChunksPerRow && total_chunks(p) >= kTicketMinChunks
             ? LibrarySoftmax::ticket
             : LibrarySoftmax::cluster;
}

Result<std::string> generate_library_softmax_kernel(const RowSoftmaxPlan& plan, const CommentText& problem) {
  return generate_library_softmax_kernel(
      plan, problem,
      library_softmax_kernel(plan) == LibrarySoftmax::ticket ? kTicketSoftmaxLibrary : kClusterSoftmaxLibrary);
}

Result<std::string> generate_library_softmax_kernel(const RowSoftmaxPlan& p, const CommentText& problem,
                                                    std::string library) {
  const bool ticket = library_softmax_kernel(p) == LibrarySoftmax::ticket;
  const char* file = ticket ? "library/softmax_ticket.cu" : "library/softmax_cluster.cu";
  if (auto s = replace_library_line(library, ticket ? kTicketSoftmaxLogLine : kClusterSoftmaxLogLine,
                                    fmt::format("constexpr bool kLogSoftmax = {};  // set by the seed: {}",
                                                p.log ? "true" : "false", p.log ? "log_softmax" : "softmax"),
                                    file, "src/seed/routes/row_softmax/library_softmax.cpp");
      !s)
    return s.error();
  std::string shape;
  for (auto d : p.shape) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
  const std::string why = why_this_kernel(p, ticket, file);
  const std::string header = fmt::format(
      "// Seed kernel for {0}, written by cutegen without an LLM (docs/seed.md): {1} over the last\n"
      "// dimension of one contiguous fp32 tensor ({2} when traced):\n"
      "//   y = {3}\n"
      "//\n",
      problem.str(), p.log ? "log_softmax" : "softmax", shape, p.pattern);
  return header + why + library;
}

}  // namespace cutegen::seed
