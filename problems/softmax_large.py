"""Reduction at KernelBench size: softmax over the last dimension of a 4096 x 393216 fp32 tensor (6 GiB).

The shape of KernelBench level 1's softmax problem; here to measure what the judge's checks cost on a
problem that size (issue 10) and to run attacks/honest/softmax_rows.cu on it. The input alone is
6 GiB; with two output sets and a float64 reference the judge needs several times that (an H200's
141 GB holds it).

CUTEGEN_PROBLEM_SCALE=k divides both dimensions by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
batch_size = max(1, 4096 // SCALE)
dim = max(1, 393216 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
