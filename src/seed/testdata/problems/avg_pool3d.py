"""nn.AvgPool3d with padding: the pooling seed in three dimensions."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool3d(3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(2, 4, 8, 8, 8)]


def get_init_inputs():
    return []
