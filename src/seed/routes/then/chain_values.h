#pragma once
// The values a chain keeps for its steps' extra reads (extra_reads.h): where the steps after a head start, which
// stored value or problem input each extra read is, and the workspace layout that keeps each value until its last
// reader has run.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "seed/op_graph.h"
#include "seed/routes/then/then_chain.h"

namespace cutegen::seed {

// The graph after a chain's head, whose result is node `split`, and where its steps start. Where the ops after the
// head read forward input 0 again (a residual of the input: KernelBench level 2's 51), that input joins the rest's
// forward inputs after the problem's own (graph_after), so every step has it as an extra read. Error: they read a
// Python-number forward input (`what` names the head's result: "the ops after the convolution read ...").
struct ChainRest {
  OpGraph graph;
  ChainStart start;
};
Result<ChainRest> rest_after_head(const OpGraph& g, int split, std::string_view what);

// The steps after a head whose result is node `split` (stored as node `head_stored`, read by step 1 as `split`):
// the rest (rest_after_head), its steps (steps_for; one seed, or cuts), the file-scope check and the extra reads
// resolved. Error, each naming the head ("after the convolution: ..."): why the rest gets no steps. `noun` names
// the head's result: "convolution", "reduction", "matrix product".
Result<std::vector<ThenStep>> chain_steps_after(const OpGraph& g, int split, int head_stored, SecondSeedMatcher second,
                                                std::string_view noun, bool head_file_scope);

// Whether `steps` store each of `nodes` (as the value a step writes, or the view of it the next part reads).
bool stored_by(const std::vector<ThenStep>& steps, const std::vector<int>& nodes);

// Each step's extra reads resolved against the problem's graph: a leaf of it (through identities) is its contract
// input; another value is the chain value the head (writing node `head_stored`, read by step 1 as `head_read`) or
// an earlier step stores. Error: a value no part before the step keeps (the cut search allows none).
Status resolve_extra_reads(const OpGraph& problem, int head_stored, int head_read, std::span<ThenStep> steps);
// Whether any step reads more than the previous result and the problem's inputs.
bool has_extra_reads(std::span<const ThenStep> steps);
// The workspace as the chained file lays it out: chain value k -- 0 the head's result y, i step i's result (the
// last step writes the output instead) -- at offsets[k], bytes[k] long, `intermediates` bytes in all; each part's
// own workspace after them.
struct ChainLayout {
  std::vector<int64_t> offsets, bytes;
  int64_t intermediates = 0;
};
ChainLayout chain_layout(int64_t head_bytes, std::span<const ThenStep> steps);
// "" when no part writes over a chain value before its last reader -- the part after it, or a later step that reads
// it again (ExtraRead, resolved) -- has run: each part writes its own result and its own workspace. Else which part,
// which value and which reader. emit_then_file refuses a layout that would.
std::string overwritten_value(const ChainLayout& layout, std::span<const ThenStep> steps);

}  // namespace cutegen::seed
