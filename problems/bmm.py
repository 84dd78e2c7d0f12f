"""Batched matrix product torch.bmm of (16, 500, 300) @ (16, 300, 260) fp32: sizes that are no multiple of
the seed GEMM's tile."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs():
    return [torch.rand(16, 500, 300), torch.rand(16, 300, 260)]


def get_init_inputs():
    return []
