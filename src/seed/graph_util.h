#pragma once
// Reading a traced operator graph, shared by the matchers: scalar parameters, shapes, the one output,
// values as people read them, and a pointwise sub-graph emitted as device statements.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "seed/op_graph.h"
#include "seed/plan_parts.h"

namespace cutegen::seed {

// A numeric parameter, or nullptr when absent or not a number.
const double* number(const Node& n, const char* key);
// The parameter is absent or None.
bool is_none(const Node& n, const char* key);
// A boolean (or numeric) parameter that is present and true.
bool flag(const Node& n, const char* key);
// The product of s[from..to).
int64_t product(const std::vector<int64_t>& s, std::size_t from, std::size_t to);
// The one tensor forward() returns, or why there is not one.
Result<const Node*> single_output(const OpGraph& g);
// A view (unsqueeze, squeeze, view, reshape, flatten): it changes only how contiguous values are indexed.
bool is_view_op(const Node& n);
// `n` seen through views: while n is a view, of its dtype and element count, of a contiguous value, that value
// -- the same values in the same order. `n` itself when it is no such view.
const Node& through_views(const OpGraph& g, const Node& n);
// Nodes the outputs depend on, ascending (= execution order).
std::vector<int> reachable(const OpGraph& g);
// Node `root` and the nodes it depends on, ascending; with `stop_at`, not looking behind a node it is true
// for (the epilogue matchers' view: what a product's or a convolution's epilogue reads besides it).
std::vector<int> depends_on(const OpGraph& g, int root, bool (*stop_at)(const Node&) = nullptr);
// "" when the operand is a contiguous tensor forward() argument (or, with `params`, a parameter) of `dtype`
// (fp32 unless said); else the reason it is not.
std::string plain_input(const OpGraph& g, const Operand& o, const std::string& what, bool params = false,
                        std::string_view dtype = "float32");
// A dimension argument normalised to [0, rank); nullopt for None, -1 when out of range or a list of several
// dimensions (dims_of reads those; a route that reads one dimension refuses -1).
std::optional<int64_t> dim_of(const Node& n, std::size_t rank, const char* key = "dim");
// A reduction's dimensions normalised to [0, rank), ascending: one for a number, several for a list (`dim=(2, 3)`);
// nullopt for None (everything). A dimension out of range is -1 (first, after the sort).
std::optional<std::vector<int64_t>> dims_of(const Node& n, std::size_t rank);
// How many dimensions the `dim` parameter names: 0 for None, 1 for a number, the length of a list.
std::size_t dim_count(const Node& n);
// A parameter's value as Python writes it: None, True, 0.5, 'tanh', (2, 3).
std::string param_text(const ParamValue& v);
// A shape as people read it: "4096x393216", or "a 0-d tensor".
std::string shape_text(const std::vector<int64_t>& s);
// An input or parameter as the contract names it: a parameter by its module path (`conv.bias`), else fx's name.
std::string contract_name(const OpGraph& g, const Node& n);
// A value as people read it: inputs by name, ops as op(args, key=value).
std::string text_of(const OpGraph& g, const Operand& o);
// The pointwise sub-graph from `root` down to `leaves` as device statements (`prefix<id>` values), in
// execution order; returns the root's value. Error: something on the way is not a pointwise op of the
// table or reaches a value that is not a leaf.
Result<std::string> emit_chain(const OpGraph& g, int root, const std::map<int, std::string>& leaves,
                               const std::string& prefix, std::vector<PointwiseStep>& steps);

// Whether node `root` is an affine function of node `source`'s value, element by element: every node between them
// an addition or subtraction (any alpha), a multiplication with one factor that does not depend on `source`, a true
// division of a `source`-dependent value by one that does not, a negation or an identity. Then a sum of it over
// any dimensions can be moved through a linear `source` (a product: GemmKernel::folded; a convolution: the
// conv_fold route). Anything else -- a view, an activation, the value squared -- is not.
bool affine_in(const OpGraph& g, int source, int root);

}  // namespace cutegen::seed
