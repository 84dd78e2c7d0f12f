"""RMS normalisation over the last dimension, written out as KernelBench writes it:
x / sqrt(mean(x ** 2, dim=-1, keepdim=True) + eps), 8192 x 4096 fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, eps: float = 1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.sqrt(torch.mean(x ** 2, dim=-1, keepdim=True) + self.eps)


def get_inputs():
    return [torch.rand(8192, 4096)]


def get_init_inputs():
    return []
