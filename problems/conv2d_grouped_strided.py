"""nn.Conv2d(64, 128, (3, 5), stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=4) with a bias, of a
16 x 64 x 191 x 250 fp32 tensor: groups, an asymmetric window, stride, padding and dilation at sizes no tile divides."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, kernel_size=(3, 5), stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(16, 64, 191, 250)]


def get_init_inputs():
    return []
