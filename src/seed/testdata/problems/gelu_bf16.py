"""A bfloat16 pointwise chain."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return F.gelu(x) * 2.0


def get_inputs():
    return [torch.rand(64, 32, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
