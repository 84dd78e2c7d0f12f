"""torch.cumsum(x * mask, dim=1) with a bool mask, 2048 x 5000 fp32: the scan seed computing a chain as
it scans, a bool operand read as 0/1."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=1)


def get_inputs():
    x = torch.rand(2048, 5000)
    return [x, torch.randint(0, 2, x.shape).bool()]


def get_init_inputs():
    return []
