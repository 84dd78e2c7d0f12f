"""x > 0.05 on a 1024 x 1024 fp32 tensor: a bool output, True for most elements of the problem's own
inputs. Until the judge's round 3 an output element left unwritten held the poison byte 0xFF, which reads
as True, so a kernel that stores only the False elements passed and saved most of its writes
(attacks/every_call_checked/bool_false_only.cu); now the poison is a byte that is neither 0 nor 1."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x > 0.05


def get_inputs():
    return [torch.rand(1024, 1024)]


def get_init_inputs():
    return []
