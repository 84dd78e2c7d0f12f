"""Generalization trials (docs/judge.md, guarantee 9): after a kernel passed at the problem's own shape, the
worker runs it at other shapes of the same problem -- each in a runner of its own, with the same staging,
poison and checks -- and a kernel that is right only at the benchmark's shape fails (`shape_specific`),
while one that cleanly refuses other shapes passes with only its own shape verified."""
import os
import random

import pytest

from conftest import FAKE_RUNNER_TRIALS, ROOT, problem_path, write_problem
import fake_runner
from cutegen_worker import problem_loader, shape_configs


def evaluate(worker, problem="relu", generalize=2, bar=None, request=None, **fake):
    if problem is not None:
        worker.load(problem_path(problem) if "/" not in problem else problem)
    extra = dict(request or {}, **({} if bar is None else {"keep_bar_ms": bar}))
    return worker.call("evaluate_candidate", runner=["cutegen-runner"], library="/nonexistent/kernel.so",
                       trials=FAKE_RUNNER_TRIALS, warmup=1, runs=4, precision="strict", call_timeout_s=10.0,
                       work_dir="/tmp/cutegen-test-work", generalize=generalize,
                       fake_runner=dict(dict(mode="reference"), **fake), **extra)


def test_an_honest_kernel_passes_with_three_verified_shapes(worker, small):
    record = evaluate(worker)
    assert record["verdict"] == "pass", record["reason"]
    g = record["generalization"]
    assert g["varied"] == ["batch_size", "dim"]
    assert [t["kind"] for t in g["trials"]] == ["smaller", "larger"]
    assert [t["outcome"] for t in g["trials"]] == ["pass", "pass"]
    assert len(g["verified"]) == 3
    own, smaller, larger = g["verified"]
    # The problem's own shape first (relu at CUTEGEN_PROBLEM_SCALE=64: 64 x 1024), then each trial's.
    assert own == {"config": {"batch_size": 64, "dim": 1024}, "inputs": [[64, 1024]], "outputs": [[64, 1024]]}
    b, d = smaller["config"]["batch_size"], smaller["config"]["dim"]
    assert 8 <= b <= 32 and 128 <= d <= 512 and b % 2 == 1 and d % 2 == 1, smaller
    assert smaller["inputs"] == [[b, d]] and smaller["outputs"] == [[b, d]]
    assert 65 <= larger["config"]["batch_size"] <= 73 and larger["config"]["dim"] == 1024, larger
    assert g["seconds"] > 0 and not g["notes"]
    # The main session's buffers, held for later when nothing else runs, were freed for the other shapes'.
    assert worker.session.held_arenas == []


def test_a_kernel_that_hard_codes_the_benchmark_shape_is_shape_specific(worker, small):
    # Right at the problem's own shape (every main trial and timed call passes), wrong anywhere else.
    record = evaluate(worker, other_shapes="wrong")
    assert record["verdict"] == "shape_specific", record["reason"]
    assert record["time"] is not None  # it was timed at its own shape; the verdict still fails it
    trial = record["generalization"]["trials"][-1]
    assert trial["outcome"] == "mismatch" and trial["verdict"] == "mismatch"
    assert trial["changed"] in record["reason"] and "CUTEGEN_ERROR_UNSUPPORTED" in record["reason"]
    # The failing check is in the record, labelled with the shape, for the diagnosis.
    check = record["checks"][record["failed_check"]]
    assert check["shape_trial"] == len(record["generalization"]["trials"]) - 1
    assert check["config"] == trial["config"] and check["reason"] == "mismatch"
    assert check["outputs"][0]["bad_count"] >= 1
    assert len(record["generalization"]["verified"]) == 1  # only the problem's own


def test_a_kernel_that_refuses_other_shapes_passes_with_only_its_own_verified(worker, small):
    record = evaluate(worker, other_shapes="refuse")
    assert record["verdict"] == "pass", record["reason"]
    g = record["generalization"]
    assert [(t["outcome"], t["verdict"]) for t in g["trials"]] == [("refused", "kernel_error")] * 2
    assert "CUTEGEN_ERROR_UNSUPPORTED" in g["trials"][0]["reason"]
    assert [v["inputs"] for v in g["verified"]] == [[[64, 1024]]]


def test_a_workspace_size_of_zero_at_another_shape_is_a_refusal(worker, small):
    record = evaluate(worker, other_shapes="no_workspace")
    assert record["verdict"] == "pass", record["reason"]
    assert [t["outcome"] for t in record["generalization"]["trials"]] == ["refused", "refused"]
    assert len(record["generalization"]["verified"]) == 1


def test_a_crash_at_another_shape_is_shape_specific_not_a_refusal(worker, small):
    record = evaluate(worker, other_shapes="crash")
    assert record["verdict"] == "shape_specific", record["reason"]
    assert record["generalization"]["trials"][0]["outcome"] == "crash"
    assert record["failed_check"] is None and "crash" in record["reason"]


def test_printing_at_another_shape_keeps_its_own_verdict(worker, small):
    record = evaluate(worker, other_shapes="print")
    assert record["verdict"] == "printed_output", record["reason"]
    assert "at another shape" in record["reason"]


def test_zero_trials_verify_only_the_problems_own_shape(worker, small):
    record = evaluate(worker, generalize=0, other_shapes="wrong")
    assert record["verdict"] == "pass", record["reason"]
    g = record["generalization"]
    assert g["asked"] == 0 and g["trials"] == [] and len(g["verified"]) == 1


def test_zero_trials_cost_no_collection(worker, small, monkeypatch):
    # A screening asks for no trials: the collection before a new slot's buffers (0.22 s on an H100 at
    # KernelBench 19's size) is for the trials' slots, and every screened candidate paid it for nothing.
    from cutegen_worker import generalize
    collected = []
    monkeypatch.setattr(generalize.gc, "collect", lambda *a: collected.append(1) or 0)
    evaluate(worker, generalize=0)
    assert collected == []
    evaluate(worker, generalize=1)
    assert collected, "a trial's slot comes after a collection"


def test_a_failing_kernel_is_not_tried_at_other_shapes(worker, small):
    record = evaluate(worker, mode="zeros", other_shapes="same")
    assert record["verdict"] == "mismatch" and "generalization" not in record


def test_each_shape_runs_in_a_runner_of_its_own_with_the_same_checks(worker, small, monkeypatch):
    started = []
    fake_runner.watch_runners(monkeypatch, lambda plan, slot, problem: started.append(
        ([tuple(o.shape) for o in slot.outputs[0]], len(slot.outputs), problem)))
    record = evaluate(worker)
    assert record["verdict"] == "pass", record["reason"]
    # The main session's runner, then one per configuration: new shared buffers of the new shapes, two output
    # sets (two runs per trial, compared with each other), and the problem built again at that shape.
    assert len(started) == 3
    assert [s[0] for s in started[1:]] == [[tuple(v["outputs"][0])] for v in record["generalization"]["verified"][1:]]
    assert all(s[1] == 2 for s in started)
    assert started[1][2] is not worker.session.problem and started[1][2].output_shapes != worker.session.problem.output_shapes


def test_the_shapes_are_drawn_afresh_and_not_from_the_trial_seeds(worker, small):
    # The request names no shape, and the user's trial seeds (FAKE_RUNNER_TRIALS is fixed) do not fix them: the
    # worker draws them from the OS when the main session is over.
    first = evaluate(worker)["generalization"]["verified"][1]["config"]
    draws = {tuple(sorted(first.items()))}
    for _ in range(3):
        draws.add(tuple(sorted(evaluate(worker, problem=None)["generalization"]["verified"][1]["config"].items())))
    assert len(draws) > 1, draws


def test_a_problem_with_literal_sizes_has_no_other_shape(worker):
    record = evaluate(worker, problem=os.path.join(ROOT, "attacks", "problems", "relu_small.py"))
    assert record["verdict"] == "pass", record["reason"]
    g = record["generalization"]
    assert g["varied"] == [] and g["trials"] == [] and len(g["verified"]) == 1
    assert "no other shape" in g["notes"][0]


MODEL_SIZED_BY_A_METHOD = '''
import torch
import torch.nn as nn
n = 8
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(self._weight())
    def _weight(self):
        return torch.randn(n)  # a method: the static rule does not follow it, the parameters' check does
    def forward(self, x):
        return x * self.w
def get_inputs():
    return [torch.rand(4, n)]
def get_init_inputs():
    return []
'''


def test_a_global_that_sizes_the_parameters_is_never_varied(worker, tmp_path):
    record = evaluate(worker, problem=write_problem(tmp_path, MODEL_SIZED_BY_A_METHOD))
    assert record["verdict"] == "pass", record["reason"]
    g = record["generalization"]
    assert g["varied"] == ["n"] and g["trials"] == [] and len(g["verified"]) == 1
    assert all("parameters change" in note for note in g["notes"]), g["notes"]


# ---- which globals vary, and how (shape_configs.py) -----------------------------------------------------

LINEAR = '''
import torch
import torch.nn as nn
batch_size = 16
in_features = 64
out_features = 32
scale = 2
class Model(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.fc = nn.Linear(i, o)
    def forward(self, x, s):
        return self.fc(x) * s
def rows():
    return batch_size
def get_inputs():
    return [torch.rand(rows(), in_features), scale]
def get_init_inputs():
    return [in_features, out_features]
'''


def test_only_the_globals_that_get_inputs_alone_reads_vary(tmp_path):
    module = problem_loader.import_problem(write_problem(tmp_path, LINEAR))
    # in_features sizes the model (get_init_inputs reads it); batch_size is read through a helper function; the
    # scalar `scale` is read by get_inputs alone but changes no shape (the draw check refuses it).
    assert shape_configs.shape_globals(module) == ["batch_size", "scale"]
    base = shape_configs.meta_inputs(module, "p.py", {"batch_size": 16, "scale": 2})
    assert shape_configs.check_draw(base, shape_configs.meta_inputs(module, "p.py", {"batch_size": 5, "scale": 2})) == ""
    assert "scalar input 1 changes" in shape_configs.check_draw(
        base, shape_configs.meta_inputs(module, "p.py", {"batch_size": 5, "scale": 3}))
    assert module.batch_size == 16 and module.scale == 2  # the draws put the globals back


def test_the_kinds_of_draw():
    rng = random.Random(7)
    originals = {"dim": 1000, "batch_size": 64, "one": 1}
    assert shape_configs.batch_global(list(originals)) == "batch_size"
    assert shape_configs.batch_global(["M", "N"]) == "M"
    for _ in range(200):
        smaller = shape_configs.draw("smaller", originals, rng)
        assert 125 <= smaller["dim"] <= 500 and 8 <= smaller["batch_size"] <= 32 and smaller["one"] == 1
        assert smaller["dim"] % 2 == 1 and smaller["batch_size"] % 2 == 1
        larger = shape_configs.draw("larger", originals, rng)
        assert 65 <= larger["batch_size"] <= 73 and larger["dim"] == 1000
    assert shape_configs.draw("batch_one", originals, rng) == {"dim": 1000, "batch_size": 1, "one": 1}
    assert shape_configs.draw("batch_one", {"batch": 1}, rng) is None
    assert shape_configs.draw("smaller", {"batch": 1}, rng) is None
    assert shape_configs.kinds_for(5) == ["smaller", "larger", "batch_one", "larger", "smaller"]


def test_a_request_for_too_many_trials_is_refused(worker, small):
    with pytest.raises(Exception, match="generalize must be an integer from 0 to 8"):
        evaluate(worker, generalize=9)


def test_a_kernel_with_a_workspace_is_sized_again_at_each_shape(worker, small):
    # Contract v2: the size is asked with each shape's descriptors, so every configuration starts a sizing
    # runner and a second one that maps the workspace, as the main session does.
    fake_runner.WORKSPACE_SEEN.clear()
    record = evaluate(worker, workspace_bytes=40000)
    assert record["verdict"] == "pass", record["reason"]
    assert len(record["generalization"]["verified"]) == 3
    # Every call of every runner found the workspace freshly poisoned; the sessions at other shapes called too.
    runners = {index for index, _, _, _ in fake_runner.WORKSPACE_SEEN}
    # Runners are counted per request: each of the three sessions' sizing runner (0, 2, 4) only loaded, its
    # second runner (1, 3, 5), which mapped the workspace, made the calls.
    assert runners == {1, 3, 5}
    assert all(poisoned for _, _, poisoned, _ in fake_runner.WORKSPACE_SEEN)
    assert len(fake_runner.WORKSPACE_SEEN) == 2 + 1 + 4 + 2 * 4  # main: a trial, warm-up, timed; then 2 x 2 trials


def test_a_size_asked_before_at_the_problems_shape_is_not_imposed_on_other_shapes(worker, small):
    # The judge sends the size a screening asked at the problem's shape (workspace_bytes); at every other shape
    # the kernel asks its own, here one that follows the shapes as a GEMM's does.
    first = evaluate(worker, workspace_bytes="per_output_element")
    assert first["verdict"] == "pass", first["reason"]
    record = evaluate(worker, workspace_bytes="per_output_element",
                      request={"workspace_bytes": first["workspace"]["bytes"]})
    assert record["verdict"] == "pass", record["reason"]
    assert record["workspace"] == dict(first["workspace"], sized_before=True)
    assert len(record["generalization"]["verified"]) == 3


def test_a_kernel_not_below_the_loops_bar_is_not_tried_at_other_shapes(worker, small):
    # The loop's bar: a kernel not faster than it is rolled back, so even a shape-specific one passes untried.
    record = evaluate(worker, bar=1e-9, other_shapes="wrong")
    assert record["verdict"] == "pass", record["reason"]
    g = record["generalization"]
    assert g["skipped_bar_ms"] == 1e-9 and g["trials"] == [] and g["seconds"] == 0.0
    assert g["asked"] == 2 and g["varied"] == ["batch_size", "dim"]
    assert [v["inputs"] for v in g["verified"]] == [[[64, 1024]]]  # the problem's own, as the trials would list it
    assert "not tried at other shapes" in g["notes"][0] and "to beat to be kept" in g["notes"][0]


def test_a_kernel_below_the_loops_bar_is_tried_at_other_shapes(worker, small):
    record = evaluate(worker, bar=1e9, other_shapes="wrong")
    assert record["verdict"] == "shape_specific", record["reason"]
    assert "skipped_bar_ms" not in record["generalization"]
    honest = evaluate(worker, bar=1e9)
    assert honest["verdict"] == "pass" and len(honest["generalization"]["verified"]) == 3


@pytest.mark.parametrize("bar", [0, -1.0, "5", True, float("inf")])
def test_a_bar_that_is_no_positive_time_is_refused(worker, small, bar):
    with pytest.raises(Exception, match="keep_bar_ms must be a positive number"):
        evaluate(worker, bar=bar)
