"""A Linear layer, swish, then a logsumexp over each row and pointwise ops on the (M, 1) result:
    z = fc(x);  z = z * sigmoid(z);  y = leaky_relu(logsumexp(z, dim=1, keepdim=True), 0.1) * 0.5
(KernelBench level 2's "Gemm + activation + LogSumExp" shape.) M, K, N = 1000, 1024, 3000 fp32: N is no
multiple of the seed GEMM's tile, so each row's last CTA has columns outside the matrix.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.fc(x)
        z = z * torch.sigmoid(z)
        s = torch.logsumexp(z, dim=1, keepdim=True)
        return F.leaky_relu(s, 0.1) * 0.5


def get_inputs():
    return [torch.rand(1000, 1024)]


def get_init_inputs():
    return [1024, 3000]
