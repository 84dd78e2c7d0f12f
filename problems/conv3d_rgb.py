"""nn.Conv3d(3, 16, 3, padding=1) with a bias, of an 8 x 3 x 16 x 64 x 96 fp32 tensor: a 3-channel volume under a
3x3x3 window (K = 81 of taps x channels), the shape of KernelBench level 2's 3-channel heads; the seed's direct
path (FP32 FMA), which few-channel layers take instead of the implicit-GEMM kernels."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(3, 16, kernel_size=3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(8, 3, 16, 64, 96)]


def get_init_inputs():
    return []
