#include "seed/routes/scan/exclusive_scan.h"

#include <fmt/format.h>

#include "seed/graph_util.h"

namespace cutegen::seed {
namespace {

constexpr const char* kForms =
    "the scan seed takes torch.cat as an exclusive cumsum only as cat((zeros_like(...), cumsum(x.narrow(d, 0, n - 1), "
    "d)), d) or with the narrow after the cumsum";

// The node an operand refers to, when it is a tensor.
const Node* tensor_at(const OpGraph& g, const Operand& o) {
  if (!o.ref) return nullptr;
  const Node& n = g.node(*o.ref);
  return n.type ? &n : nullptr;
}

// zeros_like(...) of `shape` but extent 1 along `dim`, float32: the shift's first position.
bool is_leading_zeros(const Node& z, const std::vector<int64_t>& shape, int64_t dim) {
  if (z.op != Op::zeros_like || !z.type || z.type->dtype != "float32" || z.type->shape.size() != shape.size())
    return false;
  for (std::size_t k = 0; k < shape.size(); ++k)
    if (z.type->shape[k] != (static_cast<int64_t>(k) == dim ? 1 : shape[k])) return false;
  return true;
}

// narrow(v, dim, 0, length) -> v; else nullptr. A negative start counts from the end, as torch's does.
const Node* narrowed_from_start(const OpGraph& g, const Node& n, int64_t dim, int64_t length) {
  if (n.op != Op::narrow || n.args.size() != 1 || !n.type) return nullptr;
  const Node* v = tensor_at(g, n.args[0]);
  const double* start = number(n, "start");
  const double* len = number(n, "length");
  if (!v || !start || !len || dim_of(n, n.type->shape.size()) != dim ||
      v->type->shape.size() != n.type->shape.size()) return nullptr;
  const int64_t extent = v->type->shape[static_cast<std::size_t>(dim)];
  const auto first = static_cast<int64_t>(*start < 0 ? *start + static_cast<double>(extent) : *start);
  return first == 0 && static_cast<int64_t>(*len) == length ? v : nullptr;
}

}  // namespace

Result<ExclusiveScan> match_exclusive_cat(const OpGraph& g, const Node& cat) {
  if (!cat.type || cat.args.size() != 2) {
    return Error{fmt::format("the output is a cat of {} values, not an exclusive cumsum ({})", cat.args.size(), kForms)};
  }
  const auto& shape = cat.type->shape;
  const auto d = dim_of(cat, shape.size());
  const Node* zeros = tensor_at(g, cat.args[0]);
  const Node* rest = tensor_at(g, cat.args[1]);
  if (!d || *d < 0 || !zeros || !rest || !is_leading_zeros(*zeros, shape, *d)) {
    return Error{fmt::format("the output is a cat whose first part is not zeros_like of extent 1 along its dim ({})",
                             kForms)};
  }
  const int64_t n = shape[static_cast<std::size_t>(*d)];
  const Node* scan = rest;
  const Node* x = nullptr;
  if (rest->op == Op::narrow) {  // cat((z, cumsum(x, d).narrow(d, 0, n - 1)), d)
    scan = narrowed_from_start(g, *rest, *d, n - 1);
    if (scan && (scan->op == Op::cumsum || scan->op == Op::cumprod) && scan->args.size() == 1) x = tensor_at(g, scan->args[0]);
  } else if ((rest->op == Op::cumsum || rest->op == Op::cumprod) && rest->args.size() == 1) {
    const Node* narrowed = tensor_at(g, rest->args[0]);  // cat((z, cumsum(x.narrow(d, 0, n - 1), d)), d)
    x = narrowed ? narrowed_from_start(g, *narrowed, *d, n - 1) : nullptr;
  }
  if (!scan || !x || x->type->shape != shape) {
    return Error{fmt::format("the output is a cat of zeros and {}, not of a scan of the first n - 1 positions ({})",
                             rest->op, kForms)};
  }
  if (scan->op != Op::cumsum) {
    return Error{"the output is a cat of zeros and a cumprod (an exclusive scan's first value is the identity: 1 for "
                 "a product; the seed's exclusive scan is a cumsum)"};
  }
  if (dim_of(*scan, scan->type ? scan->type->shape.size() : 0) != *d) {
    return Error{"the output is a cat of zeros and a cumsum over another dimension than the cat's"};
  }
  return ExclusiveScan{.scan = scan, .source = x->id};
}

std::optional<int> shifted_source(const OpGraph& g, const Node& v, int64_t dim) {
  if (!v.type || dim < 0 || static_cast<std::size_t>(dim) >= v.type->shape.size()) return std::nullopt;
  const auto& shape = v.type->shape;
  const int64_t n = shape[static_cast<std::size_t>(dim)];
  auto shifted_cat = [&](const Node& c, int64_t tail) -> const Node* {  // cat((z, tail positions), dim)
    if (c.op != Op::cat || c.args.size() != 2 || !c.type || dim_of(c, c.type->shape.size()) != dim) return nullptr;
    const Node* zeros = tensor_at(g, c.args[0]);
    const Node* rest = tensor_at(g, c.args[1]);
    if (!zeros || !rest || !is_leading_zeros(*zeros, shape, dim)) return nullptr;
    return rest->type->shape[static_cast<std::size_t>(dim)] == tail ? rest : nullptr;
  };
  const Node* x = nullptr;
  if (v.op == Op::cat) {  // cat((z, x.narrow(dim, 0, n - 1)), dim)
    const Node* rest = shifted_cat(v, n - 1);
    x = rest ? narrowed_from_start(g, *rest, dim, n - 1) : nullptr;
  } else if (v.op == Op::narrow) {  // cat((z, x), dim).narrow(dim, 0, n)
    const Node* c = narrowed_from_start(g, v, dim, n);
    x = c ? shifted_cat(*c, n) : nullptr;
  }
  if (!x || x->type->shape != shape) return std::nullopt;
  return x->id;
}

}  // namespace cutegen::seed
