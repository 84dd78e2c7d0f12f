#include "seed/window.h"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"

namespace cutegen::seed {

Status read_window(const Node& n, int dims, int64_t kernel[3], int64_t stride[3], int64_t padding[3],
                   int64_t dilation[3], const std::string& what) {
  for (int i = 0; i < dims; ++i) {
    const int slot = 3 - dims + i;
    const double* k = number(n, fmt::format("k{}", i).c_str());
    const double* s = number(n, fmt::format("s{}", i).c_str());
    const double* p = number(n, fmt::format("p{}", i).c_str());
    const double* d = number(n, fmt::format("d{}", i).c_str());
    if (!k || !s || !p || !d || *k < 1 || *s < 1 || *p < 0 || *d < 1)
      return Error{fmt::format("{}'s window for dimension {} is missing or not positive", what, i)};
    kernel[slot] = static_cast<int64_t>(*k);
    stride[slot] = static_cast<int64_t>(*s);
    padding[slot] = static_cast<int64_t>(*p);
    dilation[slot] = static_cast<int64_t>(*d);
  }
  return ok_status();
}

Result<const Node*> convolution_of_input(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node* out = *output;
  if (out->op != Op::conv || out->args.size() < 2 || !out->type)
    return Error{fmt::format("the output is {}, not a convolution of an input", out->op)};
  if (auto why = plain_input(g, out->args[0], "the convolved tensor"); !why.empty()) return Error{why};
  return out;
}

bool is_dense_convolution(const OpGraph& g) {
  if (g.outputs.size() != 1 || !g.outputs[0].ref) return false;
  const Node& out = g.node(*g.outputs[0].ref);
  const double* groups = number(out, "groups");
  return out.op == Op::conv && groups && *groups == 1;
}

std::string per_dim(const int64_t* v, int dims) {
  std::vector<int64_t> used(v + 3 - dims, v + 3);
  return used.size() == 1 ? fmt::format("{}", used[0]) : fmt::format("({})", fmt::join(used, ", "));
}

}  // namespace cutegen::seed
