"""Baseline timing on the CPU path (host clock): statistics, the cache and its key, compile failures
as values, pristine inputs. The CUDA clock is exercised in test_gpu.py."""
import json
import os
import time

import pytest
import torch

from conftest import WorkerError, problem_path
from cutegen_worker import timing

STAT_KEYS = {"median_ms", "min_ms", "max_ms", "iqr_ms", "runs"}


@pytest.fixture
def relu(worker, small):
    worker.load(problem_path("relu"))
    return worker


def baselines(worker, tmp_path, modes=("eager",), **fields):
    return worker.call("time_baselines", modes=list(modes), warmup_ms=1, runs=fields.pop("runs", 5),
                       cache_dir=str(tmp_path / "cache"), sets=fields.pop("sets", 3), seed=5, **fields)


def test_eager_statistics(relu, tmp_path):
    result = baselines(relu, tmp_path)
    assert set(result) == {"eager", "cached", "device", "clock", "seconds"} and result["cached"] is False
    # CPU times are labelled as such: wall clock, for tests and smoke runs.
    assert (result["device"], result["clock"]) == ("cpu", "wall")
    stats = result["eager"]
    assert set(stats) == STAT_KEYS and stats["runs"] == 5
    assert 0 < stats["min_ms"] <= stats["median_ms"] <= stats["max_ms"]


def test_results_are_cached_in_a_json_file_with_their_key(relu, tmp_path):
    first = baselines(relu, tmp_path)
    second = baselines(relu, tmp_path)
    assert second["cached"] is True and second["eager"] == first["eager"]
    (name,) = os.listdir(tmp_path / "cache")
    entry = json.loads((tmp_path / "cache" / name).read_text())
    key = entry["key"]
    assert key["problem_sha256"] == relu.session.problem.file_sha256
    assert (key["gpu"], key["torch"], key["mode"], key["precision"]) == ("cpu", torch.__version__, "eager", "strict")
    assert (key["warmup_ms"], key["runs"], key["timing_sets"]) == (1.0, 5, 3)
    assert entry["result"] == first["eager"]


def test_baselines_served_from_the_cache_draw_no_inputs(relu, tmp_path, monkeypatch):
    """Every passing evaluation asks for the baselines; at KernelBench sizes drawing the timing sets
    was 0.4 s of a step whose baselines all came from the cache."""
    source = relu.session.problem.source
    draws = []
    real = source.generate

    def counted(seed):
        draws.append(seed)
        return real(seed)

    monkeypatch.setattr(source, "generate", counted)
    assert baselines(relu, tmp_path)["cached"] is False
    assert sorted(draws) == [5, 6, 7]  # the three timing sets, drawn for the measurement
    draws.clear()
    assert baselines(relu, tmp_path)["cached"] is True
    assert draws == []
    # One mode cached, one not: the sets are drawn once, for the one measured.
    assert baselines(relu, tmp_path, modes=("eager", "compile"))["cached"] is False
    assert sorted(draws) == [5, 6, 7]


def test_the_key_changes_with_what_the_measurement_depends_on(relu, tmp_path):
    baselines(relu, tmp_path)
    assert baselines(relu, tmp_path, runs=6)["cached"] is False
    assert baselines(relu, tmp_path, precision="tf32")["cached"] is False
    assert len(os.listdir(tmp_path / "cache")) == 3


def test_times_measured_the_old_way_are_not_served(relu, tmp_path, monkeypatch):
    # Version 1 and 2 entries came from bench lanes that loaded problems (1) or built torch.compile (2)
    # beside the timing.
    from cutegen_worker import timing
    monkeypatch.setattr(timing, "_CACHE_VERSION", 2)
    baselines(relu, tmp_path)
    monkeypatch.undo()
    assert timing._CACHE_VERSION >= 3
    assert baselines(relu, tmp_path)["cached"] is False


def test_other_sizes_of_the_same_file_are_not_served_from_the_cache(worker, small, tmp_path):
    worker.load(problem_path("relu"))
    baselines(worker, tmp_path)
    small(32)  # same file, constants read from the environment: other shapes
    worker.load(problem_path("relu"))
    assert baselines(worker, tmp_path)["cached"] is False


def test_a_compile_failure_is_a_value_and_is_cached(relu, tmp_path, monkeypatch):
    calls = []

    def broken_compile(model, **kwargs):
        calls.append(1)
        raise RuntimeError("inductor: no C++ compiler\nsecond line")

    monkeypatch.setattr(torch, "compile", broken_compile)
    result = baselines(relu, tmp_path, modes=("eager", "compile"))
    assert result["compile"] == {"error": "RuntimeError: inductor: no C++ compiler second line"}
    assert set(result["eager"]) == STAT_KEYS
    again = baselines(relu, tmp_path, modes=("eager", "compile"))
    assert again["cached"] is True and again["compile"] == result["compile"] and len(calls) == 1


def test_what_measuring_each_mode_cost_is_in_the_answer_unless_cached(relu, tmp_path, monkeypatch):
    """`seconds`: wall time per mode measured now; the compile mode's includes torch.compile's compile, which
    `cutegen bench` pays holding the GPU. A cached answer measured nothing and has none."""
    def slow_compile(model, **kwargs):
        time.sleep(0.2)
        return lambda *args: model(*args)

    monkeypatch.setattr(torch, "compile", slow_compile)
    result = baselines(relu, tmp_path, modes=("eager", "compile"))
    assert set(result["seconds"]) == {"eager", "compile"}
    assert result["seconds"]["compile"] >= 0.2 and 0 < result["seconds"]["eager"] < result["seconds"]["compile"]
    again = baselines(relu, tmp_path, modes=("eager", "compile"))
    assert again["cached"] is True and "seconds" not in again


def test_an_out_of_memory_failure_is_not_cached(relu, tmp_path, monkeypatch):
    def oom(model, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory")

    monkeypatch.setattr(torch, "compile", oom)
    assert "OutOfMemoryError" in baselines(relu, tmp_path, modes=("compile",))["compile"]["error"]
    assert not os.path.exists(tmp_path / "cache") or os.listdir(tmp_path / "cache") == []


def test_compiled_model_is_timed_after_compiling(relu, tmp_path, monkeypatch):
    seen = []

    def fake_compile(model, **kwargs):
        def run(*args):
            seen.append(args[0].data_ptr())
            return model(*args)
        return run

    monkeypatch.setattr(torch, "compile", fake_compile)
    result = baselines(relu, tmp_path, modes=("compile",), runs=6)
    assert result["compile"]["runs"] == 6
    # Inputs rotate among the three timing sets.
    assert len(set(seen)) == 3


def test_prepare_compiles_once_and_time_baselines_uses_it(relu, tmp_path, monkeypatch):
    """bench compiles before it takes the GPU's lock: prepare_baselines compiles, the next
    time_baselines times that compiled model and compiles nothing more."""
    compiles = []

    def fake_compile(model, **kwargs):
        compiles.append(model)
        return lambda *args: model(*args)

    monkeypatch.setattr(torch, "compile", fake_compile)
    fields = dict(modes=["eager", "compile"], warmup_ms=1, runs=4, cache_dir=str(tmp_path / "cache"), sets=2, seed=5)
    assert relu.call("prepare_baselines", **fields) == {"compiled": True}
    assert len(compiles) == 1
    result = relu.call("time_baselines", **fields)
    assert result["compile"]["runs"] == 4 and len(compiles) == 1
    # Used once: the next uncached measurement compiles again (and a cached one compiles nothing).
    assert relu.call("prepare_baselines", **fields) == {"compiled": False, "reason": "cached"}
    assert relu.call("time_baselines", **dict(fields, runs=5))["compile"]["runs"] == 5
    assert len(compiles) == 2


def test_prepare_reports_a_compile_failure_and_time_baselines_returns_it(relu, tmp_path, monkeypatch):
    def broken_compile(model, **kwargs):
        raise RuntimeError("inductor: no C++ compiler")

    monkeypatch.setattr(torch, "compile", broken_compile)
    fields = dict(modes=["compile"], warmup_ms=1, runs=3, cache_dir=str(tmp_path / "cache"), sets=2, seed=5)
    assert relu.call("prepare_baselines", **fields) == {"compiled": False,
                                                        "error": "RuntimeError: inductor: no C++ compiler"}
    assert relu.call("time_baselines", **fields)["compile"] == {"error": "RuntimeError: inductor: no C++ compiler"}
    assert relu.call("prepare_baselines", **dict(fields, modes=["eager"])) == {"compiled": False,
                                                                               "reason": "not asked for"}


def test_a_prepared_compile_of_another_precision_is_not_used(relu, tmp_path, monkeypatch):
    compiles = []

    def fake_compile(model, **kwargs):
        compiles.append(torch.get_float32_matmul_precision())
        return lambda *args: model(*args)

    monkeypatch.setattr(torch, "compile", fake_compile)
    fields = dict(modes=["compile"], warmup_ms=1, runs=3, cache_dir=str(tmp_path / "cache"), sets=2, seed=5)
    relu.call("prepare_baselines", **fields)
    relu.call("time_baselines", **dict(fields, precision="tf32"))
    assert compiles == ["highest", "high"]
    assert torch.get_float32_matmul_precision() == "highest"


def test_baselines_run_on_the_problems_own_inputs_and_parameters(relu, tmp_path, monkeypatch):
    """The baselines draw their own inputs from get_inputs(): nothing a candidate touched."""
    seen = []
    real = timing.measure

    def spy(fn, input_sets, settings, clock):
        seen.extend(s[0].clone() for s in input_sets)
        return real(fn, input_sets, settings, clock)

    monkeypatch.setattr(timing, "measure", spy)
    baselines(relu, tmp_path)
    source = relu.session.problem.source
    assert [torch.equal(x, source.generate(5 + i)[0]) for i, x in enumerate(seen)] == [True] * 3


def test_tf32_is_off_again_after_timing(relu, tmp_path):
    baselines(relu, tmp_path, precision="tf32")
    assert torch.backends.cuda.matmul.allow_tf32 is False
    assert torch.get_float32_matmul_precision() == "highest"


def test_bad_requests(worker, small, tmp_path):
    with pytest.raises(WorkerError) as nothing_loaded:
        baselines(worker, tmp_path)
    assert nothing_loaded.value.kind == "request"
    worker.load(problem_path("relu"))
    for fields in ({"modes": ["jit"]}, {"runs": 0}, {"precision": "fp8"}, {"sets": 0}, {"device": "tpu"}):
        with pytest.raises(WorkerError) as error:
            worker.call("time_baselines", **fields)
        assert error.value.kind == "request"


def test_clock_sequence_flushes_before_every_timed_call():
    clock = timing.HostClock(flush_bytes=1024)
    fills = []
    clock.flush_buffer = FlushSpy(fills)
    result = timing.measure(lambda x: x + 1, [(torch.ones(3),)], timing.Settings(warmup_ms=0, runs=4), clock)
    assert result["runs"] == 4 and fills == [0, 1, 2, 3]


class FlushSpy:
    def __init__(self, fills):
        self.fills = fills

    def fill_(self, value):
        self.fills.append(value)


def test_the_device_asked_for_must_be_the_one_the_problem_is_loaded_on(relu, tmp_path):
    assert baselines(relu, tmp_path, device="cpu")["device"] == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(WorkerError) as no_gpu:
            baselines(relu, tmp_path, device="cuda")
        assert no_gpu.value.kind == "problem" and "no usable GPU" in str(no_gpu.value)
