"""Reduction at KernelBench size: log-softmax over the last dimension of a 4096 x 393216 fp32 tensor (6 GiB).

The shape of KernelBench level 1's log-softmax problem, for library/log_softmax_cluster.cu
(a row is 1.5 MB: it fits in the shared memory of a thread-block cluster (16 CTAs of 96 KB), so it is read once). Like
problems/softmax_large.py, the judge needs several times the input's size in device memory.

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
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
