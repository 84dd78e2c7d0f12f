"""Reduction: softmax over the last dimension of a 4096 x 16384 fp32 tensor (256 MiB): rows of 64 KB, short
enough for the seed's row kernel to read each twice, in a tensor large enough for the ticket softmax
(library/softmax_ticket.cu) to spread its 8192 chunks of 32 KB over every SM -- the seed's route for
such rows (src/seed/routes/row_softmax/library_softmax.h).

CUTEGEN_PROBLEM_SCALE=k divides the big dimensions by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
batch_size = max(1, 4096 // SCALE)
dim = max(1, 16384 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
