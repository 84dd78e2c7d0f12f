"""Normalization with parameters and a buffer: y = LayerNorm(x) * gain.

`gain` is a registered buffer (not trained), registered BEFORE the LayerNorm so that the kernel
contract's order (parameters first, then buffers) differs from registration order.
CUTEGEN_PROBLEM_SCALE=k divides both dimensions by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
rows = max(1, 4096 // SCALE)
hidden = max(1, 8192 // SCALE)


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.register_buffer("gain", torch.linspace(0.5, 1.5, hidden))
        self.norm = nn.LayerNorm(hidden)
        # Non-trivial affine parameters, so a kernel that ignores them fails.
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x) * self.gain


def get_inputs():
    return [torch.rand(rows, hidden)]


def get_init_inputs():
    return [hidden]
