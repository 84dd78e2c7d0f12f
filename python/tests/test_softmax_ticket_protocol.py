"""The ticket softmax's protocol, modelled (benchmarks/softmax_ticket_model.py): every chunk is stored exactly
once whenever the CTAs running at once can hold a row in their stages -- the bound the kernels check before
launching (library/softmax_ticket.cu) -- and the model is sharp enough to find the deadlocks: below
the bound, and with a ticket held ahead of a stage (what the producer's comment forbids). The roles' forms run
with one compute group and with 2 and 4 independent compute warps (each warp's slice of every chunk stored
exactly once)."""
import importlib.util
import os

import pytest

from conftest import ROOT

spec = importlib.util.spec_from_file_location("softmax_ticket_model",
                                              os.path.join(ROOT, "benchmarks", "softmax_ticket_model.py"))
model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model)

FORMS = dict(model.forms())  # `run`, then `run_roles` with 1, 2 and 4 compute warps, with and without deferred emptying


def split(count=600):
    above, below = [], []
    for ctas, stages, rows, per_row, seed in model.configurations(count):
        (above if ctas * stages >= per_row else below).append((ctas, stages, rows, per_row, seed))
    return above, below


@pytest.mark.parametrize("form", sorted(FORMS))
def test_at_or_above_the_bound_every_chunk_is_stored_once(form):
    above, _ = split()
    assert len(above) > 300
    failures = [(c, why) for c in above if (why := FORMS[form](*c))]
    assert failures == []


@pytest.mark.parametrize("form", sorted(FORMS))
def test_below_the_bound_it_deadlocks(form):
    _, below = split()
    outcomes = [FORMS[form](*c) for c in below]
    assert below and sum(1 for why in outcomes if why and why.startswith("deadlock")) >= len(below) // 2


@pytest.mark.parametrize("warps", [1, 2, 4])
def test_a_ticket_held_ahead_of_a_stage_can_deadlock_even_above_the_bound(warps):
    above, _ = split()
    outcomes = (model.run_roles(*c, hold_ahead=True, warps=warps) for c in above)
    assert any(why and why.startswith("deadlock") for why in outcomes)
