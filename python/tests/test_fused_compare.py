"""The fused comparison (fused_compare.py) against compare.py's eager chunks: the same report on every case of
the table -- NaN and infinities on either side, poison, near-bound values, half-precision outputs, several
blocks and a ragged end, bad elements in late blocks -- and the same magnitude. On the CPU the Triton kernels run
in Triton's interpreter (TRITON_INTERPRET=1); on a GPU the same table runs on the device at a larger size."""
import math
import os

import pytest
import torch

from cutegen_worker import compare, fused_compare
from cutegen_worker.errors import RequestError

triton = pytest.importorskip("triton", reason="Triton is not installed: the fused comparison cannot run")

BLOCK = fused_compare.BLOCK
# The interpreter computes inf - inf with numpy, which warns; the kernel means it (NaN: not finite).
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


@pytest.fixture
def device(monkeypatch):
    """The GPU when there is one, else the CPU under Triton's interpreter (the kernels rebuilt for it)."""
    if torch.cuda.is_available():
        yield torch.device("cuda")
        return
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(fused_compare, "_kernels", None)
    yield torch.device("cpu")
    fused_compare._kernels = None  # never keep interpreted kernels for a later test


def both_engines(monkeypatch, fn):
    monkeypatch.setenv(fused_compare.ENGINE_ENV, "torch")
    eager = fn()
    monkeypatch.setenv(fused_compare.ENGINE_ENV, "fused")
    fused = fn()
    return eager, fused


def assert_same_report(eager: dict, fused: dict):
    assert eager.keys() == fused.keys()
    for key in eager:
        if key == "first_bad":
            assert [b["index"] for b in eager[key]] == [b["index"] for b in fused[key]]
            for a, b in zip(eager[key], fused[key]):
                for side in ("got", "expected"):
                    assert a[side] == b[side] or (math.isnan(a[side]) and math.isnan(b[side]))
        elif isinstance(eager[key], float):
            assert fused[key] == pytest.approx(eager[key], rel=1e-9, abs=1e-300) or \
                (math.isnan(eager[key]) and math.isnan(fused[key])), key
        else:
            assert eager[key] == fused[key], key


def case(name: str, n: int, device, got_dtype=torch.float32, ref_dtype=torch.float64):
    gen = torch.Generator().manual_seed(hash(name) % (2 ** 31))
    ref = torch.randn(n, generator=gen, dtype=torch.float64)
    got = ref + 2e-6 * torch.randn(n, generator=gen, dtype=torch.float64) * ref.abs()
    nan, inf = float("nan"), float("inf")
    if name == "honest":
        pass
    elif name == "nonfinite":  # every pairing of NaN, +-inf and finite values, in a late block too
        for i, (g, r) in enumerate([(nan, 1.0), (nan, nan), (inf, inf), (-inf, inf), (inf, 1.0), (1.0, inf),
                                    (1.0, nan), (-inf, -inf), (nan, inf)]):
            got[7 + 3 * i], ref[7 + 3 * i] = g, r
            got[n - 1 - i], ref[n - 1 - i] = g, r
    elif name == "near_bound":  # just inside and just outside atol*scale + rtol*|ref|
        scale = ref.abs().max().item()
        for i in range(0, n, 97):
            bound = 1e-4 * scale + 1e-4 * abs(ref[i].item())
            got[i] = ref[i] + (0.999 if i % 2 else 1.001) * bound
    elif name == "zeros_in_ref":  # max_rel skips the zero references
        ref[::5] = 0.0
        got[::5] = 1e-9
    elif name == "late_bad":  # the first bad elements lie in the last blocks only
        got[-3 * BLOCK // 2] += 5.0
        got[-1] += 5.0
    elif name == "many_bad":  # more bad elements than the report lists
        got[::301] = -got[::301] + 1.0
    else:
        raise AssertionError(name)
    return got.to(got_dtype).to(device), ref.to(ref_dtype).to(device)


CASES = ["honest", "nonfinite", "near_bound", "zeros_in_ref", "late_bad", "many_bad"]


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("n", [1, BLOCK - 3, 3 * BLOCK + 17])
def test_the_fused_report_is_the_eager_one(monkeypatch, device, name, n):
    if n < 2 * BLOCK and name in ("nonfinite", "late_bad"):
        n = 2 * BLOCK + 5  # these cases need room for their planted elements
    got, ref = case(name, n, device)
    scale = compare.max_abs_finite(ref)
    tol = compare.Tolerance(1e-4, 1e-4, 1e-6, abs_slack=1e-7)
    eager, fused = both_engines(monkeypatch, lambda: compare.compare(got, ref, tol, scale))
    assert_same_report(eager, fused)
    if name != "honest":
        assert not fused["pass"]


@pytest.mark.parametrize("got_dtype,ref_dtype", [(torch.float16, torch.float64), (torch.bfloat16, torch.float32),
                                                 (torch.float32, torch.float32), (torch.float64, torch.float64)])
def test_other_floating_dtypes(monkeypatch, device, got_dtype, ref_dtype):
    got, ref = case("nonfinite", 2 * BLOCK + 9, device, got_dtype, ref_dtype)
    tol = compare.Tolerance(1e-2, 1e-2, 2e-3)
    scale = compare.max_abs_finite(ref)
    eager, fused = both_engines(monkeypatch, lambda: compare.compare(got, ref, tol, scale))
    assert_same_report(eager, fused)


def test_run_to_run_and_the_magnitude(monkeypatch, device):
    first, _ = case("honest", 3 * BLOCK + 1, device)
    second = first.clone()
    second[BLOCK + 3] = float("nan")
    tol = compare.Tolerance(1e-4, 1e-4, 1e-6)
    eager, fused = both_engines(monkeypatch, lambda: compare.run_to_run(first, second, tol, 1.0))
    assert eager == fused == (False, float("inf"))
    _, ref = case("nonfinite", 3 * BLOCK + 1, device)
    eager, fused = both_engines(monkeypatch, lambda: compare.finite_magnitude(ref))
    assert eager[0] == fused[0] and fused[1] == pytest.approx(eager[1], rel=1e-12)


def test_integer_bool_and_cpu_tensors_take_the_eager_way(monkeypatch):
    monkeypatch.setenv(fused_compare.ENGINE_ENV, "fused")
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    x = torch.zeros(8)
    assert fused_compare.engine_for(x, x) == "torch"  # the CPU, without the interpreter
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert fused_compare.engine_for(x, x) == "fused"
    for other in (torch.zeros(8, dtype=torch.int32), torch.zeros(8, dtype=torch.bool), torch.zeros(4, 2).t(),
                  torch.zeros(9), torch.zeros(0)):
        assert fused_compare.engine_for(other, other if other.numel() != 9 else x) == "torch", other
    monkeypatch.setenv(fused_compare.ENGINE_ENV, "torch")
    assert fused_compare.engine_for(x, x) == "torch"


def test_the_default_is_fused_on_a_gpu_and_eager_on_the_cpu(monkeypatch):
    """Unset, the switch means fused; the interpreter still takes CPU tensors only when a test names the engine,
    so the CPU suites' comparisons stay eager (and their records say so)."""
    monkeypatch.delenv(fused_compare.ENGINE_ENV, raising=False)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert fused_compare.engine() == "fused"
    assert fused_compare.engine_on(torch.device("cpu")) == "torch"
    if torch.cuda.is_available():
        assert fused_compare.engine_on(torch.device("cuda")) == "fused"
    monkeypatch.setenv(fused_compare.ENGINE_ENV, "fused")
    assert fused_compare.engine_on(torch.device("cpu")) == "fused"


def test_an_unknown_engine_is_a_request_error(monkeypatch):
    monkeypatch.setenv(fused_compare.ENGINE_ENV, "fast")
    with pytest.raises(RequestError, match="CUTEGEN_COMPARE='fast': expected one of torch, fused"):
        fused_compare.engine()
    assert os.environ[fused_compare.ENGINE_ENV] == "fast"


def test_a_session_under_the_fused_engine_says_so_and_judges_alike(monkeypatch, device, worker, small):
    """The whole evaluation through the fused engine (interpreted on the CPU): an honest kernel passes, a wrong
    one fails with the same verdict and the same bad count as under the eager one."""
    from conftest import problem_path

    def evaluate(mode):
        worker.load(problem_path("relu"))
        return worker.call("evaluate_candidate", runner=["cutegen-runner"], library="/nonexistent/kernel.so",
                           trials=[{"seed": 1, "kind": "problem", "params": "own"}, {"seed": 3, "kind": "signed"}],
                           warmup=1, runs=4, precision="strict", call_timeout_s=10.0,
                           work_dir="/tmp/cutegen-test-work", fake_runner=dict(mode=mode))

    if device.type == "cuda":
        pytest.skip("the in-process worker runs on the CPU here; the GPU suite judges the fused engine on the GPU")
    monkeypatch.setenv(fused_compare.ENGINE_ENV, "fused")
    honest = evaluate("reference")
    assert honest["verdict"] == "pass" and honest["audits"]["compare"] == "fused"
    wrong_fused = evaluate("identity")
    monkeypatch.setenv(fused_compare.ENGINE_ENV, "torch")
    wrong_eager = evaluate("identity")
    assert wrong_fused["verdict"] == wrong_eager["verdict"] == "mismatch"
    fused_check, eager_check = (r["checks"][r["failed_check"]] for r in (wrong_fused, wrong_eager))
    assert [o["bad_count"] for o in fused_check["outputs"]] == [o["bad_count"] for o in eager_check["outputs"]]
    assert fused_check["outputs"][0]["bad_count"] > 0 and fused_check["kind"] == eager_check["kind"] == "signed"


COMPILE_FOR_HOPPER = r'''
import sys
import triton
from triton.backends.compiler import GPUTarget
from cutegen_worker import fused_compare
compare_blocks, magnitude_blocks = fused_compare._build()
target = GPUTarget("cuda", 90, 32)
options = {"num_warps": fused_compare.NUM_WARPS, "enable_fp_fusion": False}
common = {"bounds_ptr": "*fp64", "counts_ptr": "*i64", "floats_ptr": "*fp64", "n": "i64", "BLOCK": "constexpr"}
for got, ref in (("*fp32", "*fp64"), ("*fp32", "*fp32"), ("*fp16", "*fp64"), ("*bf16", "*fp32"), ("*fp64", "*fp64")):
    source = triton.compiler.ASTSource(fn=compare_blocks, signature=dict(common, got_ptr=got, ref_ptr=ref),
                                       constexprs={"BLOCK": fused_compare.BLOCK})
    kernel = triton.compile(source, target=target, options=options)
    assert ".local" not in kernel.asm["ptx"], f"compare_blocks({got}, {ref}) spills to local memory"
source = triton.compiler.ASTSource(fn=magnitude_blocks, signature={"ref_ptr": "*fp64", "out_ptr": "*fp64", "n": "i64",
                                                                   "BLOCK": "constexpr"},
                                   constexprs={"BLOCK": fused_compare.BLOCK})
triton.compile(source, target=target, options=options)
print("compiled for sm_90")
'''


def test_the_kernels_compile_for_hopper_without_a_gpu():
    """Triton's own compiler (its bundled ptxas) builds both kernels for sm_90 on any machine, for every dtype pair
    the judge compares, without spilling to local memory: what the interpreter cannot show. In a process of its own:
    the interpreter's switch is read when Triton is first imported."""
    import subprocess
    import sys

    from conftest import ROOT

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # silences a deprecation note; launches set it per call
    probe = subprocess.run([sys.executable, "-c", "from triton.backends.compiler import GPUTarget; "
                            "import triton.backends.nvidia"], env=env, capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"this Triton has no NVIDIA backend to compile with: {probe.stderr.strip()[-200:]}")
    done = subprocess.run([sys.executable, "-c", COMPILE_FOR_HOPPER], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "compiled for sm_90" in done.stdout
