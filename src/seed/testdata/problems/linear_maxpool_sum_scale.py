"""nn.Linear, a MaxPool1d over the features (x.unsqueeze(1) ... squeeze(1)), a row sum and a scale, as KernelBench
level 2's 55 writes it at a small size: gemm_then on the tiled GEMM (a product too small for the library's), then a
pooling, a reduction and a pointwise step."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.matmul = nn.Linear(96, 80)
        self.max_pool = nn.MaxPool1d(2)

    def forward(self, x):
        x = self.matmul(x)
        x = self.max_pool(x.unsqueeze(1)).squeeze(1)
        x = torch.sum(x, dim=1)
        return x * 0.5


def get_inputs():
    return [torch.rand(24, 96)]


def get_init_inputs():
    return []
