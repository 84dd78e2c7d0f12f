"""`screen_candidates` end to end in one worker, each candidate's runner played by the fake (fake_runner.py):
the candidates share one slot, one calibration and each call's staging (screen_group.py), and none may see what
another left in the slot, nor end the others by failing."""
import pytest

from conftest import WorkerError, problem_path
import fake_runner
from cutegen_worker import candidate_session, memory, screen_group

TRIALS = [{"seed": 2, "kind": "problem"}]


def screen(worker, modes, runs=10, warmup=2, request=None, name="relu"):
    """One group of fakes, one per mode (a mode's spec may be a dict of more fake fields)."""
    worker.load(problem_path(name))
    specs = [m if isinstance(m, dict) else {"mode": m} for m in modes]
    fields = dict(runner=["cutegen-runner"], libraries=[f"/nonexistent/k{i}.so" for i in range(len(specs))],
                  trials=TRIALS, warmup=warmup, runs=runs, precision="strict", call_timeout_s=10.0,
                  work_dir="/tmp/cutegen-test-work", fake_runners=specs)
    fields.update(request or {})
    return worker.call("screen_candidates", **fields)


def test_honest_candidates_are_ranked_in_one_session_with_one_calibration(worker, small):
    answer = screen(worker, ["reference", "native", {"mode": "reference", "ms": 3.0}])
    records = answer["records"]
    assert [r["verdict"] for r in records] == ["pass", "pass", "pass"], [r["reason"] for r in records]
    for index, r in enumerate(records):
        assert r["screening_group"] == {"candidates": 3, "index": index, "calibrated_by": 0}
        assert r["audits"]["timed_calls"] == 10 and len(r["calls"]) == 10
        assert r["audits"]["full"] == 0 and r["audits"]["copies"] == "none"  # the group keeps no private copies
        assert [c["trial"] for c in r["checks"]] == [0]
        assert r["runner"]["end"] == "exit code 0"
    # One calibration, the first runner's, for all; the others say whose they use.
    assert records[0]["runner"]["calibrated"] is True
    assert [r["runner"]["calibrated"] for r in records[1:]] == [False, False]
    assert records[1]["calibration"]["by_candidate"] == 0
    assert records[1]["calibration"]["ping_ms"] == records[0]["calibration"]["ping_ms"]
    # Every call the same inputs for all: the same seeds, in the same order.
    seeds = [[c["seed"] for c in r["calls"]] for r in records]
    assert seeds[0] == seeds[1] == seeds[2] and len(set(seeds[0])) == 10
    # The slow candidate is ranked slower.
    assert records[2]["time"]["median_ms"] > 2.5 > records[0]["time"]["median_ms"]
    phases = answer["phase_seconds"]
    assert {"runner_start", "calibration", "load", "trials", "timed_staging", "timed_restore", "runner_end"} <= set(phases)


def test_the_staging_budget_is_shared_by_the_group(worker, small):
    # A budget no staging fits: a screening's least, for every candidate alike, the group's size recorded.
    records = screen(worker, ["reference", "native"], runs=20, request={"timed_budget_s": 1e-9})["records"]
    least = candidate_session.MIN_SCREENING_RUNS
    for r in records:
        assert r["verdict"] == "pass" and r["audits"]["timed_calls"] == least == len(r["calls"])
        assert r["audits"]["timed_budget"]["candidates"] == 2 and r["audits"]["timed_budget"]["asked"] == 20


def test_candidates_beyond_what_memory_holds_runners_for_are_screened_in_further_groups(worker, small, monkeypatch):
    monkeypatch.setattr(memory, "runners_that_fit", lambda estimate, device, most: 2)
    answer = screen(worker, ["reference", "native", "zeros"])
    records = answer["records"]
    assert answer["groups"] == 2 and [r["verdict"] for r in records] == ["pass", "pass", "mismatch"]
    assert [r["screening_group"]["candidates"] for r in records] == [2, 2, 1]
    assert [r["screening_group"]["index"] for r in records] == [0, 1, 0]


def test_a_candidate_that_writes_nothing_cannot_pass_on_another_ones_outputs(worker, small):
    # Without fresh poison before each candidate's call, the second would find the first's right answers.
    records = screen(worker, ["reference", "none"])["records"]
    assert records[0]["verdict"] == "pass"
    assert records[1]["verdict"] == "unwritten", records[1]["reason"]


def test_a_candidate_that_changes_its_inputs_does_not_fail_the_next_one(worker, small):
    # The inputs are written again before each candidate: the second is checked against what it was given.
    records = screen(worker, ["mutate_input", "reference"])["records"]
    assert records[0]["verdict"] == "input_mutated", records[0]["reason"]
    assert records[1]["verdict"] == "pass", records[1]["reason"]


@pytest.mark.parametrize("bad, verdict", [("crash", "crash"), ("load_fail", "load_failed"), ("zeros", "mismatch"),
                                          ("print", "printed_output")])
def test_a_candidate_that_fails_leaves_the_group_and_the_others_go_on(worker, small, bad, verdict):
    records = screen(worker, ["reference", bad, "native"])["records"]
    assert records[1]["verdict"] == verdict, records[1]["reason"]
    assert records[1]["runner"]["end"]  # its runner was ended and said how
    for r in (records[0], records[2]):
        assert r["verdict"] == "pass" and r["audits"]["timed_calls"] == 10, r["reason"]


def test_a_failure_during_the_timed_calls_ends_only_that_candidate(worker, small):
    records = screen(worker, ["reference", {"mode": "zeros", "after": 4}])["records"]
    assert records[0]["verdict"] == "pass"
    assert records[1]["verdict"] in ("mismatch", "unwritten") and "timed call" in records[1]["reason"]


def test_a_busy_cpu_during_calibration_is_the_machines_not_a_candidates(worker, small):
    # Calibration runs before any candidate is loaded: pings that wait for a CPU in every round say the machine is
    # busy (the judge measures the whole group again later), never a verdict of the candidate whose runner it was.
    with pytest.raises(WorkerError) as err:
        screen(worker, [{"mode": "reference", "wait_ping_ms": 50.0}, "reference"])
    assert "too busy" in str(err.value) and err.value.kind == "busy"


def test_kernels_with_a_workspace_get_one_each_poisoned_before_every_call(worker, small):
    fake_runner.WORKSPACE_SEEN.clear()
    answer = screen(worker, [{"mode": "reference", "workspace_bytes": 4096}, "reference",
                             {"mode": "reference", "workspace_bytes": 8192}], request={"workspaces": [True, False, True]})
    records = answer["records"]
    assert [r["verdict"] for r in records] == ["pass"] * 3, [r["reason"] for r in records]
    assert [(r["workspace"] or {}).get("bytes") for r in records] == [4096, None, 8192]
    # Each asked its size in a runner of its own first, not calibrated; the group's one calibration came after.
    assert records[0]["runner"]["sizing"]["end"] == "exit code 0" and "sizing" not in records[1]["runner"]
    assert "workspace_sizing" in answer["phase_seconds"]
    # Every call of either (a trial's two, two warm-up, ten timed) began with only fresh poison in its workspace.
    seen = fake_runner.WORKSPACE_SEEN
    assert len(seen) == 2 * (2 + 2 + 10) and all(poisoned for _, _, poisoned, _ in seen), seen[:4]


def test_a_kernel_that_keeps_state_in_its_workspace_fails_and_the_others_pass(worker, small):
    records = screen(worker, ["reference", {"mode": "workspace_stale", "workspace_bytes": 1 << 20}],
                     request={"workspaces": [False, True]})["records"]
    assert records[0]["verdict"] == "pass"
    assert records[1]["verdict"] in ("mismatch", "unwritten"), records[1]["reason"]


def test_the_workspace_cap_counts_what_the_others_in_the_group_asked(worker, small):
    # At the test size the cap is the 16 MiB floor: two kernels asking 10 MiB each cannot both have theirs.
    ten = 10 << 20
    records = screen(worker, [{"mode": "reference", "workspace_bytes": ten}, {"mode": "reference", "workspace_bytes": ten},
                              "reference"], request={"workspaces": [True, True, False]})["records"]
    assert records[0]["verdict"] == "pass" and records[0]["workspace"]["bytes"] == ten
    assert records[1]["verdict"] == "load_failed" and records[1]["refused"] and "the cap is" in records[1]["reason"]
    assert records[1]["workspace"] is None and records[2]["verdict"] == "pass"


def test_a_wrong_workspace_hint_costs_a_runner_not_a_verdict(worker, small):
    records = screen(worker, ["reference", "reference"], request={"workspaces": [True, False]})["records"]
    assert [r["verdict"] for r in records] == ["pass", "pass"]
    assert records[0]["workspace"] is None and records[0]["runner"]["sizing"]["end"] == "exit code 0"


def test_a_workspace_size_that_changes_between_loads_fails_the_kernel(worker, small):
    records = screen(worker, [{"mode": "reference", "workspace_bytes": [4096, 8192]}, "reference"],
                     request={"workspaces": [True, False]})["records"]
    assert records[0]["verdict"] == "load_failed" and "4096" in records[0]["reason"]
    assert records[1]["verdict"] == "pass"


@pytest.mark.parametrize("request_fields, words", [
    ({"libraries": ["/one.so"], "fake_runners": [{"mode": "reference"}]}, "2 to"),
    ({"libraries": ["/a.so"] * (screen_group.MAX_CANDIDATES + 1)}, "2 to"),
    ({"generalize": 2}, "generalize must be 0"),
    ({"workspace": True}, "no library, workspace or workspace_bytes"),
    ({"workspace_bytes": 4096}, "no library, workspace or workspace_bytes"),
    ({"workspaces": [True]}, "one per library"),
    ({"workspaces": [1, 0]}, "one per library"),
    ({"fake_runners": [{"mode": "reference"}]}, "one spec per library"),
])
def test_bad_requests_are_refused_with_a_reason(worker, small, request_fields, words):
    with pytest.raises(WorkerError) as err:
        screen(worker, ["reference", "reference"], request=request_fields)
    assert words in str(err.value)


def test_each_runner_maps_its_own_workspace_and_no_other(worker, small, monkeypatch):
    # What each runner's session names as its workspace when it is started (default_link writes the same into the
    # real runner's session file): the sizing runners none, each group runner only its own kernel's.
    mapped = []
    fake_runner.watch_runners(monkeypatch, lambda plan, slot, problem: mapped.append(
        (plan.library, slot.session_refs()["workspace"])))
    records = screen(worker, [{"mode": "reference", "workspace_bytes": 4096}, "reference",
                              {"mode": "reference", "workspace_bytes": 8192}],
                     request={"workspaces": [True, False, True]})["records"]
    assert [r["verdict"] for r in records] == ["pass"] * 3
    sizing, group = mapped[:2], mapped[2:]
    assert [lib for lib, _ in sizing] == ["/nonexistent/k0.so", "/nonexistent/k2.so"]
    assert all(ref is None for _, ref in sizing)
    assert [lib for lib, _ in group] == ["/nonexistent/k0.so", "/nonexistent/k1.so", "/nonexistent/k2.so"]
    first, none, third = (ref for _, ref in group)
    assert first is not None and third is not None and none is None and first != third
