"""nn.Conv2d(64, 128, 3, padding=1) with a bias, in bf16 (weights and input), of an 8 x 64 x 128 x 128 tensor:
a convolution as a bf16 model runs it (the library convolution's TMA path with bf16 tensors, fp32
accumulation)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, kernel_size=3, padding=1).to(torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(8, 64, 128, 128, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
