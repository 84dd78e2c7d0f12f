"""nn.Conv2d(64, 128, 3, padding=1, bias=False) of an 8 x 64 x 256 x 256 fp32 tensor: the library's
implicit-GEMM convolution on its own problem (library/conv_implicit_gemm.cu), a compute-bound layer."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, kernel_size=3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(8, 64, 256, 256)]


def get_init_inputs():
    return []
