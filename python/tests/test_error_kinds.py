"""The kinds of failure that cross between cutegen and the worker are declared once, in C++, and the
worker's copies are tied to them here:

* the protocol's error kinds (`kind` of an error answer): WorkerErrorKind (src/run/worker_errors.h/.cpp)
  and cutegen_worker.errors.KINDS. A kind only the worker knows reaches cutegen as a mismatch, not as
  the problem's fault or the machine's load; one only cutegen knows is never answered.
* the kernel contract's return codes (include/cutegen/kernel.h, CUTEGEN_ERROR_*) and the names the
  worker reports a failing call with (candidate_session.CUTEGEN_ERROR_NAMES), where a code it does not
  know would not count as the kernel refusing the shapes it was given (generalize.py)."""
import importlib
import inspect
import os
import pkgutil
import re

import cutegen_worker
from conftest import ROOT
from cutegen_worker import candidate_session, errors


def read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def cpp_kinds() -> list:
    source = read("src/run/worker_errors.cpp")
    words = re.findall(r'case WorkerErrorKind::(\w+): return "(\w+)";', source)
    assert words and all(name == word for name, word in words), words
    enum = re.search(r"enum class WorkerErrorKind \{(.*?)\};", read("src/run/worker_errors.h"), re.S).group(1)
    names = re.findall(r"^\s*(\w+),", enum, re.M)
    assert names == [w for w, _ in words], (names, words)
    listed = re.search(r"all_worker_error_kinds\(\) \{\s*static const std::vector<WorkerErrorKind> \w+ = \{(.*?)\};",
                       source, re.S).group(1)
    assert re.findall(r"WorkerErrorKind::(\w+)", listed) == names, listed
    return names


def worker_error_classes() -> list:
    for module in pkgutil.iter_modules(cutegen_worker.__path__):
        if module.name != "__main__":
            importlib.import_module(f"cutegen_worker.{module.name}")
    found, todo = [], [errors.WorkerError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return [cls for cls in found if cls.__module__.startswith("cutegen_worker")]


def test_cutegen_and_the_worker_know_the_same_error_kinds_in_the_same_order():
    assert list(errors.KINDS) == cpp_kinds()


def test_every_error_the_worker_raises_has_a_declared_kind():
    classes = worker_error_classes()
    assert len(classes) >= 6, classes  # WorkerError, ProblemError, RequestError, BusyError and the busy/state ones
    for cls in classes:
        assert cls.kind in errors.KINDS, (cls, cls.kind)
    busy = {cls.__name__ for cls in classes if cls.kind == errors.BUSY}
    assert {"CpuBusy", "GpuMemoryBusy"} <= busy, busy


def test_no_worker_module_spells_a_kind_of_its_own():
    # A kind written as a string outside errors.py is a second declaration that can drift.
    offenders = []
    folder = os.path.dirname(inspect.getfile(errors))
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".py") or name == "errors.py":
            continue
        text = read(os.path.join(folder, name))
        for line in text.splitlines():
            if re.search(r'\bkind = "\w+"', line) or re.search(r'error_response\([^,]+, "', line):
                offenders.append(f"{name}: {line.strip()}")
    assert not offenders, offenders


def test_the_protocol_page_lists_the_kinds():
    protocol = read("docs/worker-protocol.md")
    sentence = re.search(r"`kind` is (.*?)\.\s", protocol, re.S).group(1)
    assert re.findall(r"`(\w+)` \(", sentence) == cpp_kinds(), sentence


def test_the_contracts_return_codes_are_the_workers():
    codes = {int(code): f"CUTEGEN_ERROR_{name}"
             for name, code in re.findall(r"#define CUTEGEN_ERROR_(\w+) (\d+)", read("include/cutegen/kernel.h"))}
    assert codes, "include/cutegen/kernel.h defines no CUTEGEN_ERROR_*"
    assert candidate_session.CUTEGEN_ERROR_NAMES == codes
