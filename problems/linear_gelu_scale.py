"""A Linear layer with a pointwise epilogue: y = gelu((x @ W^T + b - shift) * scale), tanh-approximated GELU,
with `shift` and `scale` module constants (KernelBench level 2's "Gemm + scalar ops + activation" shape).
M, K, N = 1000, 1500, 2500 fp32: no multiple of the seed GEMM's tile, so its predication is exercised.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, shift: float, scale: float):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.shift = shift
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.fc(x)
        x = (x - self.shift) * self.scale
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.rand(1000, 1500)]


def get_init_inputs():
    return [1500, 2500, 0.25, 1.5]
