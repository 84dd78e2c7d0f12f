"""A Linear layer, tanh, then the mean over each row (keepdim=False): y = tanh(fc(x)).mean(dim=-1), an (M,)
output. M, K, N = 2000, 512, 1500 fp32.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.fc(x)).mean(dim=-1)


def get_inputs():
    return [torch.rand(2000, 512)]


def get_init_inputs():
    return [512, 1500]
