#pragma once
// What a chain's step reads besides the previous result and the problem's inputs (docs/seed.md, "A convolution,
// then more seeds"): the problem's forward input 0 again, or an earlier value of the chain. The graph side: which
// values cross a cut, and what the step after it is given for them. The chain's side (resolving them to the
// problem's inputs and the chain's stored values, the workspace they stay in) is chain_values.h.
#include <optional>
#include <vector>

#include "seed/op_graph.h"

namespace cutegen::seed {

// A value a step reads besides the previous result and the problem's own inputs: one of its graph's forward inputs
// after the problem's (graph_after appends them; docs/seed.md, "A convolution, then more seeds"). The problem's
// forward input 0 (which the head reads, and whose position carries the previous result), an earlier value of the
// chain (the head's result y, or an earlier step's stored result), or a leaf read through identities.
struct ExtraRead {
  // The value's node. Every graph the chain cuts from the problem's keeps the problem's node ids, so one id names
  // the value in all of them.
  int node = -1;
  // Where the chain finds it (resolve_extra_reads): the problem's contract input `input`, or, where that is -1,
  // chain value `value` -- 0 the head's result y, i step i's result -- read as stored or, `viewed`, through the view
  // the part after it reads it as (kView<value> in the file).
  int input = -1, value = -1;
  bool viewed = false;
};

// Where the graph given to steps_for starts: the node of its forward input 0 (the head's result, or the problem's
// forward input 0 where the first step reads the problem's inputs), the values its forward inputs after the
// problem's own are (graph_after's extras: each step inherits them), and how many forward inputs the problem has.
// The default, for a graph whose only inputs are the problem's: its steps read nothing besides.
struct ChainStart {
  int input0 = -1;
  std::vector<ExtraRead> extras;
  int num_forward = 0;
};

// What the ops after `c` read of the values before it besides c itself and leaves other than forward input 0 --
// forward input 0 (whose position carries c's value in the graph after the cut) and values computed before c --,
// ascending.
std::vector<int> reads_across(const OpGraph& g, const std::vector<int>& reach, const Node& c);
// What the step after cut `c` reads besides c and the leaves it reads as the graph before it did, given
// reads_across(g, reach, c): the forward inputs graph_after(g, c, nodes) gives it (g's forward input 0, or a value
// computed before c), the same as the step's extra reads (`reads`), and the computed ones, which an earlier step
// must store (`stored_by_before`; stored_by in chain_values.h says whether steps do). An identity of g's forward
// input 0 stays an op of the step's graph, reading that input. nullopt: a read the chain cannot give -- a Python
// number, or a computed value that is not contiguous fp32.
struct CutReads {
  std::vector<int> nodes;
  std::vector<ExtraRead> reads;
  std::vector<int> stored_by_before;
};
std::optional<CutReads> cut_reads(const OpGraph& g, const std::vector<int>& across);
// `n` seen through identities (clone, detach, contiguous): the first node that is no identity.
const Node& identity_base(const OpGraph& g, const Node& n);

}  // namespace cutegen::seed
