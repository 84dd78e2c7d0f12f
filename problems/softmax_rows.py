"""Reduction: softmax over the last dimension of a 4096 x 65536 fp32 tensor (1 GiB).

Matches attacks/honest/softmax_rows.cu: one contiguous fp32 tensor of rank >= 1, rows along the last dimension.

CUTEGEN_PROBLEM_SCALE=k divides the big dimensions by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
batch_size = max(1, 4096 // SCALE)
dim = max(1, 65536 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
