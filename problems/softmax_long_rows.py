"""Reduction with few, very long rows: softmax over the last dimension of a 16 x 4194304 fp32 tensor
(256 MiB). One CTA per row would use 16 SMs; library/softmax_split_rows.cu splits each row
over many CTAs and combines their partial (max, sum) pairs through the harness's workspace
(contract v2).

CUTEGEN_PROBLEM_SCALE=k divides both dimensions by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
batch_size = max(1, 16 // SCALE)
dim = max(1, 4194304 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
