"""Normalisation at KernelBench size: LayerNorm over the last three dimensions of a (16, 64, 256, 256) fp32 tensor.

The shape and module of KernelBench level 1's LayerNorm problem: nn.LayerNorm((64, 256, 256)) with its
elementwise affine weight and bias (4M values each; inputs[1] and inputs[2] in the contract's order).
Each of the 16 rows is 16 MB: more than any SM's (or cluster's) shared memory, less than the L2.
The affine parameters start non-trivial here (KernelBench leaves them at ones and zeros), so the
problem's own trial already fails a kernel that ignores them; the judge redraws them for every call.
library/layernorm_rows_grid.cu is the library kernel for it.

CUTEGEN_PROBLEM_SCALE=k divides the three normalised dimensions by k; the 16 rows stay.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
batch_size = 16
features = max(1, 64 // SCALE)
dim1 = max(1, 256 // SCALE)
dim2 = max(1, 256 // SCALE)


class Model(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.rand(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [(features, dim1, dim2)]
