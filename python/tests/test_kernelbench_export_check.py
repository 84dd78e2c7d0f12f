"""scripts/kernelbench-export-check's op-package check (docs/export.md), without a GPU: the commands it runs,
with every subprocess faked, so that paths given relative to the caller's directory reach the check intact."""
import importlib.machinery
import importlib.util
import os
import pathlib
import subprocess
import types

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "scripts", "kernelbench-export-check")


def load():
    loader = importlib.machinery.SourceFileLoader("kernelbench_export_check", SCRIPT)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_package_check_gets_absolute_paths_when_run_from_its_work_directory(tmp_path, monkeypatch):
    check = load()
    calls = []

    def fake_run(cmd, timeout=None, env=None, cwd=None):
        cmd = [str(c) for c in cmd]
        calls.append((cmd, cwd))
        if cmd[1:2] == ["export"]:
            pkg = pathlib.Path(cmd[cmd.index("--out") + 1]) / "cutegen_relu"
            pkg.mkdir(parents=True)
            (pkg / "__init__.py").write_text("")
        stdout = "PACKAGE ok: stand-in\n" if "-c" in cmd else ""
        return subprocess.CompletedProcess(cmd, 0, stdout, "")

    monkeypatch.setattr(check, "run", fake_run)
    monkeypatch.chdir(ROOT)
    args = types.SimpleNamespace(out=str(tmp_path / "out"), cutegen="cutegen")
    line = check.check_package(args, "problems/relu.py=attacks/honest/relu_vec.cu", {})
    assert line == "PACKAGE ok: stand-in"
    export = next(cmd for cmd, _ in calls if cmd[1:2] == ["export"])
    assert export[2:4] == [os.path.join(ROOT, "problems", "relu.py"),
                           os.path.join(ROOT, "attacks", "honest", "relu_vec.cu")]
    package_check, cwd = next((cmd, cwd) for cmd, cwd in calls if "-c" in cmd)
    assert cwd != ROOT and package_check[-2:] == ["cutegen_relu", os.path.join(ROOT, "problems", "relu.py")]
    assert os.path.isfile(package_check[-1])


def test_package_check_without_a_kernel_seeds_one_in_its_work_directory(tmp_path, monkeypatch):
    check = load()
    seen = []

    def fake_run(cmd, timeout=None, env=None, cwd=None):
        cmd = [str(c) for c in cmd]
        seen.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "cutegen: no seed for this graph")

    monkeypatch.setattr(check, "run", fake_run)
    monkeypatch.chdir(ROOT)
    args = types.SimpleNamespace(out=str(tmp_path / "out"), cutegen="cutegen")
    line = check.check_package(args, "problems/relu.py", {})
    assert line == "FAILED: no seed: cutegen: no seed for this graph"
    assert seen[0][1:3] == ["seed", os.path.join(ROOT, "problems", "relu.py")]
    assert seen[0][-1] == str(tmp_path / "out" / "package-relu" / "seed.cu")
