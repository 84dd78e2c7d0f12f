"""The precision policies are one list on each side of the worker protocol: the C++ enum cutegen
parses options and records with (src/common/evaluation.h/.cpp, Precision and kDefaultPrecision) and
the worker's (cutegen_worker.compare: POLICIES and DEFAULT_PRECISION). A policy added to one side
only is an option the worker refuses or a record cutegen cannot read; a default changed on one side
only judges a kernel under a policy nobody asked for. This test ties them together."""
import os
import re

from conftest import ROOT
from cutegen_worker import compare, timing


def read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def cpp_policies() -> list:
    source = read("src/common/evaluation.cpp")
    words = re.findall(r'case Precision::(\w+): return "(\w+)";', source)
    assert words and all(name == word for name, word in words), words
    enum = re.search(r"enum class Precision \{(.*?)\};", read("src/common/evaluation.h"), re.S).group(1)
    names = [n.strip() for n in enum.split(",") if n.strip()]
    assert names == [w for w, _ in words], (names, words)
    listed = re.search(r"all_precisions\(\) \{\s*static const std::vector<Precision> \w+ = \{(.*?)\};",
                       source, re.S).group(1)
    assert re.findall(r"Precision::(\w+)", listed) == names, listed
    return names


def cpp_default() -> str:
    return re.search(r"kDefaultPrecision = Precision::(\w+);", read("src/common/evaluation.h")).group(1)


def test_cutegen_and_the_worker_know_the_same_policies_in_the_same_order():
    assert list(compare.POLICIES) == cpp_policies()


def test_cutegen_and_the_worker_default_to_the_same_policy():
    assert compare.DEFAULT_PRECISION == cpp_default() == "strict"
    assert timing.Settings().precision == compare.DEFAULT_PRECISION


def test_no_other_cpp_source_spells_a_policy_list_or_the_default():
    # Options, records and baselines take the words from evaluation.h; a literal list or default
    # elsewhere is a second declaration that can drift.
    offenders = []
    for folder, _, files in os.walk(os.path.join(ROOT, "src")):
        for name in files:
            if not name.endswith((".cpp", ".h")) or name.endswith("_test.cpp") or "testdata" in folder:
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, ROOT)
            if rel in ("src/common/evaluation.cpp", "src/common/evaluation.h"):
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if re.search(r'precision\w* = "strict"', text) or re.search(r'IsMember\(\{"strict"', text):
                offenders.append(rel)
    assert not offenders, offenders
