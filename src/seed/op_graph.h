#pragma once
// The problem's operator graph as the worker's `trace` answer gives it (docs/worker-protocol.md),
// typed once at the edge: the matcher and the generator never read JSON.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "seed/ops.h"

namespace cutegen::seed {

// An op's argument: another node's value, or a number written in the source (`0.5 * x`).
struct Operand {
  std::optional<int> ref;  // a node id
  double value = 0;        // when not a ref (inf/nan included)
  bool is_ref() const { return ref.has_value(); }
};

// A scalar parameter bound by name (`negative_slope`, `approximate`, `min`); null when left as None. A list of
// integers is the dimensions of a reduction over several at once (`dim=(2, 3)`): dims_of (graph_util.h) reads it.
using DimList = std::vector<int64_t>;
using ParamValue = std::variant<std::monostate, bool, double, std::string, DimList>;

struct TensorType {
  std::string dtype;           // the contract's names: float32, float16, ...
  std::vector<int64_t> shape;
  bool contiguous = true;
};

struct Node {
  int id = 0;
  std::string name;            // fx's name, for people
  // input | param | constant | tensor_constant | a canonical op (relu, mul, ...) | a torch spelling the
  // worker does not know (torch.matmul, nn.Conv2d, Tensor.view); compared as an Op (ops.h)
  OpName op;
  bool known = true;           // false: the worker could not normalise it (`note` may say why)
  std::string note;
  std::vector<Operand> args;
  std::map<std::string, ParamValue> params;
  bool inplace = false;
  std::optional<TensorType> type;  // absent for scalars and values without a tensor result
  // input and param: the position in the kernel contract's inputs (forward args, then parameters, then buffers)
  int index = -1;
  bool scalar = false;         // input: a Python int/float/bool forward argument
  std::string scalar_dtype;    // float64 | int64 | bool
};

struct OpGraph {
  bool traced = false;
  std::string reason;          // why not traced
  std::vector<Node> nodes;     // in execution order; ids are positions
  std::vector<Operand> outputs;
  int num_inputs = 0;          // forward() arguments
  std::vector<std::string> params;  // parameter then buffer names, in contract order after the inputs

  const Node& node(int id) const { return nodes.at(static_cast<std::size_t>(id)); }
  // The worker's answer; a malformed one is an Error naming the field (a worker bug).
  static Result<OpGraph> from_json(const nlohmann::json& j);
};

}  // namespace cutegen::seed
