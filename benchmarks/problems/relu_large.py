"""ReLU on a 4096 x 393216 fp32 tensor (6.4 GB in, 6.4 GB out): the size at which eager PyTorch is
bandwidth-bound on an H200 (issue benchmark: eager 3.07 ms, memory floor 3.04 ms)."""
import torch
import torch.nn as nn

rows, cols = 4096, 393216


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
