"""A half-precision pointwise chain: y = softplus(x, beta=2) * tanh(x) on 4096 x 32768 fp16 (fp32 reference).

The seed path's fp16 test (docs/seed.md): loads and stores in half, the chain in fp32.
CUTEGEN_PROBLEM_SCALE=k divides both dimensions by k.
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
rows = max(1, 4096 // SCALE)
cols = max(1, 32768 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x, beta=2.0) * torch.tanh(x)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float16)]


def get_init_inputs():
    return []
