"""A bias added through unsqueeze: the broadcast chain."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x, b):
        return torch.relu(x + b.unsqueeze(0))


def get_inputs():
    return [torch.rand(64, 32), torch.rand(32)]


def get_init_inputs():
    return []
