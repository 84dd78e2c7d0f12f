"""`check` and `check_timing` end to end in one worker: the test hooks play the runner by writing
outputs (the reference, eager PyTorch's own result, TF32-rounded results, garbage) into the shared
buffers, and the report must name what is wrong."""
import pytest
import torch

from conftest import SMALL, WorkerError, problem_path, write_problem

REPORT_KEYS = {"index", "set", "max_abs_err", "max_rel_err", "rel_l2_err", "bad_count", "bad_fraction", "total",
               "first_bad", "unwritten_count", "nan_count", "inf_count", "atol", "rtol", "rel_l2_limit"}
ROWS, COLS = 4096 // SMALL, 65536 // SMALL  # relu at the test size


def prepared(worker, name, trials=(("problem", 1),), timing_sets=0):
    worker.load(problem_path(name))
    specs = [{"seed": seed, "kind": kind, **({"scale": 100.0} if kind == "scaled" else {})} for kind, seed in trials]
    return worker.call("prepare", trials=specs, timing_sets=timing_sets, timing_seed=50)


def write(worker, mode, trial=0, sets=(0, 1), **fields):
    for s in sets:
        worker.call("debug_write_output", trial=trial, set=s, mode=mode, **fields)


def check(worker, trial=0, precision="strict"):
    return worker.call("check", trial=trial, precision=precision)


def test_the_reference_passes_with_a_complete_report(worker, small):
    prepared(worker, "relu", [("problem", 1), ("signed", 2), ("scaled", 3)])
    for trial in range(3):
        write(worker, "reference", trial)
        report = check(worker, trial)
        assert (report["pass"], report["reason"], report["inputs_mutated"]) == (True, "ok", [])
        assert report["trial"] == trial and report["seed"] == trial + 1
        assert report["run_to_run_max_abs_diff"] == 0.0
        (out,) = report["outputs"]
        assert set(out) == REPORT_KEYS
        assert (out["bad_count"], out["unwritten_count"], out["total"]) == (0, 0, ROWS * COLS)
        assert (out["atol"], out["rtol"], out["rel_l2_limit"]) == (1e-4, 1e-4, 1e-5)


@pytest.mark.parametrize("name", ["relu", "gelu_tanh", "softmax_rows", "matmul_square", "matmul_bias_gelu", "row_sum",
                                  "scale_add", "layernorm", "split_halves", "matmul_fp16", "matmul_bf16_nt"])
def test_eager_pytorch_in_the_problems_own_precision_passes_strict(worker, small, name):
    """The policies must not fail an honest kernel: torch's own result is one."""
    prepared(worker, name, [("problem", 1), ("signed", 2), ("scaled", 3)])
    for trial in range(3):
        write(worker, "native", trial)
        report = check(worker, trial)
        assert report["pass"], report


def test_nothing_written_is_unwritten(worker, small):
    prepared(worker, "relu")
    report = check(worker)
    assert (report["pass"], report["reason"]) == (False, "unwritten")
    out = report["outputs"][0]
    assert out["unwritten_count"] == out["bad_count"] == out["nan_count"] == ROWS * COLS
    assert out["bad_fraction"] == 1.0


def test_partly_unwritten_output_names_the_elements(worker, small):
    prepared(worker, "relu")
    write(worker, "leave_poison", count=5)
    out = check(worker)["outputs"][0]
    assert (out["unwritten_count"], out["bad_count"]) == (5, 5)
    assert [b["index"] for b in out["first_bad"]] == [[0, i] for i in range(5)]
    assert all(b["got"] == "NaN" for b in out["first_bad"])  # JSON has no NaN: the protocol spells it


def test_second_run_skipping_work_is_unwritten(worker, small):
    """A kernel that caches its result by input pointer writes set 0 and leaves set 1 poisoned."""
    prepared(worker, "relu")
    write(worker, "reference", sets=(0,))
    report = check(worker)
    assert report["reason"] == "unwritten"
    assert report["outputs"][0]["set"] == 1


def test_unwritten_in_the_second_run_outranks_a_mismatch_in_the_first(worker, small):
    prepared(worker, "relu")
    worker.call("debug_write_output", trial=0, set=0, mode="perturb_one", flat_index=3, delta=0.5)
    report = check(worker)  # set 1 never written
    assert report["reason"] == "unwritten"
    assert (report["outputs"][0]["set"], report["outputs"][0]["unwritten_count"]) == (1, ROWS * COLS)


def test_one_wrong_element_is_a_mismatch_with_its_index(worker, small):
    prepared(worker, "relu")
    write(worker, "perturb_one", flat_index=COLS + 17, delta=0.5)
    report = check(worker)
    assert (report["pass"], report["reason"]) == (False, "mismatch")
    out = report["outputs"][0]
    assert (out["bad_count"], out["unwritten_count"]) == (1, 0)
    assert out["first_bad"][0]["index"] == [1, 17]
    assert out["first_bad"][0]["got"] == pytest.approx(out["first_bad"][0]["expected"] + 0.5, abs=1e-6)
    assert out["max_abs_err"] == pytest.approx(0.5, abs=1e-6)
    assert out["bad_fraction"] == pytest.approx(1 / (ROWS * COLS))


def test_identity_passes_relu_on_problem_inputs_but_not_on_signed_ones(worker, small):
    prepared(worker, "relu", [("problem", 1), ("signed", 2)])
    write(worker, "identity_input", 0)
    write(worker, "identity_input", 1)
    assert check(worker, 0)["pass"]  # torch.rand inputs: identity IS relu there
    report = check(worker, 1)
    assert report["reason"] == "mismatch"
    assert report["outputs"][0]["bad_fraction"] == pytest.approx(0.5, abs=0.05)


def test_zeros_fail_softmax(worker, small):
    prepared(worker, "softmax_rows")
    write(worker, "zeros")
    assert check(worker)["reason"] == "mismatch"


def test_runs_that_disagree_beyond_tolerance_are_nondeterministic(worker, small):
    prepared(worker, "relu")
    ref = torch.relu(worker.session.problem.source.generate(1)[0]).reshape(-1)
    index = int(torch.nonzero(ref < 0.3)[0])
    bound = 1e-4 * float(ref.abs().max()) + 1e-4 * float(ref[index])
    # Each run within tolerance of the reference, but not of each other: a race.
    worker.call("debug_write_output", trial=0, set=0, mode="perturb_one", flat_index=index, delta=0.9 * bound)
    worker.call("debug_write_output", trial=0, set=1, mode="perturb_one", flat_index=index, delta=-0.9 * bound)
    report = check(worker)
    assert (report["pass"], report["reason"]) == (False, "nondeterministic")
    assert report["outputs"][0]["bad_count"] == 0
    assert report["run_to_run_max_abs_diff"] == pytest.approx(1.8 * bound, rel=1e-3)


def test_input_written_by_the_kernel_is_reported_and_restored(worker, small):
    prepared(worker, "relu")
    shared = worker.session.prepared.trials[0].forward[0]
    original = shared.clone()
    write(worker, "mutate_input")
    assert not torch.equal(shared, original)
    report = check(worker)
    assert (report["pass"], report["reason"], report["inputs_mutated"]) == (False, "input_mutated", ["x"])
    assert torch.equal(shared, original)  # restored for the next check and the baselines
    assert check(worker)["pass"]


BATCHNORM_TRAINING_FP64 = """
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(8).double()  # training mode: forward updates running stats
    def forward(self, x):
        return self.bn(x)
def get_inputs():
    return [torch.randn(16, 8, dtype=torch.float64)]
def get_init_inputs():
    return []
"""


def test_buffers_a_reference_forward_updates_are_not_blamed_on_the_kernel(worker, tmp_path):
    """fp64 problems use their own model as the reference, so its forward pass moves BatchNorm's
    running statistics; honest outputs must still pass every check, not only the first."""
    worker.load(write_problem(tmp_path, BATCHNORM_TRAINING_FP64))
    worker.call("prepare", trials=[{"seed": 1, "kind": "problem"}, {"seed": 2, "kind": "problem"}],
                timing_sets=0, timing_seed=5)
    for trial in range(2):
        write(worker, "reference", trial)
        report = check(worker, trial)
        assert (report["reason"], report["inputs_mutated"]) == ("ok", []), report


def test_parameter_written_by_the_kernel_is_reported(worker, small):
    prepared(worker, "layernorm", [("problem", 1), ("signed", 2)])
    write(worker, "reference", 0)
    write(worker, "reference", 1)
    with torch.no_grad():
        worker.session.prepared.params[2][0] += 1.0  # the `gain` buffer, shared by every trial
    report = check(worker, 0)
    assert (report["reason"], report["inputs_mutated"]) == ("input_mutated", ["gain"])
    assert check(worker, 1)["pass"]


def test_plain_tf32_fails_strict_and_passes_the_tf32_policy(worker, small):
    prepared(worker, "matmul_square", [("problem", 1), ("signed", 2)])
    write(worker, "reference_tf32", 1)
    strict = check(worker, 1, "strict")
    assert (strict["pass"], strict["reason"]) == (False, "mismatch")
    assert strict["outputs"][0]["rel_l2_err"] > 1e-5
    relaxed = check(worker, 1, "tf32")
    assert relaxed["pass"], relaxed
    assert relaxed["outputs"][0]["rel_l2_limit"] == 2e-3


def test_half_precision_problem_tolerances_apply_whatever_the_policy(worker, small):
    prepared(worker, "matmul_fp16")
    write(worker, "native")
    for policy in ("strict", "tf32", "bf16"):
        out = check(worker, 0, policy)["outputs"][0]
        assert (out["atol"], out["rtol"], out["rel_l2_limit"]) == (1e-2, 1e-2, 2e-3)


def test_tuple_output_reports_each_output(worker, small):
    prepared(worker, "split_halves")
    write(worker, "reference")
    worker.call("debug_write_output", trial=0, set=0, mode="zeros", output=1)
    worker.call("debug_write_output", trial=0, set=1, mode="zeros", output=1)
    report = check(worker)
    assert report["reason"] == "mismatch"
    assert [o["index"] for o in report["outputs"]] == [0, 1]
    assert report["outputs"][0]["bad_count"] == 0 and report["outputs"][1]["bad_count"] > 0


def test_bad_check_requests(worker, small):
    with pytest.raises(WorkerError) as nothing_loaded:
        worker.call("check", trial=0)
    assert nothing_loaded.value.kind == "request"
    prepared(worker, "relu")
    for fields in ({"trial": 1}, {"trial": -1}, {"trial": "0"}, {"trial": 0, "precision": "fast"}):
        with pytest.raises(WorkerError) as error:
            worker.call("check", **fields)
        assert error.value.kind == "request", fields


def test_check_timing(worker, small):
    prepared(worker, "relu", [], timing_sets=2)
    for s in (0, 1):
        worker.call("debug_write_output", trial=s, timing=True, mode="reference")
    report = worker.call("check_timing")
    assert (report["pass"], report["reason"]) == (True, "ok")
    assert [(s["index"], s["seed"], s["reason"]) for s in report["sets"]] == [(0, 50, "ok"), (1, 51, "ok")]
    # Right while checked, wrong while timed: caught on the timing set.
    worker.call("debug_write_output", trial=1, timing=True, mode="zeros")
    report = worker.call("check_timing")
    assert (report["pass"], report["reason"]) == (False, "mismatch")
    assert [s["reason"] for s in report["sets"]] == ["ok", "mismatch"]
    worker.call("debug_write_output", trial=1, timing=True, mode="mutate_input")
    report = worker.call("check_timing")
    assert (report["reason"], report["sets"][1]["inputs_mutated"]) == ("input_mutated", ["x"])
    assert worker.call("check_timing")["pass"]  # the input was restored


def test_a_new_prepare_replaces_the_buffers(worker, small):
    first = prepared(worker, "relu", [("problem", 1)], timing_sets=1)
    old = worker.session.prepared
    second = worker.call("prepare", trials=[{"seed": 2}, {"seed": 3}], timing_sets=0)
    assert worker.session.prepared is not old and old.arena.bytes == 0
    assert len(second["trials"]) == 2 and second["timing"] == []
    assert second["shared_bytes"] == 2 * 3 * ROWS * COLS * 4
    assert first["shared_bytes"] == 3 * ROWS * COLS * 4 + 2 * ROWS * COLS * 4
    with pytest.raises(WorkerError):
        worker.call("check", trial=2)
