"""max(gelu(avg_pool1d(nn.Linear(1024, 4096)(x).unsqueeze(1), 16).squeeze(1)) * 2, dim=1).values of a
1100 x 1024 fp32 input (KernelBench level 2's 98 at a smaller size): the gemm_then seed through views -- the
library 3xTF32 GEMM stores the (1100, 4096) product, the pooling seed reads it as (1100, 1, 4096), the
pointwise seed reads the pooled (1100, 1, 256) as (1100, 256), then the reduction seed."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(1024, 4096)
        self.pool = nn.AvgPool1d(16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.fc(x).unsqueeze(1)).squeeze(1)
        return torch.max(torch.nn.functional.gelu(x) * 2.0, dim=1).values


def get_inputs():
    return [torch.randn(1100, 1024)]


def get_init_inputs():
    return []
