"""x squared, where x is a hash of the seed the worker drew for the call and a second input shows that
seed outright: a stand-in for a kernel that recovers the seed of its inputs by brute force (inputs are
made on the GPU by Philox, and trying every 31-bit seed takes an H200 a fraction of a second). With
the seed in hand, a judge whose timed seeds follow from one another lets the kernel compute every
later call's inputs and answers in advance (attacks/every_call_checked/predict_next_inputs.cu). x*x keeps the answer the
same under the judge's random signs, so the attack need not foresee those either."""
import torch
import torch.nn as nn

N = 1 << 16


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, seed: torch.Tensor) -> torch.Tensor:
        return x * x


def get_inputs():
    seed = torch.initial_seed()
    j = torch.arange(N, dtype=torch.int64)
    # A multiplicative hash of (index, seed), in [0, 1): what the attack recomputes for a foreseen seed.
    x = ((j * 2654435761 + (seed & 0xFFFFFFFF)) % 4294967296).to(torch.float32) / 4294967296.0
    return [x, torch.tensor([seed], dtype=torch.int64)]


def get_init_inputs():
    return []
