"""nn.AvgPool3d(3, stride=2, padding=1, count_include_pad=False, ceil_mode=True) of a 4 x 16 x 33 x 64 x 65
fp32 tensor: the pool seed's divisor when padding does not count and the last window is clipped."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.rand(4, 16, 33, 64, 65)]


def get_init_inputs():
    return []
