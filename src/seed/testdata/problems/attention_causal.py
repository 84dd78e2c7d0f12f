"""Causal attention: the seed lowers only is_causal=False (a causal mask is no op of the lowered chain), and says
so naming the argument."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(2, 4, 64, 32), torch.randn(2, 4, 64, 32), torch.randn(2, 4, 64, 32)]


def get_init_inputs():
    return []
