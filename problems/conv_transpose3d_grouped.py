"""nn.ConvTranspose3d(32, 64, (3, 5, 5), stride=2, padding=(1, 2, 2), output_padding=1, groups=4, bias=False)
of a 4 x 32 x 14 x 30 x 46 fp32 tensor: phases, groups and output_padding together in three dimensions."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose3d(32, 64, kernel_size=(3, 5, 5), stride=2, padding=(1, 2, 2), output_padding=1, groups=4, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(4, 32, 14, 30, 46)]


def get_init_inputs():
    return []
