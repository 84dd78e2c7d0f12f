"""hardswish(nn.Conv2d(16, 40, 3, padding=1)(nn.AvgPool2d(2)(x))) * 0.5 of a 4 x 16 x 66 x 70 fp32 tensor: a
convolution that is not the first operator -- the prologue_then seed: the pooling seed writes its result into
the workspace, the library convolution (with the activation and the scale in its epilogue) reads it there --
at sizes no tile divides."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(2)
        self.conv = nn.Conv2d(16, 40, kernel_size=3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(self.pool(x))
        return torch.nn.functional.hardswish(x) * 0.5


def get_inputs():
    return [torch.randn(4, 16, 66, 70)]


def get_init_inputs():
    return []
