"""Elementwise: y = relu(x) on a 4096 x 393216 fp32 tensor, the size of KernelBench's level-1 ReLU
(6 GiB in, 6 GiB out: about 2.7 ms of HBM traffic on an H200). The library kernel's target:
library/elementwise.cu at >= 97% of the roofline floor.

CUTEGEN_PROBLEM_SCALE=k divides the big dimensions by k so tests can run the same file at a tiny size.
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
        return torch.relu(x)


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
