"""The problems the attack suite runs on (attacks/problems/) load and judge an honest answer as a pass on
the CPU, so a GPU run of the suite never spends device time on a broken problem file."""
import os

import pytest

from conftest import ROOT
from test_candidate_session import evaluate

ATTACK_PROBLEMS = os.path.join(ROOT, "attacks", "problems")
# batchnorm_eval.py is left to the GPU suite: a whole evaluation of it takes 40 s of a CI core.
CHEAP = ["relu_small.py", "seed_shown.py", "gather_fixed_index.py", "bool_threshold.py"]


@pytest.mark.parametrize("name", CHEAP)
def test_an_attack_problem_judges_torch_itself_a_pass(worker, name):
    result = evaluate(worker, name, mode="native", warmup=1, runs=4, path=os.path.join(ATTACK_PROBLEMS, name))
    assert result["verdict"] == "pass", result["reason"]
    assert len({c["seed"] for c in result["calls"]}) == 4


def test_seed_shown_hands_the_kernel_an_int64_seed_beside_x(worker):
    """predict_next_inputs.cu reads the seed from the second input."""
    loaded = worker.load(os.path.join(ATTACK_PROBLEMS, "seed_shown.py"), seed=1234)
    assert [(i["dtype"], i["shape"]) for i in loaded["inputs"]] == [("float32", [65536]), ("int64", [1])]


def test_gather_fixed_index_has_its_index_varied_by_the_judge(worker):
    """cached_index_gather.cu keeps the index of its first call: the judge permutes the values of an index
    that get_inputs() makes the same under every seed, so that kernel is wrong from the next staging on."""
    loaded = worker.load(os.path.join(ATTACK_PROBLEMS, "gather_fixed_index.py"))
    assert loaded["fixed_inputs"] == [{"name": "index", "varied": "values permuted per call"}]
    result = evaluate(worker, None, mode="cached_ints", warmup=1, runs=4,
                      path=os.path.join(ATTACK_PROBLEMS, "gather_fixed_index.py"))
    assert result["verdict"] == "mismatch", result["reason"]


def test_bool_threshold_catches_a_kernel_that_writes_only_the_false_elements(worker):
    result = evaluate(worker, None, mode="unwritten_true", warmup=1, runs=4,
                      path=os.path.join(ATTACK_PROBLEMS, "bool_threshold.py"))
    assert result["verdict"] == "unwritten", result["reason"]
