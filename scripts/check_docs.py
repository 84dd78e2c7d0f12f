#!/usr/bin/env python3
"""Checks that keep the paperwork where newcomers expect it (the `docs_layout` test).

* benchmarks/ holds benchmark code and one results file, benchmarks/results.md: no dated file (a
  log's history lives in git) and no second Markdown file beside it;
* every benchmarks/<name>.md a source or doc cites exists (a comment that cites a deleted log sends
  its reader nowhere), and no source cites a dated log by name;
* every attacks/<folder>/<name>.cu (or other file of the attack suite) a source or doc cites exists: the
  attacks moved into a folder per guarantee (issue 37), and a citation of the old place is a dead end;
* ARCHITECTURE.md stays a map, at most 400 lines: details belong in docs/ (docs/internals.md);
* the README's count of this repository's problems with a seed is `cutegen seed --list problems`'s: the
  seed golden record (src/seed/testdata/seed_golden.txt, which the seed_golden test holds to the real
  answers) says how many of problems/ have a kernel, and `scripts/seed_golden.py --update` rewrites the
  README's line with it.

Usage: check_docs.py [REPO_ROOT]. Prints one line per problem and exits 1 if there is any.
"""
import pathlib
import re
import sys

RESULTS_FILE = "benchmarks/results.md"
ARCHITECTURE_MAX_LINES = 400
# Where a citation can sit. examples/cassettes/ is left out: a cassette is a recording of what an
# LLM was sent once, and rewriting it would no longer be that recording.
CITING_ROOTS = ["src", "python", "scripts", "docs", "examples", "library", "attacks", "problems", "prompts",
                "include", "benchmarks", "config", ".ci", "README.md", "ARCHITECTURE.md",
                "CMakeLists.txt"]
SKIPPED_DIRS = {"cassettes", "__pycache__", "testdata"}
TEXT_SUFFIXES = {".md", ".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh", ".in", ".py", ".sh", ".txt",
                 ".json", ".toml", ".cmake", ""}
DATED_NAME = re.compile(r"20\d\d-\d\d-\d\d")
CITED_BENCHMARK = re.compile(r"benchmarks/([A-Za-z0-9_.-]+\.md)")
# A path from the repository root: not the tail of a longer one (src/.../attacks/x.cu).
# rt_write_outside.cu names its old place in the text it writes where the sandbox would let it: that is the
# kernel's output, not a citation, and the suite's kernels are not edited when they move.
ATTACK_CITATION_EXEMPT = {"attacks/sandbox/rt_write_outside.cu"}
CITED_ATTACK_FILE = re.compile(r"(?<![\w/.-])attacks/[A-Za-z0-9_/-]+\.(?:cu|py|md|json)\b")
DATED_LOG = re.compile(r"\b(?:gpu-check|gpu-suite|ci-time)-20\d\d-\d\d-\d\d[a-z0-9-]*\.md")


def benchmark_dir_problems(root):
    problems = []
    for path in sorted((root / "benchmarks").rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if DATED_NAME.search(path.name):
            problems.append(f"{rel}: a dated file under benchmarks/; fold its current numbers into "
                            f"{RESULTS_FILE} and delete it (history lives in git)")
        elif path.suffix == ".md" and rel != RESULTS_FILE:
            problems.append(f"{rel}: a second results file; benchmarks/ keeps one, {RESULTS_FILE} "
                            f"(explanations go in docs/)")
    return problems


def citing_files(root):
    for name in CITING_ROOTS:
        top = root / name
        if top.is_file():
            yield top
        elif top.is_dir():
            for path in top.rglob("*"):
                if (path.is_file() and path.suffix in TEXT_SUFFIXES
                        and not SKIPPED_DIRS.intersection(path.relative_to(root).parts)):
                    yield path


def citation_problems(root):
    problems = []
    for path in sorted(set(citing_files(root))):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        rel = path.relative_to(root).as_posix()
        for number, line in enumerate(text.splitlines(), start=1):
            for match in CITED_BENCHMARK.finditer(line):
                if not (root / "benchmarks" / match.group(1)).is_file():
                    problems.append(f"{rel}:{number}: cites benchmarks/{match.group(1)}, which does "
                                    f"not exist; cite {RESULTS_FILE} or a docs/ page")
            for match in CITED_ATTACK_FILE.finditer("" if rel in ATTACK_CITATION_EXEMPT else line):
                if not (root / match.group(0)).is_file():
                    problems.append(f"{rel}:{number}: cites {match.group(0)}, which does not exist; attacks "
                                    f"live in the folder of their guarantee (attacks/README.md)")
            for match in DATED_LOG.finditer(line):
                problems.append(f"{rel}:{number}: cites the dated log {match.group(0)}; cite "
                                f"{RESULTS_FILE} or a docs/ page")
    return problems


def architecture_problems(root):
    lines = len((root / "ARCHITECTURE.md").read_text(encoding="utf-8").splitlines())
    if lines > ARCHITECTURE_MAX_LINES:
        return [f"ARCHITECTURE.md: {lines} lines, more than {ARCHITECTURE_MAX_LINES}; keep the map, the "
                f"boundaries and the invariants there and move details into docs/ (docs/internals.md)"]
    return []


SEED_GOLDEN = "src/seed/testdata/seed_golden.txt"
README_SEED_COUNT = re.compile(r"`cutegen seed --list problems` finds a seed for (\d+) of this repository's (\d+) problems")


def seed_counts(golden_text):
    """(problems/ files with a seed, problems/ files) in a seed golden record."""
    seeded = total = 0
    for line in golden_text.splitlines():
        fields = line.split("\t")
        if line.startswith("#") or len(fields) != 3 or not re.fullmatch(r"problems/[^/]+\.py", fields[0]):
            continue
        total += 1
        seeded += fields[2] != "-"
    return seeded, total


def readme_seed_line(seeded, total):
    return f"`cutegen seed --list problems` finds a seed for {seeded} of this repository's {total} problems"


def seed_count_problems(root):
    golden, readme = root / SEED_GOLDEN, root / "README.md"
    if not golden.is_file() or not readme.is_file():
        return []
    seeded, total = seed_counts(golden.read_text(encoding="utf-8"))
    match = README_SEED_COUNT.search(readme.read_text(encoding="utf-8"))
    if not match:
        return [f"README.md: no line saying {readme_seed_line(seeded, total)} (scripts/seed_golden.py --update "
                f"writes it)"]
    if (int(match.group(1)), int(match.group(2))) != (seeded, total):
        return [f"README.md: says {match.group(1)} of {match.group(2)} problems have a seed; {SEED_GOLDEN} says "
                f"{seeded} of {total} (scripts/seed_golden.py --update rewrites the line)"]
    return []


def main(argv):
    root = pathlib.Path(argv[1] if len(argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    problems = (benchmark_dir_problems(root) + citation_problems(root) + architecture_problems(root)
                + seed_count_problems(root))
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
