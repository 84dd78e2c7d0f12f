"""Elementwise with a non-tensor argument: out = x + alpha * y, alpha a Python float.

The kernel receives alpha as a host scalar. CUTEGEN_PROBLEM_SCALE=k divides both dimensions by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
rows = max(1, 4096 // SCALE)
cols = max(1, 65536 // SCALE)
alpha = 0.5


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
        return x + alpha * y


def get_inputs():
    return [torch.rand(rows, cols), torch.rand(rows, cols), alpha]


def get_init_inputs():
    return []
