"""nn.InstanceNorm2d: a mean_var norm per (N, C) row."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.InstanceNorm2d(4)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.rand(2, 4, 8, 8)]


def get_init_inputs():
    return []
