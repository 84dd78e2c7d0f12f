"""nn.Conv3d(6, 20, 3, padding=(0, 1, 1)) with a bias, then * scale (20, 1, 1, 1), tanh, * bias (20, 1, 1, 1),
sigmoid, leaky_relu(0.2) and GELU, of a 4 x 6 x 18 x 33 x 47 fp32 tensor: the convolution epilogue seed in
three dimensions with two per-channel vectors and transcendental activations."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(6, 20, kernel_size=3, padding=(0, 1, 1))
        self.scaling_factor = nn.Parameter(torch.randn(20, 1, 1, 1))
        self.bias = nn.Parameter(torch.randn(20, 1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x * self.scaling_factor
        x = torch.tanh(x)
        x = x * self.bias
        x = torch.sigmoid(x)
        x = F.leaky_relu(x, negative_slope=0.2)
        return F.gelu(x)


def get_inputs():
    return [torch.randn(4, 6, 18, 33, 47)]


def get_init_inputs():
    return []
