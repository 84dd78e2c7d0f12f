"""BatchNorm2d in inference form: y = (x - running_mean) / sqrt(running_var + eps) * weight + bias, per channel.

The running statistics are buffers and start as the module's defaults (mean 0, variance 1), as do the
affine parameters (weight 1, bias 0): a kernel that assumes those values is right on the problem's own
initialisation and wrong on any other, which is what attacks/correctness/batchnorm_unit_stats.cu bets on. forward()
calls F.batch_norm with training=False so the statistics are used and never updated, whatever mode the
module is in. Kernel inputs in contract order: x, bn.weight, bn.bias, bn.running_mean, bn.running_var,
bn.num_batches_tracked (int64, rank 0).

CUTEGEN_PROBLEM_SCALE=k divides the spatial dimensions by k.
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
batch = 16
channels = 64
height = max(1, 128 // SCALE)
width = max(1, 128 // SCALE)


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        return F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, training=False,
                            momentum=0.0, eps=bn.eps)


def get_inputs():
    return [torch.rand(batch, channels, height, width)]


def get_init_inputs():
    return [channels]
