"""The judge's verdicts are a closed list kept in several places: the worker's (candidate_session.VERDICTS),
the C++ enum cutegen parses records with (src/common/evaluation.cpp), the attack manifest's checker
(attacks/check_manifest.py), and the pages that tell users and the LLM what each means. A verdict added
to one and not the others is a record cutegen refuses, a manifest entry that cannot be written, or a
failure the prompts cannot describe: this test ties them together."""
import importlib.util
import os
import re

from conftest import ROOT
from cutegen_worker import candidate_session

COMPILE_STAGE = {"compile_error", "rejected"}  # given by cutegen's compile stage, never by the worker


def read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def cpp_verdicts() -> set:
    source = read("src/common/evaluation.cpp")
    words = set(re.findall(r'case Verdict::(\w+): return "(\w+)";', source))
    assert words and all(name == word for name, word in words), words
    enum = re.search(r"enum class Verdict \{(.*?)\};", read("src/common/evaluation.h"), re.S).group(1)
    ordered = re.findall(r"\b([a-z_]+),", re.sub(r"//[^\n]*", "", enum))
    names = set(ordered)
    assert names == {w for w, _ in words}, names ^ {w for w, _ in words}
    # Loops over every verdict run up to kLastVerdict (evaluation.cpp's parse_verdict among them): a verdict
    # added after it would never parse.
    last = re.search(r"kLastVerdict = Verdict::(\w+);", read("src/common/evaluation.h")).group(1)
    assert last == ordered[-1], f"kLastVerdict is {last}, the enum ends with {ordered[-1]}"
    return names


def manifest_verdicts() -> set:
    spec = importlib.util.spec_from_file_location("check_manifest", os.path.join(ROOT, "attacks", "check_manifest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return set(module.VERDICTS)


def test_the_worker_cutegen_and_the_manifest_know_the_same_verdicts():
    worker = set(candidate_session.VERDICTS)
    assert not worker & COMPILE_STAGE
    assert worker | COMPILE_STAGE == cpp_verdicts()
    assert manifest_verdicts() == cpp_verdicts()


def test_every_verdict_is_documented_where_it_is_read():
    protocol = read("docs/worker-protocol.md")
    listed = re.search(r"\* `verdict`: (.*?);", protocol, re.S).group(1)
    assert set(re.findall(r"`(\w+)`", listed)) == set(candidate_session.VERDICTS)
    readme = read("attacks/README.md")
    expect_row = next(line for line in readme.splitlines() if line.startswith("| `expect` |"))
    assert cpp_verdicts() <= set(re.findall(r"`(\w+)`", expect_row))
    # What the LLM is told each failing verdict means (bold, alone or in a group: **crash / cuda_error ...**).
    bold = " ".join(re.findall(r"\*\*([^*]+)\*\*", read("prompts/debug_guide.md")))
    missing = [v for v in cpp_verdicts() - {"pass"} if not re.search(rf"\b{v}\b", bold)]
    assert not missing, f"prompts/debug_guide.md does not explain {missing}"
