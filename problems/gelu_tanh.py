"""Elementwise activation with transcendentals: y = gelu(x, approximate="tanh") on 4096 x 32768 fp32.

Under the strict policy a fast tanh approximation must still be fp32-accurate.
CUTEGEN_PROBLEM_SCALE=k divides both dimensions by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
rows = max(1, 4096 // SCALE)
cols = max(1, 32768 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
