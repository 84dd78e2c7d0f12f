#pragma once
// The chain of seeds after a product (docs/seed.md, "A convolution, then more seeds" and "A matrix product,
// then more seeds"): the conv_then and gemm_then routes each compute a head -- the library convolution or the
// library GEMM, with the pointwise epilogue it fuses -- whose result y is the input of one or more further
// seeds, any routes', found by the route table's own walk. What both share lives here: where a graph cuts,
// the steps after the head, and the file that chains the head and the steps through the workspace.
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "seed/comment_text.h"
#include "seed/op_graph.h"
#include "seed/route.h"
#include "seed/routes/then/extra_reads.h"
#include "seed/workspace_cap.h"

namespace cutegen::seed {

// The most seeds after the head: each costs its result's store and read (the fewest are tried first). Five:
// KernelBench level 2's 42 takes a global average pool, a bias, a logsumexp, a sum and a scale, all but the first
// on a few values per image.
inline constexpr int kMaxThenSteps = 5;

// One step after the head: another route's seed, for the graph whose forward input 0 is the previous result,
// writing `shape` (the last step writes the output). The next step reads that result as `read_shape` when a
// view (unsqueeze, squeeze, view, flatten) sits between them: the same contiguous values, other dimensions.
struct ThenStep {
  std::shared_ptr<const MatchedPlan> seed;
  std::vector<int64_t> shape;       // what this step writes: contiguous fp32
  int64_t bytes = 0;                // of that result, rounded up to 256 (0 for the last step: the output)
  std::vector<int64_t> read_shape;  // how the next step reads it; empty: as `shape`
  // What its graph reads besides the previous result and the problem's inputs, in the order of its forward inputs
  // after the problem's (the problem's parameters and buffers come after them). Empty for a step that reads only
  // those: the chain then passes the problem's inputs with the previous result in place of forward input 0.
  std::vector<ExtraRead> extra_reads;
  // Nodes of the problem's graph (-1 where unknown): the value it reads as its forward input 0, the value it writes,
  // and the value the next part reads (the written one, or a view of it). The chain's search matches a later step's
  // extra read against these, and keeps a pointwise step that would fold away a value read later.
  int previous = -1, stored = -1, read = -1;
};

// The table's walk over a graph: the plan of the first route that takes it, or the answer's reason.
using SecondSeedMatcher = Result<std::shared_ptr<const MatchedPlan>> (*)(const OpGraph&);

// "" when a seed can be a step of the chain, else why not: its kernel must have one contract entry point (the
// tiled GEMM's text has two, one compiled out) -- and a product after the head is on the library GEMM, not a
// CUDA-core one; and it is no chain itself (conv_then, gemm_then, prologue_then, conv_stats): a chain's parts are the
// routes' single seeds, cut where one value crosses, so kMaxThenSteps bounds the whole file.
std::string then_step_refusal(const MatchedPlan& seed);

// What a part asks for its own workspace as far as its plan tells, for the match's check of the judge's cap (the
// chain's workspace query gives the exact size, and the judge refuses a request over the cap before anything
// runs): a library GEMM's split operands; the library convolution's tap table and split weights
// (conv_workspace_bound); else kStepScratchAllowance -- a norm's or a loss's partials, a few doubles per CTA.
inline constexpr int64_t kStepScratchAllowance = int64_t{1} << 20;
int64_t then_step_scratch(const MatchedPlan& seed);
// For the chains whose parts share one scratch region after the intermediates (gemm_then, prologue_then): each part
// whose library convolution is on its TMA-im2col path and asks more than `cap` leaves after the intermediates is
// made again with its path chosen for what is left (choose_conv_path: fewer images per chunk of the packed
// copies, or the gather kernel, whose tables are small). What still does not fit is the caller's to refuse.
void fit_convolution_parts(std::vector<ThenStep>& parts, int64_t intermediates, int64_t cap);

// The graph the next seed sees: `g` with node `split` made forward input 0 (y), a contiguous fp32 tensor of
// the node's shape. Each of `extras` (ascending node ids: g's forward input 0, or a value computed before split that
// the chain keeps) becomes a forward input after g's own, in order -- an input moved to its new position, a
// computed value made an input as y is -- and g's parameters and buffers move up by as many: the contract's order
// is the forward inputs, then the parameters, then the buffers (op_graph.h).
OpGraph graph_after(const OpGraph& g, int split, const std::vector<int>& extras = {});

// A convolution's node (nn.Conv*d or nn.ConvTranspose*d).
bool is_conv_node(const Node& n);
// The one convolution among `reach` (reachable(g)), or nullptr when there are none or several.
const Node* only_convolution(const OpGraph& g, const std::vector<int>& reach);
// `root` and every op after it that is pointwise, has root's shape and dtype, and reads only that set and
// leaves (inputs, parameters, constants): after a convolution, what conv_epilogue fuses into its store (the
// head of conv_then's chain, and what conv_fold moves a reduction through).
std::set<int> pointwise_after(const OpGraph& g, const Node& root, const std::vector<int>& reach);
// The value a cut at `c` stores: c itself, or, when c is a view (unsqueeze, squeeze, view, reshape, flatten)
// of a contiguous fp32 value, possibly of another view, the first value that is not one -- the view is then
// only how the next seed reads the stored values. Returns c's id when c is no such view.
int stored_value(const OpGraph& g, const Node& c);
// `v` rounded up to a multiple of `to`; a result's bytes as the chain lays it out (fp32, rounded up to 256).
int64_t round_up_to(int64_t v, int64_t to);
int64_t result_bytes(const std::vector<int64_t>& shape);

// The steps that compute `g` (forward input 0 the previous result), each a seed then_step_refusal accepts: one
// route's seed for the whole, or a cut
// -- the latest that works -- with the steps before it and one seed after it: the fewest steps there are, at
// most `max_steps`, then folded (fold_pointwise_steps). nullopt: none.
// Only where no chain of cuts after which the ops read one value (and leaves) computes g, cuts after which they
// also read g's forward input 0 or a value an earlier step stores are tried, the same way: each such value is an
// extra read of the step after the cut (ThenStep::extra_reads; `start` says what g's own inputs are), and the steps
// before it end at the value (they store it). So a graph that chained without them keeps its chain. `keep`: values
// of g before its output that the steps must store likewise, for a part after g that reads them again.
std::optional<std::vector<ThenStep>> steps_for(const OpGraph& g, SecondSeedMatcher second, int max_steps,
                                               const ChainStart& start = {}, const std::set<int>& keep = {});
// Each pointwise or broadcast step that reads the result before it element for element, after a seed whose store
// takes an epilogue (the norm, pooling, reduction and softmax templates; store_epilogue.h), folded into that store:
// the seed writes the step's result where the step wrote it, and the step, its kernel and the intermediate between
// them are gone. Other steps stay as they are (a library kernel's store, a step that broadcasts the result). A step
// with other extra reads than the seed before it folds where each value it reads is one that seed reads too (its
// operands then read that seed's inputs; `start.num_forward` places them), and no step folds away a value that a
// later step reads again.
void fold_pointwise_steps(std::vector<ThenStep>& steps, const ChainStart& start = {});
// Why steps_for found none: the table's reason for the whole graph, or why its seed is no step
// (then_step_refusal), or that the cuts need more than `max_steps` steps.
std::string no_steps_reason(const OpGraph& g, SecondSeedMatcher second, int max_steps);

// The head of a chained file as its route emits it: the kernel text (its contract entry points made static
// functions), what the chain calls to size and run it, and how the generated comments name it.
struct ThenHead {
  std::string kernel;               // the head's kernel text, first in the file
  std::string what;                 // "the convolution -> y": the comment of its part of the chain
  std::string size_call, forward_call;  // with `inputs`, `&out` (y) and `part`, `base + used`, `stream` in scope
  std::vector<int64_t> shape;       // y as the head writes it
  std::vector<int64_t> read_shape;  // y as step 1 reads it; empty: as `shape`
  int64_t bytes = 0;                // y's bytes rounded up to 256
  // Its text is at the file's scope, not in a namespace of its own (the library convolution, which includes
  // CUTLASS's headers after its code): no step may be so too.
  bool file_scope = false;
};

// The head of a chain that is one of the table's seeds (prologue_then: the first step before a convolution or a
// product), placed as a step is (below) but in namespace seed_head, its entry points static as head_forward, or
// head_forward_ws with head_workspace_bytes; the chain calls it with the problem's own inputs. Error: a seed
// without exactly one contract entry point.
Result<ThenHead> then_head_of(const ThenStep& first, const CommentText& problem, std::string_view seed_file);

// The file's parts around the chain: the header comment (already filled in), the chain's namespace and the
// head's names in its comments ("the convolution": "The convolution, then the next seeds", "(which only the
// convolution reads)").
// A chain file's header: its route's template with {{STEP_COUNT}}, {{HEAD_PATTERN}}, {{HEAD_SHAPE}} and
// {{STEP_LINES}} filled in (the route's own placeholders, if any, are its to fill).
std::string then_header(std::string header, const std::vector<ThenStep>& steps, const std::string& head_pattern,
                        const std::vector<int64_t>& head_shape);

struct ThenFile {
  std::string header;
  std::string chain_namespace;  // conv_then, gemm_then
  std::string head_noun;        // convolution, matrix product
  std::string seed_file;        // the route's source, named when a step's kernel does not fit the chain
  int num_contract_inputs = 0;
  // The problem's forward() arguments: where a step's extra reads go among its inputs (ThenStep::extra_reads).
  int num_forward_inputs = 0;
  std::vector<int64_t> input_shape, output_shape;  // as traced: the call is refused with others
  // The parts' own workspaces (the head's tables or split operands, a step's partials) one after another
  // (false: conv_then's layout as judged), or all at one place after the intermediates (true): the parts run
  // one after another on the stream, so a part's scratch is dead once it returns, and the chain asks for the
  // largest part's instead of their sum -- two library GEMMs (KernelBench level 2's 45) fit the judge's cap so.
  bool shared_scratch = false;
  // 0: one pass. Else the chain's parts run batch / batch_chunk times, each pass on batch_chunk images of forward
  // input 0 and of the output (then/batch_passes.h): the parts and the intermediates are one pass's.
  int64_t batch = 0, batch_chunk = 0;
};

// Whether a kernel text includes a header after a line of code, and so goes at the chained file's scope.
bool includes_after_code(const std::string& text);
// What the matchers can tell of that before emitting: a part whose seed is the library convolution (the conv,
// conv_epilogue and separable_conv routes'). "" when the parts fit one file -- at most one such part, none when
// the head is one (`head_file_scope`: conv_then's) -- else why not.
bool then_part_needs_file_scope(const MatchedPlan& seed);
std::string then_file_scope_refusal(const std::vector<ThenStep>& parts, bool head_file_scope);

// The chained file: the head, each step's seed in namespace seed_step<i> (its prelude -- through its last #include,
// as split_prelude splits it -- in front, its entry points static, its knobs renamed S<i>_NAME where an earlier
// part defines the same macro), and the entry points that run them in order through the workspace. A step that
// includes headers after its code (the library convolution after a prologue) goes at the file's scope instead, its
// entry points static as step<i>_forward...; the file holds one such part (then_file_scope_refusal is the
// matchers' check).
Result<std::string> emit_then_file(const ThenFile& file, const ThenHead& head, const std::vector<ThenStep>& steps,
                                   const CommentText& problem);
// "//   step 1: <pattern>\n" per step: the header's list.
std::string then_step_lines(const std::vector<ThenStep>& steps);

// A seed's text split where its last #include line ends: the prelude (comments and preprocessor lines only:
// the `#define NDEBUG` before the headers stays before them) and the rest, which a chain puts in a namespace
// of its own. Error: code before the last #include (the text is not shaped as the chain expects).
struct SeedText {
  std::string prelude, body;
};
Result<SeedText> split_prelude(const std::string& text, std::string_view route, std::string_view seed_file);

// A chain's head made of a seed's text (split by split_prelude, its entry points made static `<prefix>...` by
// make_entries_static): the prelude, then the body in namespace seed_head -- a step that is the same route defines
// the same functions, and an unqualified call would find the head's by argument-dependent lookup. The chain calls
// `<prefix>forward_ws` with `<prefix>workspace_bytes`, or (no workspace) `<prefix>forward` with a placeholder part.
ThenHead namespaced_head(const SeedText& parts, const std::string& prefix, bool workspace, std::string what,
                         std::vector<int64_t> shape, int64_t bytes);

// The contract entry points of a kernel text, renamed to static functions `<prefix>forward`,
// `<prefix>forward_ws` and `<prefix>workspace_bytes`; which the text had.
struct StaticEntries {
  bool forward = false, forward_ws = false, workspace_bytes = false;
};
StaticEntries make_entries_static(std::string& text, const std::string& prefix);

}  // namespace cutegen::seed
