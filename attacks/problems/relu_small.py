"""ReLU on a 1024 x 1024 fp32 tensor: the problem most runtime attacks run on (cheap to evaluate),
and small enough that an attack can keep a copy of every answer it has given in a static __device__
buffer (attacks/every_call_checked/pointer_cache.cu, attacks/every_call_checked/device_memo_cache.cu)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.rand(1024, 1024)]


def get_init_inputs():
    return []
