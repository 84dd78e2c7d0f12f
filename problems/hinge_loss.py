"""Hinge loss mean(clamp(1 - predictions * targets, min=0)) with predictions 4096 x 8192 fp32 and a
(8192,) +-1 target broadcast over its rows: one number from every element, the loss seed's broadcast
suffix operand."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    return [torch.rand(4096, 8192), torch.randint(0, 2, (8192,)).float() * 2 - 1]


def get_init_inputs():
    return []
