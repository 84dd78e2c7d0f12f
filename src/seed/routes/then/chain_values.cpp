#include "seed/routes/then/chain_values.h"

#include <algorithm>

#include <fmt/format.h>

#include "seed/graph_util.h"

namespace cutegen::seed {

Result<ChainRest> rest_after_head(const OpGraph& g, int split, std::string_view what) {
  ChainRest rest{.graph = graph_after(g, split), .start = {.input0 = split, .num_forward = g.num_inputs}};
  std::vector<int> input0;
  for (int id : reachable(rest.graph)) {
    const Node& n = rest.graph.node(id);
    if (id == split || n.op != Op::input) continue;
    if (n.scalar)
      return Error{fmt::format("the ops after the {} read forward input {} too (the next seed reads only the {}'s "
                               "result, parameters, other inputs and forward input 0)",
                               what, contract_name(g, n), what)};
    if (n.index == 0) input0.push_back(id);
  }
  if (input0.empty()) return rest;
  rest.graph = graph_after(g, split, input0);
  rest.start.extras = {ExtraRead{.node = input0.front()}};
  return rest;
}

Result<std::vector<ThenStep>> chain_steps_after(const OpGraph& g, int split, int head_stored, SecondSeedMatcher second,
                                                std::string_view noun, bool head_file_scope) {
  auto rest = rest_after_head(g, split, noun);
  if (!rest) return rest.error();
  const OpGraph& after = rest->graph;
  // One seed for the rest, or up to kMaxThenSteps, split where the rest reads one value (instance_norm, then a
  // division; a GroupNorm, then a mean), or, where it must, one value and an earlier one again (a residual of y:
  // KernelBench level 2's 92). steps_for tries the rest whole first; a seed that is no step (a chain itself) is cut.
  auto steps = steps_for(after, second, kMaxThenSteps, rest->start);
  if (!steps) return Error{fmt::format("after the {}: {}", noun, no_steps_reason(after, second, kMaxThenSteps))};
  if (std::string why = then_file_scope_refusal(*steps, head_file_scope); !why.empty())
    return Error{fmt::format("after the {}: {}", noun, why)};
  if (auto resolved = resolve_extra_reads(g, head_stored, split, *steps); !resolved) return resolved.error();
  return std::move(*steps);
}

bool stored_by(const std::vector<ThenStep>& steps, const std::vector<int>& nodes) {
  return std::all_of(nodes.begin(), nodes.end(), [&](int node) {
    return std::any_of(steps.begin(), steps.end(),
                       [&](const ThenStep& s) { return s.stored == node || s.read == node; });
  });
}

bool has_extra_reads(std::span<const ThenStep> steps) {
  return std::any_of(steps.begin(), steps.end(), [](const ThenStep& s) { return !s.extra_reads.empty(); });
}

Status resolve_extra_reads(const OpGraph& problem, int head_stored, int head_read, std::span<ThenStep> steps) {
  for (std::size_t i = 0; i < steps.size(); ++i)
    for (ExtraRead& r : steps[i].extra_reads) {
      r.input = r.value = -1;
      r.viewed = false;
      if (r.node < 0 || r.node >= static_cast<int>(problem.nodes.size()))
        return Error{fmt::format("step {} reads a value the problem's graph does not have (node {})", i + 1, r.node)};
      const Node& base = identity_base(problem, problem.node(r.node));
      if (base.op == Op::input || base.op == Op::param) {
        r.input = base.index;
        continue;
      }
      // The values the parts before step i + 1 store: the head's (chain value 0), then steps 1 .. i's.
      auto is = [&](int value, int stored, int read) {
        if (r.node != stored && r.node != read) return false;
        r.value = value;
        r.viewed = r.node != stored;
        return true;
      };
      bool found = is(0, head_stored, head_read);
      for (std::size_t k = 0; !found && k < i; ++k) found = is(static_cast<int>(k + 1), steps[k].stored, steps[k].read);
      if (!found)
        return Error{fmt::format("step {} reads {} again, which no part of the chain before it keeps", i + 1,
                                 problem.node(r.node).name)};
    }
  return ok_status();
}

ChainLayout chain_layout(int64_t head_bytes, std::span<const ThenStep> steps) {
  ChainLayout layout{.offsets = {0}, .bytes = {head_bytes}, .intermediates = head_bytes};
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    layout.offsets.push_back(layout.intermediates);
    layout.bytes.push_back(steps[i].bytes);
    layout.intermediates += steps[i].bytes;
  }
  return layout;
}

std::string overwritten_value(const ChainLayout& layout, std::span<const ThenStep> steps) {
  const std::size_t values = layout.offsets.size();
  // Part p (0 the head, i step i) writes value p (the last step writes the output) and its own workspace, which
  // starts after the intermediates.
  auto overlaps = [&](std::size_t value, std::size_t part) {
    const int64_t lo = layout.offsets[value], hi = lo + layout.bytes[value];
    const bool own = part < values && layout.offsets[part] < hi && lo < layout.offsets[part] + layout.bytes[part];
    return own || layout.intermediates < hi;
  };
  for (std::size_t v = 0; v < values; ++v) {
    std::size_t last = v + 1;  // the part after it reads it as its forward input 0
    for (std::size_t i = 0; i < steps.size(); ++i)
      for (const ExtraRead& r : steps[i].extra_reads)
        if (r.input < 0 && r.value == static_cast<int>(v)) last = std::max(last, i + 1);
    for (std::size_t part = v + 1; part <= last && part <= steps.size(); ++part)
      if (overlaps(v, part))
        return fmt::format("part {} writes over chain value {} before part {} reads it", part, v, last);
  }
  return "";
}

}  // namespace cutegen::seed
