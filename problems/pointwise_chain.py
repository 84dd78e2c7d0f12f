"""A pointwise chain over two inputs with module constants, 4096 x 16384 fp32 (256 MiB per tensor):
y = min(leaky_relu(swish(x) + beta * z, slope), cap) - gelu(z).

The seed path's multi-input test (docs/seed.md): functional, module and method forms, a constructor
argument (beta), a constructor default (slope) and a plain attribute (cap) that tracing must resolve.
CUTEGEN_PROBLEM_SCALE=k divides both dimensions by k.
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
rows = max(1, 4096 // SCALE)
cols = max(1, 16384 // SCALE)


class Model(nn.Module):
    def __init__(self, beta: float, slope: float = 0.2):
        super().__init__()
        self.beta = beta
        self.act = nn.LeakyReLU(slope)
        self.cap = 4.0

    def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        y = x * torch.sigmoid(x) + self.beta * z
        return self.act(y).clamp(max=self.cap) - F.gelu(z)


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return [0.5]
