"""nn.MaxPool2d with return_indices: refused (two outputs)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2, return_indices=True)

    def forward(self, x):
        return self.pool(x)[0]


def get_inputs():
    return [torch.rand(2, 4, 8, 8)]


def get_init_inputs():
    return []
