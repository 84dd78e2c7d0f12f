"""A product of a (64, 32) and a (1, 32) tensor: the pointwise chain refuses the shapes, the broadcast chain takes it."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x, y):
        return x * y


def get_inputs():
    return [torch.rand(64, 32), torch.rand(1, 32)]


def get_init_inputs():
    return []
