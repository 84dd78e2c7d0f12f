"""Contract v2's workspace on the worker's side (docs/kernel-contract.md, "Version 2"): the size a
loaded kernel reports is validated against a cap, a second runner gets the buffer, and the buffer is
filled with a fresh NaN pattern before every call -- a kernel that reads what the last call left there
finds the poison. The runner is played by the test hooks' fake (fake_runner.py)."""
import random
import struct

import pytest
import torch

from conftest import SMALL, WorkerError, problem_path
import fake_runner
from cutegen_worker import memory
from cutegen_worker.buffers import is_poison, output_pattern, poison_, workspace_pattern

from test_candidate_session import TRIALS, evaluate, failed_check

ROWS, COLS = 4096 // SMALL, 65536 // SMALL  # relu at the test size
MIB = 1 << 20


@pytest.fixture(autouse=True)
def seen():
    fake_runner.WORKSPACE_SEEN.clear()
    yield fake_runner.WORKSPACE_SEEN
    fake_runner.WORKSPACE_SEEN.clear()


def test_the_pattern_is_nan_in_every_float_width():
    for r in [0, 0xFFFFFFFF] + [random.getrandbits(32) for _ in range(2000)]:
        word = workspace_pattern(r)
        raw = struct.pack("<I", word)
        (f32,) = struct.unpack("<f", raw)
        (f64,) = struct.unpack("<d", raw * 2)
        assert f32 != f32 and f64 != f64, hex(word)
        for half in (raw[:2], raw[2:]):
            t = torch.frombuffer(bytearray(half), dtype=torch.int16)
            assert torch.isnan(t.view(torch.float16)).all() and torch.isnan(t.view(torch.bfloat16)).all(), hex(word)
    assert len({workspace_pattern(random.getrandbits(32)) for _ in range(200)}) > 50  # a fresh pattern per call


# NaNs a kernel computes (CUDA's canonical ones, x86's, fp16's and bf16's), by element width.
COMPUTED_NANS = {8: {0x7FF8000000000000, 0xFFF8000000000000, 0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF},
                 4: {0x7FFFFFFF, 0xFFFFFFFF, 0x7FC00000, 0xFFC00000},
                 2: {0x7FFF, 0xFFFF, 0x7E00, 0xFE00, 0x7FC0, 0xFFC0}}


def test_the_output_poison_is_a_nan_no_kernel_computes():
    for r in [0, 0xFFFFFFFF, 0x3F0, 0xFFFFFC0F] + [random.getrandbits(32) for _ in range(2000)]:
        word = output_pattern(r)
        assert word not in COMPUTED_NANS[4] and word << 32 | word not in COMPUTED_NANS[8], hex(word)
        assert word & 0xFFFF not in COMPUTED_NANS[2], hex(word)  # a 16-bit output holds the low half
        for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
            t = poison_(torch.empty(5, dtype=dtype), word)
            assert torch.isnan(t).all() and is_poison(t, word).all(), (dtype, hex(word))
            assert not is_poison(torch.full((5,), float("nan"), dtype=dtype), word).any(), (dtype, hex(word))
        ints = poison_(torch.empty(5, dtype=torch.int64), word)
        assert is_poison(ints, word).all() and not is_poison(torch.full((5,), -1, dtype=torch.int64), word).any()


def test_a_kernel_that_reads_the_last_calls_workspace_finds_the_poison(worker, small, seen):
    result = evaluate(worker, "relu", mode="workspace_stale", workspace_bytes=4 * ROWS * COLS)
    check = failed_check(result)
    # Its first call is right; the second, on the same inputs, reads poison instead of the kept answer:
    # fmax(NaN, 0) is 0, so the output is a plain mismatch (not the previous answer, not unwritten).
    assert (result["verdict"], check["trial"], check["outputs"][0]["set"]) == ("mismatch", 0, 1), result["reason"]
    assert check["outputs"][0]["unwritten_count"] == 0
    assert [(runner, call) for runner, call, _, _ in seen] == [(1, 0), (1, 1)]  # the sizing runner makes no call
    assert all(poisoned for _, _, poisoned, _ in seen)


def test_an_honest_kernel_with_a_workspace_passes_and_every_call_finds_a_fresh_fill(worker, small, seen):
    result = evaluate(worker, "relu", mode="reference", workspace_bytes=12345)
    assert result["verdict"] == "pass", result["reason"]
    assert result["workspace"]["bytes"] == 12345 and result["workspace"]["cap_bytes"] >= 16 * MIB
    runner = result["runner"]
    assert runner["sizing"]["ready"]["workspace_bytes"] == 12345 and runner["sizing"]["end"] == "exit code 0"
    assert runner["ready"]["workspace_bytes"] == 12345 and runner["end"] == "exit code 0"
    calls = 2 * len(TRIALS) + 2 + 12  # two per trial, warm-up, timed
    assert len(seen) == calls and all(poisoned for _, _, poisoned, _ in seen)
    assert len({pattern for _, _, _, pattern in seen}) > calls // 2  # drawn afresh, not one fill reused


def calibrations(monkeypatch) -> list:
    """Appended to once per runner calibrated."""
    from cutegen_worker import candidate_session
    done, original = [], candidate_session.CandidateSession._calibrate
    monkeypatch.setattr(candidate_session.CandidateSession, "_calibrate", lambda self: done.append(1) or original(self))
    return done


def test_told_of_a_workspace_the_runner_that_only_asks_its_size_is_not_calibrated(worker, small, seen, monkeypatch):
    calibrated = calibrations(monkeypatch)
    result = evaluate(worker, "relu", mode="reference", workspace_bytes=12345, request={"workspace": True})
    assert result["verdict"] == "pass", result["reason"]
    assert len(calibrated) == 1  # the second runner's, the one that times
    runner = result["runner"]
    assert runner["sizing"]["calibrated"] is False and runner["calibrated"] is True
    assert runner["ready"]["workspace_bytes"] == 12345 and result["calibration"]["rounds"] > 0
    assert len(seen) == 2 * len(TRIALS) + 2 + 12  # every call ran in the calibrated runner, each on a fresh fill
    # Untold (a library the judge could not read), both runners are calibrated, as before the hint.
    calibrated.clear()
    result = evaluate(worker, "relu", mode="reference", workspace_bytes=12345)
    assert result["verdict"] == "pass" and len(calibrated) == 2
    assert result["runner"]["sizing"]["calibrated"] is True


def test_a_wrong_hint_still_times_in_a_calibrated_runner(worker, small, seen, monkeypatch):
    # Told of a workspace the kernel does not ask for: the uncalibrated runner that loaded it is replaced.
    calibrated = calibrations(monkeypatch)
    result = evaluate(worker, "relu", mode="reference", request={"workspace": True})
    assert result["verdict"] == "pass", result["reason"]
    assert len(calibrated) == 1 and result["workspace"] is None
    runner = result["runner"]
    assert runner["sizing"]["calibrated"] is False and runner["sizing"]["end"] == "exit code 0"
    assert runner["calibrated"] is True and not seen


def test_a_size_asked_before_gives_one_calibrated_runner_the_workspace_from_the_start(worker, small, seen,
                                                                                    monkeypatch):
    # The chosen candidate of a screening group, judged in full: the group asked its size, so no runner only asks.
    calibrated = calibrations(monkeypatch)
    result = evaluate(worker, "relu", mode="reference", workspace_bytes=12345,
                      request={"workspace": True, "workspace_bytes": 12345})
    assert result["verdict"] == "pass", result["reason"]
    assert result["workspace"]["bytes"] == 12345 and result["workspace"]["sized_before"] is True
    assert "sizing" not in result["runner"] and result["runner"]["ready"]["workspace_bytes"] == 12345
    assert len(calibrated) == 1 and result["calibration"]["rounds"] > 0
    calls = 2 * len(TRIALS) + 2 + 12
    assert [runner for runner, _, _, _ in seen] == [0] * calls  # every call in the first (and only) runner
    assert all(poisoned for _, _, poisoned, _ in seen)


@pytest.mark.parametrize("asked, words", [
    (8192, "asked for 12345 bytes in an earlier session at these shapes and for 8192 bytes now"),
    (None, "asked for 12345 bytes in an earlier session at these shapes and for none now"),
])
def test_a_size_other_than_the_one_asked_before_fails_the_load(worker, small, seen, asked, words):
    result = evaluate(worker, "relu", mode="reference", workspace_bytes=asked, request={"workspace_bytes": 12345})
    assert result["verdict"] == "load_failed" and words in result["reason"], result["reason"]
    assert not seen  # no call ran


def test_a_size_asked_before_is_held_to_this_sessions_cap(worker, small, seen):
    result = evaluate(worker, "relu", mode="reference", workspace_bytes=1 << 40, request={"workspace_bytes": 1 << 40})
    assert result["verdict"] == "load_failed" and "but the cap is 16777216 bytes" in result["reason"], result["reason"]
    assert result["runner"].get("ready") is None and not seen  # refused before any runner loaded the kernel


@pytest.mark.parametrize("value", [0, -1, 1.5, "4096", True])
def test_the_size_asked_before_must_be_a_positive_whole_number(worker, small, value):
    with pytest.raises(WorkerError, match="workspace_bytes must be a positive whole number of bytes"):
        evaluate(worker, "relu", request={"workspace_bytes": value})


# ---- a guess: the size another kernel of the problem asked for (the loop's last candidate) ---------------------
GUESS = {"workspace": True, "workspace_guess_bytes": 12345}


def test_a_guess_the_kernel_confirms_gives_one_calibrated_runner(worker, small, seen, monkeypatch):
    calibrated = calibrations(monkeypatch)
    result = evaluate(worker, "relu", mode="reference", workspace_bytes=12345, request=GUESS)
    assert result["verdict"] == "pass", result["reason"]
    assert result["workspace"]["bytes"] == 12345 and result["workspace"]["guessed"] is True
    assert "sizing" not in result["runner"] and len(calibrated) == 1
    assert [runner for runner, _, _, _ in seen] == [0] * (2 * len(TRIALS) + 2 + 12)
    assert all(poisoned for _, _, poisoned, _ in seen)


def test_a_guess_the_kernel_does_not_confirm_makes_that_runner_the_one_that_asked(worker, small, seen, monkeypatch):
    assert evaluate(worker, "relu", mode="reference")["verdict"] == "pass"
    without = worker.session.held_arenas[-1].bytes  # the slot's buffers alone
    calibrated = calibrations(monkeypatch)
    result = evaluate(worker, "relu", mode="reference", workspace_bytes=8192, request=GUESS)
    assert result["verdict"] == "pass", result["reason"]
    assert result["workspace"] == {"bytes": 8192, "cap_bytes": result["workspace"]["cap_bytes"], "guess_bytes": 12345}
    runner = result["runner"]
    assert runner["sizing"]["calibrated"] is True and runner["sizing"]["end"] == "exit code 0"
    assert runner["ready"]["workspace_bytes"] == 8192 and len(calibrated) == 2
    assert {r for r, _, _, _ in seen} == {1}  # every call in the second runner, on the size it asked
    # The guessed workspace was dropped from the arena before the asked one was added.
    assert worker.session.held_arenas[-1].bytes == without + 8192


def test_a_kernel_asking_for_more_than_the_guess_gets_a_runner_with_what_it_asked(worker, small, seen, monkeypatch):
    # The GPU case that failed before the runner reported a size larger than the mapped guess instead of refusing
    # the load: the library GEMM with its TMA store judged after the same GEMM with its register store.
    calibrated = calibrations(monkeypatch)
    result = evaluate(worker, "relu", mode="reference", workspace_bytes=20000, request=GUESS)
    assert result["verdict"] == "pass", result["reason"]
    assert result["workspace"] == {"bytes": 20000, "cap_bytes": result["workspace"]["cap_bytes"], "guess_bytes": 12345}
    assert result["runner"]["sizing"]["calibrated"] is True and len(calibrated) == 2
    assert {r for r, _, _, _ in seen} == {1}


def test_a_size_that_changes_between_loads_fails_after_a_wrong_guess_too(worker, small, seen):
    result = evaluate(worker, "relu", mode="reference", workspace_bytes=[8192, 4096], request=GUESS)
    assert result["verdict"] == "load_failed", result["reason"]
    assert "asked for 8192 bytes at the first load and 4096 at the second" in result["reason"]
    assert not seen


def test_a_guess_for_a_kernel_that_asks_for_none_still_times_in_a_fresh_runner_without_it(worker, small, seen,
                                                                                        monkeypatch):
    calibrated = calibrations(monkeypatch)
    result = evaluate(worker, "relu", mode="reference", request=GUESS)
    assert result["verdict"] == "pass", result["reason"]
    assert result["workspace"] is None and len(calibrated) == 2
    assert result["runner"]["sizing"]["end"] == "exit code 0" and not seen


def test_a_guess_above_this_sessions_cap_is_not_mapped(worker, small, seen, monkeypatch):
    calibrated = calibrations(monkeypatch)
    result = evaluate(worker, "relu", mode="reference", workspace_bytes=12345,
                      request={"workspace": True, "workspace_guess_bytes": 1 << 40})
    assert result["verdict"] == "pass", result["reason"]
    assert result["workspace"]["bytes"] == 12345 and "guess_bytes" not in result["workspace"]
    assert result["runner"]["sizing"]["calibrated"] is False and len(calibrated) == 1


@pytest.mark.parametrize("request_fields, words", [
    ({"workspace_guess_bytes": 4096}, "workspace_guess_bytes goes with workspace: true and without workspace_bytes"),
    ({"workspace": True, "workspace_bytes": 4096, "workspace_guess_bytes": 4096}, "goes with workspace: true and without"),
    ({"workspace": True, "workspace_guess_bytes": 0}, "workspace_guess_bytes must be a positive whole number"),
    ({"workspace": True, "workspace_guess_bytes": "4096"}, "workspace_guess_bytes must be a positive whole number"),
])
def test_a_guess_is_a_positive_size_beside_the_hint_alone(worker, small, request_fields, words):
    with pytest.raises(WorkerError, match=words):
        evaluate(worker, "relu", request=request_fields)


def test_the_workspace_hint_must_be_a_boolean(worker, small):
    with pytest.raises(WorkerError, match="workspace must be true or false"):
        evaluate(worker, "relu", request={"workspace": "yes"})


def test_nan_from_a_workspace_kernel_is_explained(worker, small):
    """Outputs a workspace kernel left NaN: `unwritten`, but the reason names the workspace's poison
    as a possible source (a kernel that reads scratch it did not write this call)."""
    result = evaluate(worker, "relu", mode="none", workspace_bytes=4096)
    assert result["verdict"] == "unwritten" and "filled with NaN before every call" in result["reason"]
    plain = evaluate(worker, "relu", mode="none")
    assert plain["verdict"] == "unwritten" and "workspace" not in plain["reason"]


def test_a_kernel_without_a_workspace_gets_none_and_one_runner(worker, small, seen):
    result = evaluate(worker, "relu", mode="reference")
    assert result["verdict"] == "pass" and result["workspace"] is None
    assert "sizing" not in result["runner"] and not seen


@pytest.mark.parametrize("size, words", [
    (0, "cutegen_workspace_bytes returned 0"),
    (-5, "workspace size of -5, which is not a number of bytes"),
    ("big", "workspace size of 'big'"),
    (True, "workspace size of True"),
    (1 << 40, "asks for 1099511627776 bytes (1024.0 GiB) of workspace but the cap is 16777216 bytes (16.0 MiB)"),
    ([4096, 8192], "asked for 4096 bytes at the first load and 8192 at the second"),
])
def test_a_size_outside_the_rules_is_a_load_failure_that_says_why(worker, small, size, words):
    result = evaluate(worker, "relu", mode="reference", workspace_bytes=size)
    assert result["verdict"] == "load_failed" and words in result["reason"], result["reason"]


def test_the_cap_is_a_multiple_of_the_problem_and_shrinks_to_the_free_memory(worker, small, monkeypatch):
    meta = worker.load(problem_path("matmul_square"), )
    n = 4096 // SMALL
    io = 3 * n * n * 4
    estimate = meta["memory"]
    assert estimate["workspace_cap_bytes"] == max(16 * MIB, 8 * io)
    cap, why = memory.workspace_cap(estimate, torch.device("cpu"), slot_allocated=True)
    assert cap == estimate["workspace_cap_bytes"] and "8x the problem's input and output bytes" in why
    monkeypatch.setattr(memory, "device_memory", lambda device: (estimate["staged_bytes"] + 5 * MIB, 1 << 40))
    cap, why = memory.workspace_cap(estimate, torch.device("cpu"), slot_allocated=True)
    assert cap == 5 * MIB and "free" in why
    result = evaluate(worker, "matmul_square", mode="reference", workspace_bytes=6 * MIB)
    assert result["verdict"] == "load_failed" and "cap is 5242880 bytes (5.0 MiB) (what is free" in result["reason"]


def test_the_profile_buffers_include_the_workspace_the_evaluation_recorded(worker, small):
    worker.load(problem_path("relu"))
    plain = worker.call("prepare_profile", seed=1)
    assert plain["workspace"] is None
    prepared = worker.call("prepare_profile", seed=1, workspace_bytes=1000)
    ref = prepared["workspace"]
    assert (ref["dtype"], len(ref["shape"]), ref["offset"]) == ("uint8", 1, 0) and ref["nbytes"] >= 1000
    with pytest.raises(WorkerError) as error:
        worker.call("prepare_profile", seed=1, workspace_bytes=1 << 40)
    assert error.value.kind == "request" and "outside 1.." in error.value.message
