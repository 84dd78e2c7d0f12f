"""`evaluate_candidate` end to end in one worker, with the runner played by the fake
(fake_runner.py): it writes into the shared output buffers what a kernel of some behaviour would,
and the supervisor -- staging, full checks, audits at secret positions, its own clock -- must name
what is wrong. (The real runner process over pipes: test_runner_link.py; on a GPU: scripts/gpu-check.)"""
import os
import random

import pytest
import torch

from conftest import ROOT, SMALL, WorkerError, problem_path, write_problem
from cutegen_worker import candidate_session

ROWS, COLS = 4096 // SMALL, 65536 // SMALL  # relu at the test size
REPORT_KEYS = {"index", "set", "max_abs_err", "max_rel_err", "rel_l2_err", "bad_count", "bad_fraction", "total",
               "first_bad", "unwritten_count", "nan_count", "inf_count", "atol", "rtol", "rel_l2_limit", "abs_slack",
               "torch"}
TRIALS = [{"seed": 1, "kind": "problem", "params": "own"}, {"seed": 2, "kind": "problem"},
          {"seed": 3, "kind": "signed"}, {"seed": 4, "kind": "scaled", "scale": 100.0}]


def evaluate(worker, name, mode="reference", trials=TRIALS, warmup=2, runs=12, precision="strict", path=None,
             request=None, **fake):
    worker.load(path or problem_path(name))
    return worker.call("evaluate_candidate", runner=["cutegen-runner"], library="/nonexistent/kernel.so", trials=trials,
                       warmup=warmup, runs=runs, precision=precision, call_timeout_s=10.0,
                       work_dir="/tmp/cutegen-test-work", fake_runner=dict(mode=mode, **fake), **(request or {}))


def failed_check(result):
    assert result["failed_check"] is not None, result
    return result["checks"][result["failed_check"]]


# ---- an honest kernel -----------------------------------------------------------------------------
def test_an_exact_kernel_passes_with_a_complete_record(worker, small):
    result = evaluate(worker, "relu")
    assert (result["verdict"], result["reason"], result["failed_check"]) == ("pass", "", None)
    trials = [c for c in result["checks"] if "trial" in c]
    assert [(c["trial"], c["kind"], c["params"], c["reason"]) for c in trials] == [
        (0, "problem", "own", "ok"), (1, "problem", "random", "ok"), (2, "signed", "random", "ok"),
        (3, "scaled", "random", "ok")]
    (out,) = trials[0]["outputs"]
    assert set(out) == REPORT_KEYS and (out["bad_count"], out["total"]) == (0, ROWS * COLS)
    time = result["time"]
    assert time["runs"] == 6 and set(time["per_kind"]) == {"problem", "signed"}  # 12 timed calls, half of each
    assert time["slower_kind"] in ("problem", "signed")
    assert time["median_ms"] == time["per_kind"][time["slower_kind"]]["median_ms"]
    assert time["median_ms"] >= max(k["median_ms"] for k in time["per_kind"].values())
    assert len(result["calls"]) == 12
    audits = result["audits"]
    assert audits["timed_calls"] == 12 and audits["sampled"] >= 4 and audits["full"] == 2
    # The fused engine on a GPU by default; on the CPU the eager one (the interpreter only when a test names it).
    expected = os.environ.get("CUTEGEN_COMPARE") or ("fused" if torch.cuda.is_available() else "torch")
    assert audits["compare"] == expected
    assert len([c for c in result["checks"] if "timed_call" in c]) == 2  # the full audits' reports
    assert result["calibration"]["rounds"] > 0 and result["runner"]["end"] == "exit code 0"
    # Where the session's time went: every part ran, and the parts fit inside the session.
    phases = result["phase_seconds"]
    assert set(phases) == {"setup", "runner_start", "trials", "timed_staging", "timed_calls", "timed_compare",
                           "full_audits", "runner_end", "share_after", "release"}
    assert all(v >= 0 for v in phases.values()) and phases["trials"] > 0 and phases["timed_calls"] > 0, phases


def test_a_session_that_stops_early_times_only_the_parts_it_reached(worker, small):
    result = evaluate(worker, "relu", mode="zeros")
    assert result["verdict"] != "pass"
    assert set(result["phase_seconds"]) == {"setup", "runner_start", "trials", "share_after", "release"}


def test_a_staging_budget_fits_the_timed_calls_to_what_calibration_measured(worker, small):
    # A budget no staging fits in: the least count, half of each kind, the cut said in the record.
    result = evaluate(worker, "relu", runs=40, request={"timed_budget_s": 1e-9})
    assert result["verdict"] == "pass", result["reason"]
    least = candidate_session.MIN_BUDGETED_RUNS
    assert len(result["calls"]) == least and result["audits"]["timed_calls"] == least
    assert {k: v["runs"] for k, v in result["time"]["per_kind"].items()} == {"problem": least // 2, "signed": least // 2}
    budget = result["audits"]["timed_budget"]
    assert budget["asked"] == 40 and budget["seconds"] == 1e-9
    assert budget["staging_ms"] == result["calibration"]["staging_ms"] > 0
    assert len([c for c in result["checks"] if "timed_call" in c]) == 2  # both full audits, among the calls run
    # A budget every staging fits in: the runs asked, and no cut recorded.
    result = evaluate(worker, "relu", runs=40, request={"timed_budget_s": 1e6})
    assert len(result["calls"]) == 40 and "timed_budget" not in result["audits"]


def test_the_fitted_count_stays_between_the_least_and_the_runs_asked():
    plan = candidate_session.Plan(runner=["r"], library="l", trials=[], warmup=10, runs=100, precision="strict",
                                  call_timeout_s=1.0, work_dir="/tmp", timed_budget_s=0.8)
    ms = 1_000_000
    assert plan.fitted_runs(16 * ms) == 50  # KernelBench 19's staging on an H100
    assert plan.fitted_runs(1 * ms) == 100  # a small problem: every run asked
    assert plan.fitted_runs(100 * ms) == candidate_session.MIN_BUDGETED_RUNS
    assert plan.fitted_runs(0) == 100  # nothing measured (no calibration): nothing cut
    few = candidate_session.Plan(runner=["r"], library="l", trials=[], warmup=1, runs=10, precision="strict",
                                 call_timeout_s=1.0, work_dir="/tmp", timed_budget_s=0.8)
    assert few.fitted_runs(100 * ms) == 10  # fewer asked than the least: what was asked
    exact = candidate_session.Plan(runner=["r"], library="l", trials=[], warmup=1, runs=100, precision="strict",
                                   call_timeout_s=1.0, work_dir="/tmp")
    assert exact.fitted_runs(100 * ms) == 100  # no budget: the runs exactly
    # A screening ranks: its least is lower. KernelBench 19 screened with three others (a group): 4 x 16 ms a call.
    screen = candidate_session.Plan(runner=["r"], library="l", trials=[], warmup=3, runs=20, precision="strict",
                                    call_timeout_s=1.0, work_dir="/tmp", timed_budget_s=0.8, screening=True)
    assert screen.fitted_runs(16 * ms) == 20 and screen.fitted_runs(4 * 16 * ms) == 12
    assert screen.fitted_runs(1000 * ms) == candidate_session.MIN_SCREENING_RUNS


@pytest.mark.parametrize("bad", [0, -1.0, "1", float("inf"), True])
def test_a_staging_budget_must_be_positive_seconds(worker, small, bad):
    with pytest.raises(WorkerError, match="timed_budget_s must be a positive number of seconds"):
        evaluate(worker, "relu", request={"timed_budget_s": bad})


def test_timed_inputs_cannot_be_predicted_from_the_request_or_earlier_calls(worker, small):
    """Each timed call's seed is drawn from the OS as the call comes. Derived from one seed, a kernel could
    recover it from a warm-up call's inputs and answer every timed call in advance (predict_next_inputs.cu)."""
    first, second = (evaluate(worker, "relu", warmup=2, runs=8) for _ in range(2))
    seeds = [[c["seed"] for c in r["calls"]] for r in (first, second)]
    assert all(len(s) == 8 and len(set(s)) == 8 for s in seeds)
    assert not set(seeds[0]) & set(seeds[1])  # the same request, other inputs
    steps = {(b - a) % (1 << candidate_session.CALL_SEED_BITS) for a, b in zip(seeds[0], seeds[0][1:])}
    assert len(steps) > 1  # no arithmetic progression
    assert all(0 <= x < 1 << 63 for x in seeds[0] + seeds[1])


def test_each_call_records_its_span_between_the_workers_own_marks(worker, small):
    """The span from the worker's mark before the command to its mark after the reply (on a GPU, CUDA events
    of its own stream) covers the whole call: never less than what the call took."""
    result = evaluate(worker, "relu", warmup=1, runs=6, ms=5)
    assert all(c["span_ms"] >= 4.5 for c in result["calls"]), [c["span_ms"] for c in result["calls"]]
    assert result["time"]["span_median_ms"] >= 4.5
    assert result["calibration"]["span_overhead_ms"] >= 0


@pytest.mark.parametrize("name", ["relu", "gelu_tanh", "softmax_rows", "matmul_square", "matmul_bias_gelu", "row_sum",
                                  "scale_add", "layernorm", "split_halves", "matmul_fp16", "matmul_bf16_nt"])
def test_eager_pytorch_in_the_problems_own_precision_passes_strict(worker, small, name):
    """The precision rule must not fail an honest kernel: torch's own result is one."""
    result = evaluate(worker, name, mode="native")
    assert result["verdict"] == "pass", result["reason"]


def test_the_precision_limit_is_a_multiple_of_torchs_own_error(worker, small):
    result = evaluate(worker, "matmul_square", mode="native", runs=0)
    out = result["checks"][2]["outputs"][0]  # the signed trial
    assert out["rel_l2_limit"] == pytest.approx(max(1e-6, 5 * out["torch"]["rel_l2_err"]))
    assert out["abs_slack"] == pytest.approx(5 * out["torch"]["max_abs_err"])
    assert out["rel_l2_err"] == pytest.approx(out["torch"]["rel_l2_err"])


# ---- wrong results ---------------------------------------------------------------------------------
def test_nothing_written_is_unwritten(worker, small):
    result = evaluate(worker, "relu", mode="none")
    assert result["verdict"] == "unwritten"
    out = failed_check(result)["outputs"][0]
    assert out["unwritten_count"] == out["bad_count"] == ROWS * COLS


def test_partly_unwritten_output_names_the_elements(worker, small):
    result = evaluate(worker, "relu", mode="partial", fraction=5 / (ROWS * COLS))
    out = failed_check(result)["outputs"][0]
    assert (result["verdict"], out["unwritten_count"]) == ("unwritten", 5)
    assert [b["index"] for b in out["first_bad"]] == [[0, i] for i in range(5)]
    assert all(b["got"] == "NaN" for b in out["first_bad"])  # JSON has no NaN: the protocol spells it


LOG_OF_INPUT = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.log(x)
def get_inputs():
    return [torch.rand(64, 256)]
def get_init_inputs():
    return []
"""


def test_a_correct_nan_output_is_not_taken_for_the_poison(worker, tmp_path):
    """On signed inputs half of log(x) is NaN, and right: the check after each timed call looks for the
    worker's own poison bit for bit, not for any NaN (KernelBench 98, kl_div(log(p), t), was judged
    `unwritten` on the H200 for the NaN of its signed calls)."""
    result = evaluate(worker, None, path=write_problem(tmp_path, LOG_OF_INPUT), runs=16)
    assert result["verdict"] == "pass", result["reason"]
    assert set(result["time"]["per_kind"]) == {"problem", "signed"}  # the signed calls were timed and checked


def test_outputs_left_alone_still_hold_the_poison_after_every_staging(worker, tmp_path):
    """The same problem, nothing written: the poison (a NaN of fresh bits) is still recognised."""
    result = evaluate(worker, None, mode="none", path=write_problem(tmp_path, LOG_OF_INPUT))
    assert result["verdict"] == "unwritten"


def test_a_second_run_that_skips_work_is_unwritten(worker, small):
    result = evaluate(worker, "relu", mode="reference", sets=[0])
    assert result["verdict"] == "unwritten" and failed_check(result)["outputs"][0]["set"] == 1


def test_one_wrong_element_is_a_mismatch_with_its_index(worker, small):
    result = evaluate(worker, "relu", mode="perturb", flat_index=COLS + 17, delta=0.5)
    out = failed_check(result)["outputs"][0]
    assert (result["verdict"], out["bad_count"]) == ("mismatch", 1)
    assert out["first_bad"][0]["index"] == [1, 17]
    assert out["max_abs_err"] == pytest.approx(0.5, abs=1e-6)


def test_identity_passes_relu_on_problem_inputs_but_not_on_signed_ones(worker, small):
    result = evaluate(worker, "relu", mode="identity")
    check = failed_check(result)
    assert (result["verdict"], check["kind"]) == ("mismatch", "signed")
    assert check["outputs"][0]["bad_fraction"] == pytest.approx(0.5, abs=0.05)


def test_zeros_fail_softmax(worker, small):
    assert evaluate(worker, "softmax_rows", mode="zeros")["verdict"] == "mismatch"


def test_runs_that_disagree_beyond_tolerance_are_nondeterministic(worker, small):
    worker.load(problem_path("relu"))
    ref = torch.relu(worker.session.problem.source.generate(1)[0]).reshape(-1)
    index = int(torch.nonzero(ref < 0.3)[0])
    bound = 1e-4 * float(ref.abs().max()) + 1e-4 * float(ref[index])
    result = evaluate(worker, "relu", mode="perturb", flat_index=index, deltas=[0.9 * bound, -0.9 * bound],
                      trials=TRIALS[:1])
    check = failed_check(result)
    assert (result["verdict"], check["outputs"][0]["bad_count"]) == ("nondeterministic", 0)
    assert check["run_to_run_max_abs_diff"] == pytest.approx(1.8 * bound, rel=1e-3)


def test_tuple_output_reports_each_output(worker, small):
    result = evaluate(worker, "split_halves", mode="zero_output", output=1)
    check = failed_check(result)
    assert result["verdict"] == "mismatch" and [o["index"] for o in check["outputs"]] == [0, 1]
    assert check["outputs"][0]["bad_count"] == 0 and check["outputs"][1]["bad_count"] > 0


# ---- inputs and parameters ---------------------------------------------------------------------------
def test_an_input_written_by_the_kernel_is_reported(worker, small):
    result = evaluate(worker, "relu", mode="mutate_input")
    assert (result["verdict"], failed_check(result)["inputs_mutated"]) == ("input_mutated", ["x"])


def test_a_parameter_written_by_the_kernel_is_reported(worker, small):
    result = evaluate(worker, "layernorm", mode="mutate_param", index=2)  # weight, bias, then the gain buffer
    assert (result["verdict"], failed_check(result)["inputs_mutated"]) == ("input_mutated", ["gain"])


def test_a_kernel_that_ignores_the_parameters_it_is_given_fails_on_the_first_random_draw(worker, small):
    result = evaluate(worker, "layernorm", mode="own_params")
    check = failed_check(result)
    assert result["verdict"] == "mismatch" and (check["trial"], check["params"]) == (1, "random")


def test_layernorms_default_affine_parameters_are_randomised_too(worker, tmp_path, small):
    """nn.LayerNorm starts at weight 1 / bias 0: a kernel ignoring them is right on the own-parameters trial."""
    plain = write_problem(tmp_path, """
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(32)
    def forward(self, x):
        return self.norm(x)
def get_inputs():
    return [torch.rand(8, 32)]
def get_init_inputs():
    return []
""")
    result = evaluate(worker, None, mode="own_params", path=plain)
    assert result["verdict"] == "mismatch" and failed_check(result)["trial"] == 1


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
    running statistics; honest outputs must pass every check, not only the first."""
    result = evaluate(worker, None, path=write_problem(tmp_path, BATCHNORM_TRAINING_FP64))
    assert result["verdict"] == "pass", result["reason"]


# ---- precision -----------------------------------------------------------------------------------------
def test_plain_tf32_fails_strict_and_passes_the_tf32_policy(worker, small):
    strict = evaluate(worker, "matmul_square", mode="tf32")
    assert strict["verdict"] == "mismatch"
    relaxed = evaluate(worker, "matmul_square", mode="tf32", precision="tf32")
    assert relaxed["verdict"] == "pass", relaxed["reason"]
    assert relaxed["checks"][0]["outputs"][0]["rel_l2_limit"] >= 2e-3


def test_tf32_only_on_all_positive_inputs_fails_strict(worker, small):
    """The cheat that passed the old judge: fp32 when it sees a negative input, TF32 otherwise."""
    result = evaluate(worker, "matmul_square", mode="positive_tf32")
    assert result["verdict"] == "mismatch" and failed_check(result)["kind"] in ("problem", "scaled")


def test_half_precision_floors_apply_whatever_the_policy(worker, small):
    for policy in ("strict", "tf32", "bf16"):
        result = evaluate(worker, "matmul_fp16", mode="native", precision=policy, runs=0)
        out = result["checks"][0]["outputs"][0]
        assert (out["atol"], out["rtol"]) == (1e-2, 1e-2) and out["rel_l2_limit"] >= 2e-3


# ---- timed calls -----------------------------------------------------------------------------------------
def test_skipping_work_once_timing_starts_is_caught_at_the_secret_positions(worker, small):
    calls_before_timing = 2 * len(TRIALS) + 2  # two per trial, two warm-ups
    result = evaluate(worker, "relu", mode="none", after=calls_before_timing)
    assert result["verdict"] == "unwritten" and result["reason"].startswith("timed call 0:")


def test_a_call_that_leaves_one_percent_unfinished_is_caught(worker, small):
    result = evaluate(worker, "relu", mode="partial", fraction=0.01, after=2 * len(TRIALS) + 2)
    assert result["verdict"] == "unwritten" and "secretly chosen positions" in result["reason"]


def test_replaying_the_previous_answer_is_result_reuse(worker, small):
    result = evaluate(worker, "relu", mode="stale")
    assert result["verdict"] == "result_reuse"
    assert failed_check(result)["reason"] == "result_reuse"


def test_wrong_only_while_timed_is_caught_by_the_audits(worker, small):
    """Right in every trial, zeros once timing starts; the audits compare values at the secret positions."""
    result = evaluate(worker, "softmax_rows", mode="zeros", after=2 * len(TRIALS) + 2, runs=12)
    assert result["verdict"] == "mismatch"
    assert "timed call" in result["reason"]


def test_writing_nan_instead_of_working_while_timed_is_caught_by_the_audits(worker, small):
    """The check after each call recognises only the poison's own bits (a correct output may be NaN), so a
    kernel that skips its work but writes a NaN of its own passes that check; the audits' comparison at the
    secret positions is what catches it, as it catches zeros."""
    result = evaluate(worker, "softmax_rows", mode="nan", after=2 * len(TRIALS) + 2, runs=12)
    assert result["verdict"] in ("mismatch", "unwritten") and "timed call" in result["reason"], result["reason"]
    assert "still held the worker's poison" not in result["reason"]


def test_the_time_is_the_workers_clock_not_the_runners_claim(worker, small):
    result = evaluate(worker, "relu", mode="reference", ms=3, trials=TRIALS[:1], runs=8)
    assert result["verdict"] == "pass"
    assert result["time"]["median_ms"] >= 2.9
    assert all(call["wall_ms"] >= 2.9 for call in result["calls"])


def test_the_time_is_never_below_what_the_streams_events_saw(worker, small):
    """The worker subtracts its least round trip from each call; a kernel whose events claim more than is
    left is reported at its event time (an honest GPU time is a floor), never at a near-zero remainder."""
    result = evaluate(worker, "relu", mode="reference", event_ms=2.0, trials=TRIALS[:1], runs=8)
    assert result["verdict"] == "pass"
    assert result["time"]["median_ms"] >= 2.0
    assert all(call["wall_ms"] >= 2.0 for call in result["calls"])


def test_the_round_trip_subtracted_is_the_least_one_seen(worker, small):
    result = evaluate(worker, "relu", mode="reference", trials=TRIALS[:1], runs=4)
    assert result["time"]["overhead_ms"] == result["calibration"]["ping_ms"]
    assert result["calibration"]["ping_ms"] <= result["calibration"]["ping_median_ms"]


def test_events_far_below_the_workers_clock_are_hidden_work(worker, small):
    result = evaluate(worker, "relu", mode="reference", ms=4, event_ms=0.01, trials=TRIALS[:1], runs=8)
    assert result["verdict"] == "hidden_work"
    assert "worker's clock" in result["reason"]


# ---- the runner ending badly -----------------------------------------------------------------------------
@pytest.mark.parametrize("mode,verdict,words", [
    ("print", "printed_output", "printed"), ("rc", "kernel_error", "CUTEGEN_ERROR_BAD_ARGUMENTS"),
    ("cuda_error", "cuda_error", "cudaErrorIllegalAddress"), ("crash", "crash", "SIGSEGV"),
    ("hang", "timeout", "did not finish"), ("tamper", "tampering", "does not answer"),
    ("forbidden", "forbidden_call", "sandbox"), ("load_fail", "load_failed", "bad ELF")])
def test_runner_failures_get_their_verdict(worker, small, mode, verdict, words):
    result = evaluate(worker, "relu", mode=mode)
    assert result["verdict"] == verdict and words in result["reason"], result["reason"]
    assert result["time"] is None


def test_bad_requests_are_request_errors(worker, small):
    with pytest.raises(WorkerError) as nothing_loaded:
        worker.call("evaluate_candidate", runner=["r"], library="l", trials=[], warmup=0, runs=0, call_timeout_s=1.0, work_dir="/tmp")
    assert nothing_loaded.value.kind == "request"
    worker.load(problem_path("relu"))
    good = dict(runner=["r"], library="l", trials=[], warmup=0, runs=1, call_timeout_s=1.0,
                work_dir="/tmp", fake_runner={"mode": "reference"})
    for bad in ({"trials": [{"kind": "problem"}]}, {"trials": [{"seed": 1, "kind": "shuffled"}]},
                {"trials": [{"seed": 1, "kind": "scaled"}]}, {"runs": -1}, {"runner": []}, {"precision": "fast"},
                {"fake_runner": {"mode": "nope"}}):
        with pytest.raises(WorkerError) as error:
            worker.call("evaluate_candidate", **dict(good, **bad))
        assert error.value.kind == "request", bad


def test_a_worker_without_the_fake_runner_refuses_it(small):
    from cutegen_worker.protocol import Dispatcher
    from cutegen_worker.session import Session
    dispatcher = Dispatcher(Session())  # what `python -m cutegen_worker` serves: nothing installed
    dispatcher.handle({"id": 1, "op": "load", "problem": problem_path("relu"), "device": "cpu"})
    response = dispatcher.handle({"id": 2, "op": "evaluate_candidate", "runner": ["r"], "library": "l", "trials": [],
                                  "warmup": 0, "runs": 0, "call_timeout_s": 1.0, "work_dir": "/tmp",
                                  "fake_runner": {"mode": "reference"}})
    assert response["ok"] is False and "test hook" in response["error"]


def test_the_worker_package_holds_no_test_code():
    # The fake runner lives with the tests; the package cutegen runs cannot import or install it.
    package = os.path.join(ROOT, "python", "cutegen_worker")
    names = os.listdir(package)
    assert "fake_runner.py" not in names and not any(n.startswith("test_") for n in names), names
    for name in names:
        if name.endswith(".py"):
            with open(os.path.join(package, name), encoding="utf-8") as f:
                assert "import fake_runner" not in f.read(), name


def test_every_session_does_its_two_full_audits(worker, small):
    """Which audits are full is random; that there are two is not (it once came out as one)."""
    for _ in range(12):
        result = evaluate(worker, "relu", trials=TRIALS[:1], warmup=0, runs=8)
        assert result["audits"]["full"] == 2 and result["audits"]["sampled"] >= 4, result["audits"]


# ---- the loop's bar: checks only a kept kernel needs wait for the time ------------------------------------------
def _trial_kinds(result):
    return [c["kind"] for c in result["checks"] if "trial" in c]


def test_without_a_bar_a_kernel_wrong_only_on_large_inputs_fails_its_scaled_trial_before_timing(worker, small):
    result = evaluate(worker, "relu", mode="wrong_when_large")
    assert result["verdict"] == "mismatch" and failed_check(result)["kind"] == "scaled", result["reason"]
    assert result["time"] is None and "deferred" not in result["audits"]


def test_a_kernel_faster_than_the_bar_gets_the_scaled_trial_and_the_full_audits_after_its_time(worker, small):
    honest = evaluate(worker, "relu", request={"keep_bar_ms": 1e6})
    assert honest["verdict"] == "pass", honest["reason"]
    # The same checks as without a bar; the scaled trial's after the timed calls and their full audits.
    assert sorted(_trial_kinds(honest)) == ["problem", "problem", "scaled", "signed"]
    assert _trial_kinds(honest)[-1] == "scaled" and "trial" in honest["checks"][-1]
    assert honest["audits"]["full"] == 2 and "deferred" not in honest["audits"]
    wrong = evaluate(worker, "relu", mode="wrong_when_large", request={"keep_bar_ms": 1e6})
    assert wrong["verdict"] == "mismatch" and failed_check(wrong)["kind"] == "scaled", wrong["reason"]
    assert wrong["audits"]["full"] == 2  # its timed calls were timed and audited first: it was right on those


def test_a_kernel_not_below_the_bar_skips_them_and_says_so(worker, small):
    # Rolled back whatever they show: a pass whose record names what was left out. Everything else ran.
    result = evaluate(worker, "relu", mode="wrong_when_large", request={"keep_bar_ms": 1e-6})
    assert result["verdict"] == "pass", result["reason"]
    assert sorted(_trial_kinds(result)) == ["problem", "problem", "signed"]
    deferred = result["audits"]["deferred"]
    assert deferred["bar_ms"] == 1e-6 and deferred["median_ms"] == result["time"]["median_ms"] >= 1e-6
    assert deferred["trials"] == [{"trial": 3, "kind": "scaled"}] and deferred["full_audits"] == 2
    assert result["audits"]["full"] == 0 and len(result["calls"]) == 12  # every timed call compared still
    assert result["audits"]["sampled"] >= 12


def test_the_bar_must_be_a_positive_number(worker, small):
    with pytest.raises(WorkerError, match="keep_bar_ms must be a positive number"):
        evaluate(worker, "relu", request={"keep_bar_ms": 0})


def test_an_unknown_calibration_sweep_is_a_request_error(monkeypatch):
    from cutegen_worker.candidate_session import calibration_sweep
    from cutegen_worker.errors import RequestError
    monkeypatch.setenv("CUTEGEN_CALIBRATION_SWEEP", "everything")
    with pytest.raises(RequestError, match="CUTEGEN_CALIBRATION_SWEEP='everything'.*own, footprint"):
        calibration_sweep()


def test_secret_positions_differ_between_sessions(worker, small):
    from cutegen_worker.audit import SecretPositions
    t = torch.zeros(1000, 1000)
    a, b = SecretPositions([t], t.device), SecretPositions([t], t.device)
    assert not torch.equal(a.positions(0), b.positions(0))
    assert a.positions(0).numel() == 2048 and torch.unique(a.positions(0)).numel() == 2048


@pytest.mark.parametrize("setting", [None, "own", "footprint"])
def test_calibration_sweeps_and_takes_the_round_trip_beyond_the_sweeps_own_time(monkeypatch, setting):
    """The calibration's pings sweep the runner's buffer (caches cold for the gather, as after a real
    call) and the overhead subtracted from every call is the ping's wall time beyond its own events."""
    from types import SimpleNamespace
    from cutegen_worker.candidate_session import CALIBRATION_ROUNDS, CandidateSession, Record
    from cutegen_worker.runner_link import Exchange

    if setting:
        monkeypatch.setenv("CUTEGEN_CALIBRATION_SWEEP", setting)
    else:
        monkeypatch.delenv("CUTEGEN_CALIBRATION_SWEEP", raising=False)
    monkeypatch.delenv("CUTEGEN_OVERRUN_CHECK", raising=False)
    sweeps, order = [], []
    walls = iter([900_000, 700_000] + [500_000 + 10_000 * i for i in range(CALIBRATION_ROUNDS)])

    class Link:
        def wait_ns(self):
            return 0  # an idle machine

        def ping(self, sweep=""):
            sweeps.append(sweep)
            order.append("ping")
            return Exchange(reply={"pong": True, "event_ms": 0.3}, wall_ns=next(walls))

    class Clock:
        def flush(self):
            order.append("flush")

        def probe_marked(self, mark=None):
            order.append(f"probe {mark}")
            return 20_000, self.mark()

        def mark(self):  # a ping's GPU span: 0.45 ms, 0.3 of it the sweep
            order.append("mark")
            return 0 if order.count("mark") % 2 else 450_000

        def span_ns(self, start, end):
            return end - start

        def sync(self):
            pass

    gather = SimpleNamespace(gather=lambda *_: order.append("gather"))

    def stage(problem, spec, flush, output_sets):
        order.append(f"stage {spec.kind} {output_sets}")
        flush()

    ns = SimpleNamespace(link=Link(), clock=Clock(), secret_out=gather, secret_in=gather, record=Record(),
                         slot=SimpleNamespace(outputs=[None], inputs=[], params=[], stage=stage), problem=None,
                         sysrand=random.SystemRandom(), copies=[None],
                         _draw_positions=lambda: order.append("positions"),
                         _copy_outputs=lambda into: order.append("copy"),
                         _warm_gather_on_cpu=lambda: None)  # the GPU's sequence: no warm-up gather there
    ns._calibrate_wait_share = lambda cpus: CandidateSession._calibrate_wait_share(ns, cpus)
    CandidateSession._calibrate(ns)
    assert sweeps == [setting or "own"] * CALIBRATION_ROUNDS
    assert ns.record.calibration["sweep"] == (setting or "own")
    # No flush between the ping and what follows it; the default overrun check probes right after the ping.
    # A round is a timed call's sequence: a fresh set staged and the L2 flushed, then the probe. The marks
    # are taken inside the probes' windows (a mark waits for the GPU as the probe does). Fresh secret positions
    # before each round, and the outputs copied after the gather, as after every timed call.
    assert order[:11] == ["positions", "stage problem (0,)", "flush", "probe start", "mark", "ping", "probe end",
                          "mark", "gather", "gather", "copy"]
    # The rounds stage the kinds a timed call draws, in turn: the probes' limits come from the same staging work.
    staged = [o.split()[1] for o in order if o.startswith("stage")]
    assert staged == ["problem", "signed"] * (CALIBRATION_ROUNDS // 2)
    assert ns.record.calibration["kinds"] == ["problem", "signed"]
    assert ns.ping_ns == 200_000  # 0.5 ms round trip, 0.3 ms of it the sweep itself
    assert ns.record.calibration["ping_ms"] == 0.2
    assert ns.record.calibration["span_overhead_ms"] == 0.15  # the GPU span beyond the sweep, too
    # These pings carry no CPU time of the runner: no long pings follow, and host computing is not judged.
    assert ns.record.calibration["host_cpu"] == "unavailable" and len(sweeps) == CALIBRATION_ROUNDS


@pytest.mark.parametrize("check", ["gather", "probe"])
def test_the_overrun_after_a_call_is_charged_on_the_check_asked_for(worker, small, monkeypatch, check):
    """CUTEGEN_OVERRUN_CHECK=probe (the default): a probe of the worker's right after the reply, calibrated
    like the one before the call, is what the overrun charges after the call; the gather is still timed
    and recorded. =gather charges the gather's own latency instead."""
    monkeypatch.setenv("CUTEGEN_OVERRUN_CHECK", check)
    result = evaluate(worker, "relu", trials=TRIALS[:1], runs=8)
    assert result["verdict"] == "pass", result["reason"]
    cal = result["calibration"]
    assert cal["overrun_check"] == check
    assert (cal["post_probe_p90_ms"] > 0) == (check == "probe")
    for call in result["calls"]:
        after = (call["post_probe_excess_ms"] + max(0.0, call["gather_excess_ms"] - 0.25) if check == "probe"
                 else call["gather_excess_ms"])
        assert call["overrun_ms"] == pytest.approx(call["probe_excess_ms"] + after)
        if check == "gather":
            assert call["post_probe_excess_ms"] == 0


def test_an_unknown_overrun_check_is_a_request_error(worker, small, monkeypatch):
    monkeypatch.setenv("CUTEGEN_OVERRUN_CHECK", "vibes")
    with pytest.raises(WorkerError) as bad:
        evaluate(worker, "relu", trials=TRIALS[:1], runs=2)
    assert bad.value.kind == "request" and "probe, gather" in str(bad.value)


def test_the_default_overrun_check_is_the_probe_after_the_call(monkeypatch):
    """Decided by the H200 A/B of 2026-12-01: the gather's own latency charged honest LayerNorm 40 calls
    0.17-0.25 ms each; the probe 0.04, with the overrun attacks judged alike."""
    monkeypatch.delenv("CUTEGEN_OVERRUN_CHECK", raising=False)
    assert candidate_session.overrun_check() == "probe"


def test_under_the_probe_a_long_gather_wait_is_still_charged():
    """Leftover work can let a time-sliced probe through and finish while the gather waits behind it:
    under the probe check the gather's wait beyond 0.25 ms is charged too, an honest gather's is not."""
    charge = candidate_session.charge_after_call
    ms = 1_000_000
    assert charge("probe", 20_000, int(0.17 * ms)) == 20_000  # an honest call: the probe's excess alone
    assert charge("probe", 30_000, int(1.5 * ms)) == 30_000 + int(1.25 * ms)  # 1.5 ms behind leftover work
    assert charge("probe", int(2 * ms), int(0.1 * ms)) == int(2 * ms)  # the probe waited: that is charged
    # A slice's wait at the probe, then the rest at the gather: the leftover's whole time, less the allowance.
    assert charge("probe", int(2 * ms), int(1.5 * ms)) == int(3.25 * ms)
    assert charge("gather", int(2 * ms), int(0.17 * ms)) == int(0.17 * ms)  # the old charge, on the gather


# ---- the session's buffers, freed off the step's critical path ------------------------------------
def test_an_evaluations_buffers_are_held_until_free_buffers_or_the_next_allocating_request(worker, small, tmp_path):
    """The judge sends `free_buffers` beside the next compile: freeing them at the session's end, and torch's
    cache before the baselines, was 0.5-0.8 s of a KernelBench-size step."""
    session = worker.session
    assert evaluate(worker, "relu")["verdict"] == "pass"
    assert len(session.held_arenas) == 1
    held = session.held_arenas[0]
    # The baselines served from the cache allocate nothing, and free nothing either.
    fields = dict(modes=["eager"], warmup_ms=1, runs=3, cache_dir=str(tmp_path / "c"), sets=2, seed=1)
    assert worker.call("time_baselines", **fields)["cached"] is False  # measured: frees first
    assert session.held_arenas == []
    assert evaluate(worker, "relu")["verdict"] == "pass"
    assert worker.call("time_baselines", **fields)["cached"] is True
    assert len(session.held_arenas) == 1 and session.held_arenas[0] is not held
    assert worker.call("free_buffers") == {"reserved_bytes": 0}
    assert session.held_arenas == []
    # The next evaluation frees the last one's before it allocates its own.
    evaluate(worker, "relu")
    first = session.held_arenas[0]
    evaluate(worker, "relu")
    assert session.held_arenas == [session.held_arenas[0]] and session.held_arenas[0] is not first
