"""`cutegen export` end to end on the CPU (ctest export_files; docs/export.md): the files each format
makes, run as far as a machine without a GPU can -- py_compile, imports with torch's build step faked,
the calls the kernel runs on and the ones it refuses or hands to the reference, torch.compile(fullgraph=True)
through the package's op, docs/export.md's examples -- and KernelBench's own static checker on every
KernelBench file when KERNELBENCH_DIR points at a KernelBench checkout (scripts/kernelbench-export-check
runs KernelBench's evaluation on a GPU).

Environment: CUTEGEN (the binary), CUTEGEN_CUTLASS_INCLUDE (the headers the build uses), KERNELBENCH_DIR
(optional).
"""
import importlib.util
import json
import os
import pathlib
import py_compile
import re
import shutil
import subprocess
import sys
import warnings

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUTEGEN = os.environ.get("CUTEGEN", str(ROOT / "build" / "cutegen"))
CUTLASS_INCLUDE = pathlib.Path(os.environ.get("CUTEGEN_CUTLASS_INCLUDE", ROOT / "third_party" / "cutlass" / "include"))
SCALE = "512"  # the test problems at 8 x 128 and the like (CUTEGEN_PROBLEM_SCALE)

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CUTEGEN_PROBLEM_SCALE", SCALE)  # for the worker, and for the problem code in the exports
    monkeypatch.setenv("CUTLASS_DIR", str(CUTLASS_INCLUDE.parent))
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "torch_extensions"))
    monkeypatch.setenv("CUTEGEN_CACHE_DIR", str(tmp_path / "cache"))


def cutegen_export(*args, cwd=None, ok=True):
    r = subprocess.run([CUTEGEN, "export", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def problem(name):
    return ROOT / "problems" / f"{name}.py"


def kernel(name):
    """A kernel of the library, else one of the judge suite's honest kernels."""
    library = ROOT / "library" / f"{name}.cu"
    return library if library.exists() else ROOT / "attacks" / "honest" / f"{name}.cu"


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reference(name):
    return load_module(problem(name), f"reference_{name}")


class FakeExtension:
    """What torch's loader would return: records each run and writes `compute(*args)` into the outputs."""

    def __init__(self, compute):
        self.compute, self.runs = compute, []

    def run(self, args, outputs):
        self.runs.append([tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in args])
        results = self.compute(*args)
        for out, value in zip(outputs, results if isinstance(results, tuple) else (results,)):
            out.copy_(value)


def import_kernelbench(path, monkeypatch, compute, name):
    """Imports a model_new.py with torch.utils.cpp_extension.load faked; returns the module, the loader's
    arguments and the fake extension."""
    import torch.utils.cpp_extension as cpp_extension
    calls = []
    extension = FakeExtension(compute)

    def fake_load(**kwargs):
        calls.append(kwargs)
        return extension

    monkeypatch.setattr(cpp_extension, "load", fake_load)
    module = load_module(path, name)
    assert len(calls) == 1, "the build runs once, on import"
    return module, calls[0], extension


def kernelbench_checker():
    root = os.environ.get("KERNELBENCH_DIR")
    if not root:
        return None
    path = pathlib.Path(root) / "src" / "kernelbench" / "kernel_static_checker.py"
    assert path.is_file(), f"KERNELBENCH_DIR={root} has no src/kernelbench/kernel_static_checker.py"
    return load_module(path, "kernelbench_static_checker")  # alone: the package's __init__ wants LLM clients


def check_with_kernelbench(text):
    checker = kernelbench_checker()
    if checker is None:
        return "skipped: KERNELBENCH_DIR is not set (a KernelBench checkout's root; its src/ is enough)"
    for backend in ("cute", "cuda"):
        assert checker.validate_kernel_static(text, backend=backend, precision="fp32") == (True, [], []), backend
    return "checked"


# ---- the KernelBench file ------------------------------------------------------------------------------

def test_kernelbench_relu_builds_the_inline_sources_and_runs_only_the_verified_call(tmp_path, monkeypatch):
    out = tmp_path / "relu-kb"
    r = cutegen_export(problem("relu"), kernel("relu_vec"), "--out", out)
    assert r.stdout.strip() == str(out / "model_new.py")
    assert "Not verified by this export" in r.stderr  # no record given
    path = out / "model_new.py"
    py_compile.compile(str(path), doraise=True)
    text = path.read_text()
    assert "return torch.relu(x)" not in text  # the reference forward() is left out
    print(check_with_kernelbench(text))

    module, load, extension = import_kernelbench(path, monkeypatch, torch.relu, "kb_relu")
    assert load["name"].startswith("cutegen_relu_")
    sources = {pathlib.Path(s).name: pathlib.Path(s).read_text() for s in load["sources"]}
    assert sources["kernel.cu"] == kernel("relu_vec").read_text()  # the kernel, as judged
    assert "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)" in sources["binding.cpp"]
    include = pathlib.Path(load["extra_include_paths"][0])
    assert (include / "cutegen" / "kernel.h").read_text() == (ROOT / "include" / "cutegen" / "kernel.h").read_text()
    assert load["extra_include_paths"][1] == str(CUTLASS_INCLUDE)
    assert str(tmp_path / "torch_extensions") in load["sources"][0]
    flags = load["extra_cuda_cflags"]
    assert "-gencode=arch=compute_90a,code=sm_90a" in flags and "-std=c++17" in flags and "-O3" in flags
    assert "-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL" in flags and "-U__CUDA_NO_HALF_OPERATORS__" in flags
    assert "-lcuda" in load["extra_ldflags"]

    model = module.ModelNew(*module.get_init_inputs())
    (x,) = module.get_inputs()
    with pytest.raises(ValueError, match="the tensors are on cpu; the kernel runs on CUDA devices only"):
        model(x)
    monkeypatch.setattr(module, "_device_problem", lambda args: "")  # this CPU as the verified GPU
    assert torch.equal(model(x), torch.relu(x))
    assert extension.runs == [[tuple(x.shape)]]
    with pytest.raises(ValueError, match=r"the call \(\(4, 128\) float32\) is not one the kernel was verified for: "
                                         r"\(\(8, 128\) float32\)"):
        model(x[:4])
    with pytest.raises(ValueError, match="verified for"):
        model(x.double())
    assert len(extension.runs) == 1  # never the kernel on an unverified call


def test_kernelbench_layernorm_keeps_the_problems_parameters_and_constructor(tmp_path, monkeypatch):
    out = tmp_path / "ln-kb"
    cutegen_export(problem("layernorm"), kernel("layernorm_affine"), "--out", out)
    text = (out / "model_new.py").read_text()
    print(check_with_kernelbench(text))
    ref = reference("layernorm")
    compute = lambda x, w, b, gain: torch.nn.functional.layer_norm(x, w.shape, w, b) * gain  # noqa: E731
    module, _, extension = import_kernelbench(out / "model_new.py", monkeypatch, compute, "kb_layernorm")
    torch.manual_seed(0)
    expected = ref.Model(*ref.get_init_inputs())
    torch.manual_seed(0)
    model = module.ModelNew(*module.get_init_inputs())
    # KernelBench builds both under one seed and compares outputs: the same parameters, names and values.
    assert list(model.state_dict()) == ["gain", "norm.weight", "norm.bias"]
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), expected.state_dict().values()))
    monkeypatch.setattr(module, "_device_problem", lambda args: "")
    (x,) = module.get_inputs()
    assert torch.allclose(model(x), expected(x))
    # The contract's order: forward()'s arguments, then the parameters, then the buffers.
    assert extension.runs == [[(8, 16), (16,), (16,), (16,)]]
    with pytest.raises(ValueError, match=r"the kernel was made for Model\(\*get_init_inputs\(\)\)"):
        module.ModelNew(32)


def test_kernelbench_scalars_and_tuple_outputs(tmp_path, monkeypatch):
    cutegen_export(problem("scale_add"), kernel("scale_add"), "--out", tmp_path / "sa")
    module, _, extension = import_kernelbench(tmp_path / "sa" / "model_new.py", monkeypatch,
                                              lambda x, y, a: x + a * y, "kb_scale_add")
    monkeypatch.setattr(module, "_device_problem", lambda args: "")
    x, y, alpha = module.get_inputs()
    model = module.ModelNew()
    assert torch.allclose(model(x, y, alpha), x + alpha * y)
    assert extension.runs[-1] == [(8, 128), (8, 128), 0.5]
    with pytest.raises(ValueError, match=r"float 0.25\) is not one the kernel was verified for: .*float 0.5\)"):
        model(x, y, 0.25)  # verified at the problem's value only

    cutegen_export(problem("split_halves"), kernel("split_halves"), "--out", tmp_path / "sh")
    halves = lambda x: (x[:, :32] + x[:, 32:], x[:, :32] - x[:, 32:])  # noqa: E731
    module, _, _ = import_kernelbench(tmp_path / "sh" / "model_new.py", monkeypatch, halves, "kb_split")
    monkeypatch.setattr(module, "_device_problem", lambda args: "")
    (x,) = module.get_inputs()
    lo, hi = module.ModelNew()(x)
    assert torch.equal(lo, halves(x)[0]) and torch.equal(hi, halves(x)[1])


FIVE = ["19_ReLU", "23_Softmax", "47_Sum_reduction_over_a_dimension", "1_Square_matrix_multiplication_", "40_LayerNorm"]


def test_kernelbench_static_checker_takes_every_kernelbench_export(tmp_path, monkeypatch):
    """KernelBench's own checker (read from KERNELBENCH_DIR, never copied here) on the project's examples and,
    when the checkout has its problems, on the seeds of the five KernelBench problems the GPU check runs."""
    checker = kernelbench_checker()
    if checker is None:
        pytest.skip("KERNELBENCH_DIR is not set: it names a KernelBench checkout's root (its src/ is enough), "
                    "whose kernel_static_checker.py this test runs")
    pairs = [(problem(p), kernel(k)) for p, k in [("relu", "relu_vec"), ("layernorm", "layernorm_affine"),
                                                  ("scale_add", "scale_add"), ("split_halves", "split_halves"),
                                                  ("softmax_rows", "softmax_rows"), ("row_sum", "row_sum_two_pass"),
                                                  ("matmul_square", "gemm_sm90_3xtf32")]]
    level1 = pathlib.Path(os.environ["KERNELBENCH_DIR"]) / "KernelBench" / "level1"
    monkeypatch.delenv("CUTEGEN_PROBLEM_SCALE")
    for name in FIVE if level1.is_dir() else []:
        seed = tmp_path / f"{name}.cu"
        r = subprocess.run([CUTEGEN, "seed", level1 / f"{name}.py", "-o", seed], capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr
        pairs.append((level1 / f"{name}.py", seed))
    for i, (prob, kern) in enumerate(pairs):
        out = tmp_path / f"kb{i}"
        cutegen_export(prob, kern, "--out", out)
        text = (out / "model_new.py").read_text()
        for backend in ("cute", "cuda"):
            assert checker.validate_kernel_static(text, backend=backend, precision="fp32") == (True, [], []), \
                (prob.name, backend)


# ---- the package ---------------------------------------------------------------------------------------

STUB = '''"""Test stand-in for the compiled extension: the reference computation, each run recorded."""
import torch

from .reference import Model, get_init_inputs

RUNS = []
_MODEL = Model(*get_init_inputs())


def run(args, outputs):
    RUNS.append([tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in args])
    n = len(args) - len(list(_MODEL.state_dict()))
    names = [n for n, _ in _MODEL.named_parameters()] + [n for n, _ in _MODEL.named_buffers()]
    result = torch.func.functional_call(_MODEL, dict(zip(names, args[n:])), tuple(args[:n]))
    for out, value in zip(outputs, result if isinstance(result, tuple) else (result,)):
        out.copy_(value)
'''


def install_with_stub(package_dir, tmp_path, monkeypatch, module_name):
    """The package as pip would lay it out, with the compiled extension replaced by STUB."""
    site = tmp_path / "site"
    shutil.copytree(package_dir / module_name, site / module_name)
    (site / module_name / "_C.py").write_text(STUB)
    monkeypatch.syspath_prepend(str(site))
    return importlib.import_module(module_name)


def test_package_layernorm_compiles_through_the_op_and_falls_back_once(tmp_path, monkeypatch):
    out = tmp_path / "ln-pkg"
    r = cutegen_export(problem("layernorm"), kernel("layernorm_affine"), "--format", "package", "--out", out)
    for f in out.rglob("*.py"):
        py_compile.compile(str(f), doraise=True)
    assert (out / "cutegen_layernorm" / "csrc" / "kernel.cu").read_text() == kernel("layernorm_affine").read_text()
    assert (out / "cutegen_layernorm" / "reference.py").read_text() == problem("layernorm").read_text()
    assert "pip install --no-build-isolation" in r.stderr
    # setup.py runs as pip would run it (finding the CUTLASS headers), short of compiling.
    name = subprocess.run([sys.executable, "setup.py", "--name"], cwd=out, capture_output=True, text=True, timeout=120)
    assert name.returncode == 0 and name.stdout.strip().splitlines()[-1] == "cutegen-layernorm", name.stderr

    pkg = install_with_stub(out, tmp_path, monkeypatch, "cutegen_layernorm")
    ref = reference("layernorm")
    assert hasattr(torch.ops.cutegen, "layernorm")
    torch.manual_seed(0)
    expected = ref.Model(*ref.get_init_inputs())
    torch.manual_seed(0)
    model = pkg.ModelNew(*pkg.get_init_inputs())
    model.load_state_dict(expected.state_dict())  # a checkpoint of Model loads as it is
    monkeypatch.setattr(pkg, "_device_problem", lambda args: "")  # this CPU as the verified GPU
    (x,) = pkg.get_inputs()
    runs = pkg._EXTENSION.RUNS
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert torch.allclose(model(x), expected(x))
        assert len(runs) == 1
        compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
        assert torch.allclose(compiled(x), expected(x))
        assert len(runs) == 2  # the kernel, inside the compiled graph
        # Another batch size: the reference, eagerly and compiled, with one warning in all.
        assert torch.allclose(model(x[:4]), expected(x[:4]))
        assert torch.allclose(compiled(x[:3]), expected(x[:3]))
        assert torch.allclose(torch.ops.cutegen.layernorm(x[:2], *expected.parameters(), *expected.buffers()),
                              expected(x[:2]))
    assert len(runs) == 2, "the kernel ran on a call it was not verified for"
    messages = [str(w.message) for w in caught if "cutegen.layernorm" in str(w.message)]
    assert messages == ["cutegen.layernorm: the call ((4, 16) float32, (16,) float32, (16,) float32, (16,) float32) "
                        "is not one the kernel was verified for: ((8, 16) float32, (16,) float32, (16,) float32, "
                        "(16,) float32); running the PyTorch reference instead (this warning is shown once)"]
    # Other constructor arguments (a hidden size the kernel was not made for): Model's own forward().
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.manual_seed(1)
        other = pkg.ModelNew(32)
        torch.manual_seed(1)
        other_ref = ref.Model(32)
        wide = torch.rand(4, 32)
        assert torch.equal(other(wide), other_ref(wide))
    assert len(runs) == 2
    assert [str(w.message) for w in caught if "cutegen." in str(w.message)] == [
        "cutegen.layernorm: ModelNew(*(32,), **{}) is not Model(*get_init_inputs()), the model the kernel was made "
        "for; running the PyTorch reference instead (this warning is shown once)"]


def test_package_on_an_unverified_device_or_constructor_uses_the_reference(tmp_path, monkeypatch):
    out = tmp_path / "sa-pkg"
    cutegen_export(problem("scale_add"), kernel("scale_add"), "--format", "package", "--out", out)
    pkg = install_with_stub(out, tmp_path, monkeypatch, "cutegen_scale_add")
    x, y, alpha = pkg.get_inputs()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # The CPU is not the GPU the kernel was verified on: the reference computes it.
        assert torch.allclose(pkg.ModelNew()(x, y, alpha), x + alpha * y)
        compiled = torch.compile(pkg.ModelNew(), fullgraph=True, backend="aot_eager")
        assert torch.allclose(compiled(x, y, alpha), x + alpha * y)
    assert pkg._EXTENSION.RUNS == []
    assert [str(w.message) for w in caught if "cutegen." in str(w.message)] == [
        "cutegen.scale_add: the tensors are on cpu; the kernel runs on CUDA devices only; running the PyTorch "
        "reference instead (this warning is shown once)"]


# ---- run directories, records, the op module, the command line ----------------------------------------------

def relu_facts(rows, cols):
    tensor = {"kind": "tensor", "dtype": "float32", "shape": [rows, cols]}
    return {"name": "relu", "inputs": [dict(tensor, name="x")], "params": [], "outputs": [tensor],
            "init_inputs": [], "gpu": "NVIDIA H200"}


def make_run(run, facts, problem_file):
    """A run directory as `cutegen optimize` leaves it, its kernel.so a plain C library."""
    best = run / "best"
    best.mkdir(parents=True)
    (run / ".cutegen-run").write_text("")
    (run / "config.json").write_text(json.dumps({"arch": "sm_90a"}))
    record = {"verdict": "pass", "precision": "strict", "problem": facts,
              "time": {"median_ms": 0.5432, "iqr_ms": 0.001, "min_ms": 0.54, "max_ms": 0.55, "runs": 100}}
    (best / "eval.json").write_text(json.dumps(record))
    shutil.copy(kernel("relu_vec"), best / "kernel.cu")
    shutil.copy(problem_file, best / "problem.py")
    (run / "k.c").write_text("int cutegen_forward(void) { return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(best / "kernel.so"), str(run / "k.c")], check=True)
    return record


def test_a_run_directory_in_every_format(tmp_path):
    run = tmp_path / "runs" / "relu"
    make_run(run, relu_facts(8, 128), problem("relu"))
    kb = cutegen_export(run, "--out", tmp_path / "kb")
    assert "Verified by the cutegen judge: pass under strict precision, 0.5432 ms median on NVIDIA H200." in kb.stderr
    text = (tmp_path / "kb" / "model_new.py").read_text()
    assert "# Verified by the cutegen judge: pass under strict precision, 0.5432 ms median on NVIDIA H200." in text
    py_compile.compile(str(tmp_path / "kb" / "model_new.py"), doraise=True)
    # best/ itself works too, and the package.
    cutegen_export(run / "best", "--format", "package", "--out", tmp_path / "pkg")
    assert "Verified by the cutegen judge" in (tmp_path / "pkg" / "cutegen_relu" / "__init__.py").read_text()
    op = cutegen_export(run, "--format", "op", "--out", tmp_path / "op")
    assert sorted(p.name for p in (tmp_path / "op").iterdir()) == ["kernel.cu", "kernel.so", "relu_op.py"]
    assert op.stdout.split() == [str(tmp_path / "op" / n) for n in ("relu_op.py", "kernel.cu", "kernel.so")]
    py_compile.compile(str(tmp_path / "op" / "relu_op.py"), doraise=True)
    # A library with code that runs when it is loaded is not handed to the user's process.
    (run / "bad.c").write_text("__attribute__((constructor)) static void f(void) {}\nint cutegen_forward(void) {"
                               " return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(run / "best" / "kernel.so"), str(run / "bad.c")], check=True)
    bad = cutegen_export(run, "--format", "op", "--out", tmp_path / "op2", ok=False)
    assert bad.returncode != 0 and "refusing to export" in bad.stderr
    assert not (tmp_path / "op2" / "kernel.so").exists()


def test_a_judges_record_makes_a_problem_and_kernel_export_verified(tmp_path):
    run = tmp_path / "run"
    record = make_run(run, relu_facts(8, 128), problem("relu"))
    r = cutegen_export(problem("relu"), kernel("relu_vec"), "--eval", run / "best" / "eval.json",
                       "--out", tmp_path / "kb")
    assert "Verified by the cutegen judge: pass" in r.stderr and "note:" not in r.stderr
    other = tmp_path / "other.json"
    other.write_text(json.dumps(dict(record, problem=relu_facts(16, 128))))
    r = cutegen_export(problem("relu"), kernel("relu_vec"), "--eval", other, "--out", tmp_path / "x", ok=False)
    assert r.returncode != 0 and "was recorded for another call" in r.stderr
    failed = tmp_path / "failed.json"
    failed.write_text(json.dumps(dict(record, verdict="mismatch", reason="trial 2 failed")))
    r = cutegen_export(problem("relu"), kernel("relu_vec"), "--eval", failed, "--out", tmp_path / "y", ok=False)
    assert r.returncode != 0 and "did not pass (mismatch: trial 2 failed)" in r.stderr


@pytest.mark.parametrize("args, message", [
    ([], "sources is required"),
    (["--format", "wheel", "x"], "--format: wheel not in"),
    (["problems/relu.py"], "is neither a run directory (with best/) nor a best/ directory"),
    (["problems/relu.py", "attacks/honest/relu_vec.cu", "--out", "problems"], "--out problems is not empty"),
    (["build", "--eval", "problems/relu.py"], "--eval goes with PROBLEM.py KERNEL.cu"),
])
def test_command_line_mistakes_are_one_line_and_fail(args, message):
    r = subprocess.run([CUTEGEN, "export", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
    assert len([line for line in r.stderr.splitlines() if line.startswith("cutegen:")]) <= 1


def test_a_run_without_a_best_kernel(tmp_path):
    (tmp_path / ".cutegen-run").write_text("")
    r = cutegen_export(tmp_path, ok=False)
    assert r.returncode != 0 and "no best/ yet" in r.stderr


# ---- docs/export.md ---------------------------------------------------------------------------------------

def doc_blocks(section):
    text = (ROOT / "docs" / "export.md").read_text()
    part = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w+)\n(.*?)```", part, re.S)


def test_the_docs_examples_are_what_the_export_makes(tmp_path, monkeypatch):
    monkeypatch.delenv("CUTEGEN_PROBLEM_SCALE")  # the docs' problems/relu.py, at its own size
    make_run(tmp_path / "runs" / "relu", relu_facts(4096, 65536), problem("relu"))
    for section in ("Use it in your model", "Submit it to KernelBench"):
        blocks = doc_blocks(section)
        assert [lang for lang, _ in blocks] == ["sh", "python"], section
        for line in blocks[0][1].splitlines():
            words = line.split("#")[0].split()
            if words[:2] == ["cutegen", "export"]:
                cutegen_export(*words[2:], cwd=tmp_path)
            elif words[:3] == ["pip", "install", "--no-build-isolation"]:
                assert (tmp_path / words[3] / "setup.py").is_file() and (tmp_path / words[3] / "pyproject.toml").is_file()
            else:
                assert words[:2] == ["pip", "install"] and words[2].startswith("nvidia-cutlass=="), line
        code = blocks[1][1]
        compile(code, f"docs/export.md ({section})", "exec")
        for path in re.findall(r'open\("([^"]+)"\)', code):
            assert (tmp_path / path).is_file() or (ROOT / path).is_file(), path
    # The model example imports what the package defines.
    pkg = install_with_stub(tmp_path / "relu-op", tmp_path, monkeypatch, "cutegen_relu")
    imported = re.search(r"from (\w+) import (.+)", doc_blocks("Use it in your model")[1][1])
    assert imported.group(1) == "cutegen_relu"
    assert all(hasattr(pkg, name.strip()) for name in imported.group(2).split(","))
    # And KernelBench's checker takes the file the submission example reads, as the comment there says.
    print(check_with_kernelbench((tmp_path / "relu-kb" / "model_new.py").read_text()))


def test_help_names_every_format():
    r = subprocess.run([CUTEGEN, "export", "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    for word in ("kernelbench", "package", "op", "--out", "--eval", "--force", "docs/export.md"):
        assert word in r.stdout, word
