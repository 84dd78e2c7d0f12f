"""Two outputs: split the last dimension in halves and return (lo + hi, lo - hi).

CUTEGEN_PROBLEM_SCALE=k divides both dimensions by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
rows = max(1, 4096 // SCALE)
cols = max(2, 32768 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        lo, hi = torch.chunk(x, 2, dim=-1)
        return lo + hi, lo - hi


def get_inputs():
    return [torch.rand(rows, cols)]


def get_init_inputs():
    return []
