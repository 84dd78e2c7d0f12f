"""nn.GroupNorm(8, 64) of a 16 x 64 x 64 x 64 fp32 tensor: statistics per (sample, group), weight and
bias per channel (the model's parameters, contract inputs 1 and 2)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=8, num_channels=64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


def get_inputs():
    return [torch.rand(16, 64, 64, 64)]


def get_init_inputs():
    return []
