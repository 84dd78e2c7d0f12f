"""Reduction: softmax over the last dimension of a 1000 x 100003 fp32 tensor (381 MiB).

The row length is odd (no 16-byte vectors) and longer than one CTA's shared memory holds: a kernel that
splits rows over CTAs must handle a last part shorter than the others and scalar accesses
(library/softmax_cluster.cu's streaming path). Inputs span both signs and large magnitudes, so a
missing max subtraction overflows.

CUTEGEN_PROBLEM_SCALE=k divides the big dimensions by k (the row length stays odd).
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
batch_size = max(1, 1000 // SCALE)
dim = max(1, 100003 // SCALE) | 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim) * 30.0]


def get_init_inputs():
    return []
