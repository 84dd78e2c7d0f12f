"""nn.Conv3d(3, 24, 3), a GroupNorm of 6 groups with its own affine parameters, then the mean over the channels and
every spatial position: one number per image, of a 16 x 3 x 20 x 40 x 40 fp32 volume (the shape of KernelBench level
2's 3-channel heads). The seed's conv_stats route: the direct convolution adds each (image, channel)'s sum and sum
of squares in its epilogue and never stores its 16 x 24 x 18 x 38 x 38 result; the norm and the mean follow from
those sums."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(3, 24, kernel_size=3)
        self.norm = nn.GroupNorm(6, 24)
        with torch.no_grad():  # affine parameters that are not the identity, so the test sees them used
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.conv(x)).mean(dim=(1, 2, 3, 4))


def get_inputs():
    return [torch.rand(16, 3, 20, 40, 40)]


def get_init_inputs():
    return []
