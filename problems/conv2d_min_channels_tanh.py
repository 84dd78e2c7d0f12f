"""tanh(min over channels of nn.Conv2d(16, 40, 3, padding=1)(x) * 2), of an 7 x 16 x 45 x 51 fp32 tensor: the
conv_then seed with a reduction over the channel dimension after the convolution's epilogue, then a
pointwise tail on the (7, 1, 45, 51) result."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 40, kernel_size=3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x) * 2.0
        x = torch.min(x, dim=1, keepdim=True)[0]
        return torch.tanh(x)


def get_inputs():
    return [torch.randn(7, 16, 45, 51)]


def get_init_inputs():
    return []
