"""A.unsqueeze(1) * B + c with A (3000,), B (3000, 2500) and c (2500,) fp32: diag(A) @ B + c without the
diagonal matrix, two operands broadcast along different dimensions (the broadcast seed)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return A.unsqueeze(1) * B + c


def get_inputs():
    return [torch.rand(3000), torch.rand(3000, 2500), torch.rand(2500)]


def get_init_inputs():
    return []
