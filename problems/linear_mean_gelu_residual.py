"""The row mean of a Linear layer minus a per-column parameter, a logsumexp over that one value, a GELU, then
the input added back: each row's number broadcast over the row of x, an (M, K) output. The mean moves through
the product (a GEMV, GemmKernel::folded) into an (M, 1) intermediate; the broadcast step after it reads x again,
the chain's forward input 0 (an extra read of the gemm_then chain, docs/seed.md). M, K, N = 1024, 2048, 3000 fp32.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features: int, hidden: int):
        super().__init__()
        self.proj = nn.Linear(features, hidden)
        self.shift = nn.Parameter(torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skip = x.clone().detach()
        h = (self.proj(x) - self.shift).mean(dim=1, keepdim=True)
        h = torch.nn.functional.gelu(torch.logsumexp(h, dim=1, keepdim=True))
        return h + skip


def get_inputs():
    return [torch.rand(1024, 2048)]


def get_init_inputs():
    return [2048, 3000]
