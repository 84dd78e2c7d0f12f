"""A matmul then a row sum: the GEMM with a row reduction."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a, b):
        return torch.sum(torch.matmul(a, b), dim=1)


def get_inputs():
    return [torch.rand(64, 32), torch.rand(32, 48)]


def get_init_inputs():
    return []
