"""The problems the attack suite runs on (attacks/problems/) load and judge an honest answer as a pass on
the CPU, so a GPU run of the suite never spends device time on a broken problem file."""
import os

import pytest

from conftest import ROOT
from test_candidate_session import evaluate

ATTACK_PROBLEMS = os.path.join(ROOT, "attacks", "problems")
# batchnorm_eval.py is left to the GPU suite: a whole evaluation of it takes 40 s of a CI core.
CHEAP = ["relu_small.py", "seed_shown.py"]


@pytest.mark.parametrize("name", CHEAP)
def test_an_attack_problem_judges_torch_itself_a_pass(worker, name):
    result = evaluate(worker, name, mode="native", warmup=1, runs=4, path=os.path.join(ATTACK_PROBLEMS, name))
    assert result["verdict"] == "pass", result["reason"]
    assert len({c["seed"] for c in result["calls"]}) == 4


def test_seed_shown_hands_the_kernel_an_int64_seed_beside_x(worker):
    """predict_next_inputs.cu reads the seed from the second input."""
    loaded = worker.load(os.path.join(ATTACK_PROBLEMS, "seed_shown.py"), seed=1234)
    assert [(i["dtype"], i["shape"]) for i in loaded["inputs"]] == [("float32", [65536]), ("int64", [1])]
