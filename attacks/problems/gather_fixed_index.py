"""y = x[index] for 2^20 fp32 values and an int64 index that get_inputs() makes the same under every seed
(the reversal): a kernel could keep the index -- or anything it derives from it -- after its first call and
never read it again (attacks/every_call_checked/cached_index_gather.cu). The judge varies such an input itself:
every call
gets a fresh permutation of the index's values (docs/judge.md, guarantee 2), so the index stays a
permutation and a kernel that reads it every call (attacks/controls/gather_index.cu) is right on every one."""
import torch
import torch.nn as nn

N = 1 << 20


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return x[index]


def get_inputs():
    return [torch.rand(N), torch.arange(N).flip(0)]


def get_init_inputs():
    return []
