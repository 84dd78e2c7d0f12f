#pragma once
// The window ops the worker traces as modules -- nn.MaxPool/AvgPool1d..3d and nn.Conv1d..3d -- read the same
// way by their routes: the window per dimension (k0, s0, p0, d0, k1, ...) right-aligned into (D, H, W).
#include <cstdint>
#include <string>

#include "common/result.h"
#include "seed/op_graph.h"

namespace cutegen::seed {

// The window, given per dimension as k0, s0, p0, d0, k1, ..., right-aligned into (D, H, W). Error (naming
// `what`) when a number is missing or out of range.
Status read_window(const Node& n, int dims, int64_t kernel[3], int64_t stride[3], int64_t padding[3],
                   int64_t dilation[3], const std::string& what);

// The graph's output when it is a convolution (with its weight) of a forward input; else why not.
Result<const Node*> convolution_of_input(const OpGraph& g);

// The graph's output is a convolution with groups=1 (a dense one).
bool is_dense_convolution(const OpGraph& g);

// One number per dimension as a module's argument is written: 4, or (3, 5).
std::string per_dim(const int64_t* v, int dims);

}  // namespace cutegen::seed
