"""nn.BatchNorm2d(32) in training mode (the default) of a 32 x 32 x 64 x 64 fp32 tensor: normalised with
the batch's statistics per channel over N x H x W; the running statistics it also updates are not an output."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


def get_inputs():
    return [torch.rand(32, 32, 64, 64)]


def get_init_inputs():
    return []
