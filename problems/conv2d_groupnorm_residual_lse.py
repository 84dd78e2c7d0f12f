"""A 3x3 convolution, a GroupNorm, tanh and hardswish, the convolution's own result added back, then a logsumexp
over the channels: an (N, 1, H, W) output. The chain reads the convolution's result twice -- the norm's input
and, in the norm's store, the residual (an extra read of an earlier chain value, docs/seed.md) -- and runs in
passes over the batch: the convolution's and the norm's results for all 16 images would pass the judge's
workspace cap. 16 x 8 x 66 x 70 fp32 in, 48 channels in 12 groups.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.norm = nn.GroupNorm(groups, out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv(x)
        r = c + nn.functional.hardswish(torch.tanh(self.norm(c)))
        return torch.logsumexp(r, dim=1, keepdim=True)


def get_inputs():
    return [torch.rand(16, 8, 66, 70)]


def get_init_inputs():
    return [8, 48, 12]
