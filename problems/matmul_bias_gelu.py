"""Fused GEMM epilogue: y = gelu(x @ W^T + b) with an nn.Linear (weight and bias are parameters).

CUTEGEN_PROBLEM_SCALE=k divides the batch and feature sizes by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
batch_size = max(1, 4096 // SCALE)
in_features = max(1, 4096 // SCALE)
out_features = max(1, 8192 // SCALE)


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.fc(x))


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
