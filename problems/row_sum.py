"""Reduction: the sum of each row of a 4096 x 65536 fp32 matrix.

CUTEGEN_PROBLEM_SCALE=k divides both dimensions by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
rows = max(1, 4096 // SCALE)
cols = max(1, 65536 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=-1)


def get_inputs():
    return [torch.rand(rows, cols)]


def get_init_inputs():
    return []
