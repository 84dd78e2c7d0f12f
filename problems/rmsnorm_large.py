"""Normalisation at KernelBench size: RMSNorm over dimension 1 of a (112, 64, 512, 512) fp32 tensor (7.5 GB).

The semantics and shape of KernelBench level 1's RMSNorm problem: y = x / sqrt(mean(x^2 over the 64
features) + eps), eps = 1e-5, no affine parameters; the mean runs over dim 1, so the 64 values of one
(batch, i, j) position are 256 KB apart in memory and every position is normalised on its own.
library/rmsnorm_channels.cu is the library kernel for it. The input alone is 7.5 GB; like
problems/softmax_large.py, the judge needs several times that in device memory.

CUTEGEN_PROBLEM_SCALE=k divides the batch and the two spatial dimensions by k; the 64 features stay.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
batch_size = max(1, 112 // SCALE)
features = 64
dim1 = max(1, 512 // SCALE)
dim2 = max(1, 512 // SCALE)


class Model(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(torch.mean(x**2, dim=1, keepdim=True) + self.eps)
        return x / rms


def get_inputs():
    return [torch.rand(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]
