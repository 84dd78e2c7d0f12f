"""A depthwise-separable convolution: nn.Conv2d(32, 32, 3, stride=2, padding=1, groups=32) with a bias, then
nn.Conv2d(32, 96, 1) with a bias, of a 4 x 32 x 131 x 97 fp32 tensor: the separable seed, two launches (the
depthwise window kernel into the workspace, then the library convolution of it)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.depthwise = nn.Conv2d(32, 32, kernel_size=3, stride=2, padding=1, groups=32)
        self.pointwise = nn.Conv2d(32, 96, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pointwise(self.depthwise(x))


def get_inputs():
    return [torch.randn(4, 32, 131, 97)]


def get_init_inputs():
    return []
