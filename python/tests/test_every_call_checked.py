"""Issue 34's first two classes, on the CPU with the fake runner (fake_runner.py): every timed call's result
is compared with the reference and nothing tells a kernel which calls are checked in full; every input
kind varies per call within its domain; every output dtype's unwritten elements are caught."""
import torch
import pytest

from conftest import problem_path, write_problem
from cutegen_worker import buffers, candidate_session, inputs
from fake_runner import FakeRunner

ONE_TRIAL = [{"seed": 1, "kind": "problem", "params": "own"}]


def evaluate(worker, path, mode="reference", trials=ONE_TRIAL, warmup=1, runs=8, **fake):
    worker.load(path)
    return worker.call("evaluate_candidate", runner=["cutegen-runner"], library="/nonexistent/kernel.so", trials=trials,
                       warmup=warmup, runs=runs, precision="strict", call_timeout_s=10.0,
                       work_dir="/tmp/cutegen-test-work", fake_runner=dict(mode=mode, **fake))


# ---- 1. every timed call compared, invisibly ------------------------------------------------------------
@pytest.mark.parametrize("wrong", range(8))
def test_a_kernel_wrong_on_a_single_timed_call_is_caught_whichever_call_it_is(worker, small, wrong):
    """Before, a random quarter of the timed calls was compared: a kernel wrong on one call of eight passed
    two times in three. Now each of them is compared."""
    before = 2 * len(ONE_TRIAL) + 1  # the trial's two runs and the warm-up
    result = evaluate(worker, problem_path("relu"), mode="zeros", only=[before + wrong])
    assert result["verdict"] == "mismatch", (result["verdict"], result["reason"])
    assert result["reason"].startswith(f"timed call {wrong} "), result["reason"]
    assert result["audits"]["sampled"] == wrong + 1


# Trial plans under which every timed call takes one path: the screen (a trial of each timed kind; softmax_rows has
# no parameters, so its own are drawn ones too), or the exact check (no trial of a timed kind).
SCREENED_PLAN = [{"seed": 1, "kind": "problem", "params": "own"}, {"seed": 2, "kind": "signed", "params": "random"}]
EXACT_PLAN = [{"seed": 1, "kind": "scaled", "params": "random", "scale": 4.0}]


@pytest.mark.parametrize("plan", ["screened", "exact"])
def test_the_workers_work_between_timed_calls_is_the_same_after_every_call(worker, small, monkeypatch, plan):
    """What the worker does between two timed calls is all a kernel can observe of its checks (the gap on the
    GPU's clock). Per gap: the same number of reference and native forward passes and one copy of the outputs
    of the same size -- whether or not the call before is one of the two checked in full, which are checked
    only after the loop. (Before, the reference ran only after an audited call.)"""
    events, inside = [], []
    real_call = FakeRunner.call

    def call(self, output_set, scalars):
        events.append(("call",))
        inside.append(True)  # what the fake kernel computes itself is not the worker's work
        try:
            return real_call(self, output_set, scalars)
        finally:
            inside.pop()

    real_copy = candidate_session.CandidateSession._copy_outputs

    def copy(self, into):
        events.append(("copy", tuple(t.numel() for t in into), tuple(t.data_ptr() for t in into)))
        return real_copy(self, into)

    monkeypatch.setattr(FakeRunner, "call", call)
    monkeypatch.setattr(candidate_session.CandidateSession, "_copy_outputs", copy)
    worker.load(problem_path("softmax_rows"))
    reference = worker.session.problem.reference
    for name in ("compute", "native"):
        real = getattr(reference, name)
        monkeypatch.setattr(reference, name, lambda *a, _real=real, _name=name, **k:
                            (inside or events.append((_name,))) and None or _real(*a, **k))
    runs = 10
    result = worker.call("evaluate_candidate", runner=["cutegen-runner"], library="/nonexistent/kernel.so",
                         trials=SCREENED_PLAN if plan == "screened" else EXACT_PLAN, warmup=0, runs=runs,
                         precision="strict", call_timeout_s=10.0, work_dir="/tmp/cutegen-test-work",
                         fake_runner={"mode": "reference"})
    assert result["verdict"] == "pass", result["reason"]
    assert result["audits"]["full"] == 2 and result["audits"]["sampled"] == runs
    assert result["audits"].get("screened", 0) == (runs if plan == "screened" else 0), result["audits"]
    calls = [i for i, e in enumerate(events) if e == ("call",)]
    timed = calls[-runs:]
    gaps = [events[a + 1:b] for a, b in zip(timed, timed[1:])]
    shapes = {tuple(e if e[0] != "copy" else e[:2] for e in gap) for gap in gaps}
    assert len(shapes) == 1, shapes  # the same work, in the same order, after every timed call
    (shape,) = shapes
    assert shape.count(("compute",)) == (plan == "exact") and shape.count(("native",)) == 1
    assert sum(e[0] == "copy" for e in shape) == 1
    # The two calls checked in full copied into buffers of their own, the others into one shared buffer.
    after = [events[a + 1:b] for a, b in zip(timed, timed[1:] + [len(events)])]
    targets = [next(e[2] for e in gap if e[0] == "copy") for gap in after]
    assert sorted(targets.count(t) for t in set(targets)) == [1, 1, runs - 2]


def test_the_full_audits_are_of_calls_chosen_at_random(worker, small):
    seen = set()
    for _ in range(8):
        result = evaluate(worker, problem_path("relu"), warmup=0, runs=6)
        assert result["verdict"] == "pass"
        seen.update(c["timed_call"] for c in result["checks"] if "timed_call" in c)
    assert len(seen) >= 4, seen  # not always the same two (6 choose 2 = 15 pairs)


def test_a_kernel_wrong_on_one_call_checked_in_full_is_caught_there(worker, small):
    """A single element wrong on every timed call escapes the 2048 secret positions of most calls; the full
    audits, compared from their private copies after the loop, find it."""
    result = evaluate(worker, problem_path("relu"), mode="perturb", flat_index=12345, delta=1.0, after=3, runs=6)
    assert result["verdict"] == "mismatch", result["reason"]
    check = result["checks"][result["failed_check"]]
    assert "timed_call" in check and check["outputs"][0]["bad_count"] == 1
    if not check.get("sampled"):  # a call's secret positions hold element 12345 about once in 32
        assert check["outputs"][0]["first_bad"][0]["index"] == [12345 // 1024, 12345 % 1024]


# ---- the screen: PyTorch's own result first, the float64 reference where it does not settle a call -----------
# Trials as `cutegen eval` plans them: one with the module's own parameters, then random ones of each timed kind
# (the screen's rel-L2 limit comes from the trials with random parameters, as every timed call has).
SCREEN_TRIALS = [{"seed": 1, "kind": "problem", "params": "own"}, {"seed": 2, "kind": "problem", "params": "random"},
                 {"seed": 3, "kind": "signed", "params": "random"}]
SCREEN_FIRST_TIMED = 2 * len(SCREEN_TRIALS) + 1  # the trials' two runs each, then one warm-up call


def test_calls_well_within_their_bounds_are_settled_by_pytorchs_own_result(worker, small, monkeypatch):
    """The float64 reference is not computed after any timed call of an honest kernel: PyTorch's result in the
    problem's dtype settles each (the float64 forward of a transposed 3-d convolution took ~0.7 s per call on
    an H100). What a call is compared with is still the answer, at every call."""
    inside = []  # the fake kernel computes its answer with the reference too: not the worker's work
    real_call = FakeRunner.call

    def call(self, output_set, scalars):
        inside.append(True)
        try:
            return real_call(self, output_set, scalars)
        finally:
            inside.pop()

    monkeypatch.setattr(FakeRunner, "call", call)
    worker.load(problem_path("softmax_rows"))
    reference = worker.session.problem.reference
    computed = []
    real = reference.compute
    monkeypatch.setattr(reference, "compute", lambda *a, **k: (inside or computed.append(1)) and None or real(*a, **k))
    result = worker.call("evaluate_candidate", runner=["cutegen-runner"], library="/nonexistent/kernel.so",
                         trials=SCREEN_TRIALS, warmup=1, runs=8, precision="strict", call_timeout_s=10.0,
                         work_dir="/tmp/cutegen-test-work", fake_runner={"mode": "reference"})
    assert result["verdict"] == "pass", result["reason"]
    assert result["audits"]["sampled"] == 8 and result["audits"]["screened"] == 8, result["audits"]
    # The trials' three checks and the two full audits; none for the eight timed calls.
    assert len(computed) == len(SCREEN_TRIALS) + 2, len(computed)


def test_without_a_trial_of_random_parameters_every_call_takes_the_exact_check(worker, small):
    """A problem with parameters: its own-parameter trial says nothing of calls with drawn ones."""
    result = evaluate(worker, problem_path("layernorm"), runs=6,
                      trials=[{"seed": 1, "kind": "problem", "params": "own"}])
    assert result["verdict"] == "pass", result["reason"]
    assert result["audits"].get("screened", 0) == 0 and result["audits"]["sampled"] == 6


def test_a_problem_without_parameters_is_screened_after_its_own_parameter_trial(worker, small):
    """ReLU has no parameters, so its one trial (all `--trials 1` plans of problem inputs) is a trial of drawn
    parameters too: its calls of problem inputs are screened; the signed ones, with no trial of their kind, not."""
    result = evaluate(worker, problem_path("relu"), runs=6, trials=[{"seed": 1, "kind": "problem", "params": "own"}])
    assert result["verdict"] == "pass", result["reason"]
    assert result["audits"]["sampled"] == 6 and result["audits"]["screened"] == 3, result["audits"]


def test_a_kernel_near_its_bound_takes_the_exact_check_and_passes(worker, small):
    """0.875e-6 of rel-L2 is over the screen's half (0.75e-6 with the estimate's room) and within the exact
    limit (ReLU is exact in PyTorch, so the strict floor, 1e-6: 1.5e-6 for the estimate at the positions, 1e-6
    for the two calls checked in full): every call falls through to the float64 reference, and passes there."""
    worker.load(problem_path("relu"))
    runs = 6
    result = worker.call("evaluate_candidate", runner=["cutegen-runner"], library="/nonexistent/kernel.so",
                         trials=SCREEN_TRIALS, warmup=1, runs=runs, precision="strict", call_timeout_s=10.0,
                         work_dir="/tmp/cutegen-test-work",
                         fake_runner={"mode": "noisy", "noise": 0.875e-6,
                                      "only": list(range(SCREEN_FIRST_TIMED, SCREEN_FIRST_TIMED + runs))})
    assert result["verdict"] == "pass", result["reason"]
    assert result["audits"]["sampled"] == runs and result["audits"].get("screened", 0) == 0, result["audits"]


def test_a_kernel_beyond_its_bound_on_one_call_fails_there_through_the_exact_check(worker, small):
    worker.load(problem_path("relu"))
    result = worker.call("evaluate_candidate", runner=["cutegen-runner"], library="/nonexistent/kernel.so",
                         trials=SCREEN_TRIALS, warmup=1, runs=6, precision="strict", call_timeout_s=10.0,
                         work_dir="/tmp/cutegen-test-work",
                         fake_runner={"mode": "noisy", "noise": 4e-6, "only": [SCREEN_FIRST_TIMED + 3]})
    assert result["verdict"] == "mismatch", result["reason"]
    assert result["reason"].startswith("timed call 3 "), result["reason"]
    assert result["audits"]["screened"] == 3, result["audits"]


# ---- 2. every output dtype poisoned so an unwritten element is caught ------------------------------------
BOOL_OUTPUT = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x > 0.5
def get_inputs():
    return [torch.rand(64, 512)]
def get_init_inputs():
    return []
"""

UINT8_OUTPUT = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return (x * 255).to(torch.uint8)
def get_inputs():
    return [torch.rand(256, 1024)]
def get_init_inputs():
    return []
"""

INT_OUTPUT = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return (x * 1000).to(torch.DTYPE)
def get_inputs():
    return [torch.rand(64, 512)]
def get_init_inputs():
    return []
"""


def test_a_bool_output_written_only_where_false_is_unwritten(worker, tmp_path):
    """The bool poison used to be 0xFF, which reads as True: a kernel writing only the False elements passed."""
    result = evaluate(worker, write_problem(tmp_path, BOOL_OUTPUT), mode="unwritten_true")
    assert result["verdict"] == "unwritten", result["reason"]


def test_a_bool_output_written_in_full_passes(worker, tmp_path):
    result = evaluate(worker, write_problem(tmp_path, BOOL_OUTPUT), runs=12)
    assert result["verdict"] == "pass", result["reason"]


def test_a_bool_output_unwritten_only_while_timed_is_caught_right_after_the_call(worker, tmp_path):
    result = evaluate(worker, write_problem(tmp_path, BOOL_OUTPUT), mode="unwritten_true", after=3)
    assert result["verdict"] == "unwritten" and "still held the worker's poison" in result["reason"], result["reason"]


def test_an_honest_uint8_output_is_not_taken_for_the_poison(worker, tmp_path):
    """Every byte value is a valid uint8, so a correct output equals the poison's byte at about 1 position in
    256: the check after a call once read those as unwritten. Integers are judged by comparison."""
    result = evaluate(worker, write_problem(tmp_path, UINT8_OUTPUT), runs=12)
    assert result["verdict"] == "pass", result["reason"]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_an_unwritten_integer_output_is_unwritten(worker, tmp_path, dtype):
    result = evaluate(worker, write_problem(tmp_path, INT_OUTPUT.replace("DTYPE", dtype)), mode="none")
    assert result["verdict"] == "unwritten", result["reason"]
    out = result["checks"][result["failed_check"]]["outputs"][0]
    # Where the answer happens to equal a run's poison (1 element in 256 of an 8-bit output), that run is right.
    assert out["unwritten_count"] == out["bad_count"] > 0.98 * out["total"]


@pytest.mark.parametrize("dtype", ["int8", "int32"])
def test_an_integer_output_unwritten_while_timed_is_caught(worker, tmp_path, dtype):
    result = evaluate(worker, write_problem(tmp_path, INT_OUTPUT.replace("DTYPE", dtype)), mode="none", after=3)
    assert result["verdict"] == "unwritten" and result["reason"].startswith("timed call 0 "), result["reason"]


def test_the_two_runs_of_a_trial_are_poisoned_differently_in_every_width():
    """An integer output has no invalid value: an element neither run wrote is caught because the two sets
    hold different poisons there (at most one can equal the answer)."""
    class Arena:
        device = torch.device("cpu")

        def empty(self, shape, dtype):
            return torch.empty(shape, dtype=dtype)

    from cutegen_worker.staging import Slot
    slot = Slot.__new__(Slot)
    slot.outputs = [[torch.empty(4, dtype=torch.int8)], [torch.empty(4, dtype=torch.int8)]]
    slot.output_patterns = [None, None]
    for _ in range(2000):
        slot.poison_outputs(0)
        slot.poison_outputs(1)
        assert slot.output_patterns[0] & 0xFF != slot.output_patterns[1] & 0xFF
        assert not torch.equal(slot.outputs[0][0], slot.outputs[1][0])


@pytest.mark.parametrize("dtype", [torch.bool, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64,
                                   torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_every_output_dtype_is_poisoned_with_its_patterns_bits(dtype):
    import secrets
    for _ in range(200):
        pattern = buffers.output_pattern(secrets.randbits(32))
        t = buffers.poison_(torch.empty(16, dtype=dtype), pattern)
        assert bool(buffers.is_poison(t, pattern).all())
        if dtype == torch.bool:
            assert int(t.view(torch.uint8)[0]) not in (0, 1)  # no bool a kernel writes holds this byte
        elif dtype.is_floating_point:
            assert bool(torch.isnan(t).all())


# ---- 2. every input kind varies per call within its domain -----------------------------------------------
FIXED_INDEX = """
import torch
N = 4096
class Model(torch.nn.Module):
    def forward(self, x, index):
        return x[index]
def get_inputs():
    # The same permutation under every seed: a kernel could keep it, or what it derives from it.
    return [torch.rand(N), torch.arange(N).flip(0)]
def get_init_inputs():
    return []
"""

FIXED_LABELS = """
import torch
import torch.nn.functional as F
class Model(torch.nn.Module):
    def forward(self, logits, targets):
        return F.cross_entropy(logits, targets, reduction="none")
def get_inputs():
    labels = torch.tensor([3, 1, -100, 0, 2, 2, 1, 3] * 32)  # -100: ignore_index
    return [torch.rand(256, 4), labels]
def get_init_inputs():
    return []
"""

KEPT = """
import torch
class Model(torch.nn.Module):
    def forward(self, x, offsets, mask, count, drawn):
        return x.cumsum(0)[offsets[1:] - 1] * mask.sum() * count.sum() + drawn.sum()
def get_inputs():
    return [torch.rand(64), torch.tensor([0, 8, 16, 40, 64]), torch.ones(8, 8).tril().bool(),
            torch.tensor([5, 5, 5]), torch.randint(0, 10, (32,))]
def get_init_inputs():
    return []
"""


def test_a_fixed_index_tensor_is_a_fresh_permutation_every_call(worker, tmp_path):
    loaded = worker.load(write_problem(tmp_path, FIXED_INDEX))
    assert loaded["fixed_inputs"] == [{"name": "index", "varied": "values permuted per call"}]
    source = worker.session.problem.source
    first, second, again = source.generate(11)[1], source.generate(12)[1], source.generate(11)[1]
    assert not torch.equal(first, second)  # varies with the seed
    assert torch.equal(first, again)  # and is a function of it (the check makes it again)
    for index in (first, second):
        assert torch.equal(torch.sort(index).values, torch.arange(4096))  # still a permutation


def test_fixed_labels_stay_among_the_values_the_problem_used(worker, tmp_path):
    worker.load(write_problem(tmp_path, FIXED_LABELS))
    source = worker.session.problem.source
    seen = [source.generate(seed)[1] for seed in range(5)]
    assert len({tuple(s.tolist()) for s in seen}) > 1
    for labels in seen:
        assert set(labels.tolist()) <= {-100, 0, 1, 2, 3}
        assert int((labels == labels[2]).sum()) == 32  # equal stays equal: the ignored positions move together


def test_inputs_whose_order_or_meaning_a_permutation_would_break_are_kept_and_named(worker, tmp_path):
    loaded = worker.load(write_problem(tmp_path, KEPT))
    fixed = {f["name"]: f for f in loaded["fixed_inputs"]}
    assert set(fixed) == {"offsets", "mask", "count"}  # `drawn` varies with the seed by itself
    assert all(f["varied"] == "no" and f["why"] for f in fixed.values())
    source = worker.session.problem.source
    a, b = source.generate(1), source.generate(2)
    assert all(torch.equal(a[i], b[i]) for i in (1, 2, 3)) and not torch.equal(a[4], b[4])


def test_a_kernel_that_caches_a_fixed_index_tensor_fails(worker, tmp_path):
    result = evaluate(worker, write_problem(tmp_path, FIXED_INDEX), mode="cached_ints")
    assert result["verdict"] == "mismatch", result["reason"]


def test_a_gather_that_reads_its_index_every_call_passes(worker, tmp_path):
    result = evaluate(worker, write_problem(tmp_path, FIXED_INDEX), runs=12)
    assert result["verdict"] == "pass", result["reason"]


def test_integer_inputs_drawn_from_the_seed_are_left_to_get_inputs(worker, small):
    loaded = worker.load(problem_path("cross_entropy"))
    assert "fixed_inputs" not in loaded  # torch.randint under each call's seed already varies the targets
    source = worker.session.problem.source
    assert not torch.equal(source.generate(1)[1], source.generate(2)[1])


def test_permute_values_leaves_a_tensor_with_values_it_does_not_know_alone():
    """A small random tensor can come out the same under load's two seeds; mapping a value the permutation was
    not drawn over could leave the problem's domain, so such a call's draw is left as it is."""
    distinct = torch.tensor([0, 1, 2])
    drawn = torch.tensor([2, 7, 1])
    assert torch.equal(inputs.permute_values(drawn, distinct, 5, 0), drawn)
