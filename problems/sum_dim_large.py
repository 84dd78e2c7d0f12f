"""Reduction at KernelBench size: torch.sum over dimension 1 of a 128 x 4096 x 4095 fp32 tensor (8 GiB),
keeping the dimension.

The shape and semantics of KernelBench level 1's sum-over-a-dimension problem (its mean, max, min, argmax
and argmin problems share the shape): the reduced values of one output are 4095 floats (16 KB) apart, and
4095 is odd, so no row is 16-byte aligned. library/reduce_dim.cu is the library kernel for it.

CUTEGEN_PROBLEM_SCALE=k divides the batch and the two other dimensions by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
batch_size = max(1, 128 // SCALE)
reduced = max(1, 4096 // SCALE)
kept = max(1, 4095 // SCALE)


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.rand(batch_size, reduced, kept)]


def get_init_inputs():
    return [1]
