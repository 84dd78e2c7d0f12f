#!/usr/bin/env python3
"""The seed golden test: every problem file of the repository through `cutegen seed`, compared with the
recorded answer (src/seed/testdata/seed_golden.txt), so a change to the seed stage cannot change an existing
seed or refusal by accident (docs/seed.md, "Adding a route").

For each directory holding problem files (found by walking the repository: a .py file with `class Model` and
`def get_inputs`), `cutegen seed --list DIR -o OUT` runs once (one worker per directory); each problem's
record is one line:

    <path from the repository root> TAB <the line --list prints: the seed's description, or why none> TAB
    <sha256 of the generated kernel, 16 hex digits, or ->

  scripts/seed_golden.py --cutegen build/cutegen            # check (exit 1 with a diff of the records)
  scripts/seed_golden.py --cutegen build/cutegen --update   # record the current answers (and the README's count)
  scripts/seed_golden.py --cutegen build/cutegen --dump DIR # also keep every kernel, DIR/<dir>/<problem>.cu
  scripts/seed_golden.py --cutegen build/cutegen --per-file # `cutegen seed FILE` per problem (slow: a worker each)
  scripts/seed_golden.py --cutegen build/cutegen --dir PATH --golden FILE  # another corpus (KernelBench)

A changed hash says which kernel changed; to see how, dump the kernels of two builds and diff them:
  scripts/seed_golden.py --cutegen OLD/cutegen --dump /tmp/old; scripts/seed_golden.py --cutegen build/cutegen
  --dump /tmp/new; diff -r /tmp/old /tmp/new
"""
import argparse
import difflib
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import check_docs  # beside this script: the README's seed count is one of its checks

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "src/seed/testdata/seed_golden.txt"
# Not problem files: build trees, third-party code, the worker and its tests (their problems are strings).
SKIP_DIRS = {".git", "third_party", "python", "node_modules", ".deps"}
HEADER = """\
# The seed golden record: scripts/seed_golden.py (its docstring says how to check, update and diff).
# path<TAB>what `cutegen seed --list` says<TAB>sha256 of the kernel (16 hex digits) or -
"""


def is_problem(path: Path) -> bool:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return False
    # Defined at the top level, as KernelBench's format has them (a script that only mentions them, like
    # this one, is not a problem).
    return bool(re.search(r"^class Model\b", text, re.M) and re.search(r"^def get_inputs\b", text, re.M))


def problem_dirs(roots):
    dirs = set()
    for root in roots:
        for here, subdirs, files in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs if d not in SKIP_DIRS and not d.startswith("build")
                                and not d.startswith("."))
            if any(f.endswith(".py") and is_problem(Path(here) / f) for f in files):
                dirs.add(Path(here))
    return sorted(dirs)


def display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else "-"


def records_by_list(cutegen, directory: Path, dump: Path | None):
    with tempfile.TemporaryDirectory(prefix="seed-golden-") as tmp:
        out = dump / display(directory).replace("/", "_") if dump else Path(tmp)
        proc = subprocess.run([cutegen, "seed", "--list", str(directory), "-o", str(out)], capture_output=True,
                              text=True, timeout=1800)
        if proc.returncode != 0:
            sys.exit(f"seed_golden: cutegen seed --list {directory} exited {proc.returncode}:\n{proc.stderr}")
        records = []
        for line in proc.stdout.splitlines():
            m = re.match(r"^(.+?\.py): (.*)$", line)
            if not m:
                continue  # the closing count
            name, said = m.groups()
            kernel = out / (name[:-3] + ".cu")
            said = said.replace(str(ROOT) + "/", "")  # messages name files by absolute path: record them from the root
            records.append(f"{display(directory / name)}\t{said}\t{digest(kernel)}")
        return records


def records_per_file(cutegen, directory: Path):
    records = []
    for path in sorted(p for p in directory.glob("*.py") if is_problem(p)):
        proc = subprocess.run([cutegen, "seed", str(path)], capture_output=True, timeout=600)
        err = proc.stderr.decode(errors="replace").strip()
        if proc.returncode == 0:
            said = err.removeprefix("seed: ")
            kernel = hashlib.sha256(proc.stdout).hexdigest()[:16]
        else:
            message = err.removeprefix("cutegen: ")
            said = message if message.startswith("no seed for this operator graph") else "error: " + message
            kernel = "-"
        said = said.replace(str(ROOT) + "/", "")
        records.append(f"{display(path)}\t{said}\t{kernel}")
    return records


def update_readme_count(golden_text: str) -> None:
    """Writes the repository record's count into README.md's line (check_docs.py holds the two together)."""
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    line = check_docs.readme_seed_line(*check_docs.seed_counts(golden_text))
    new, n = check_docs.README_SEED_COUNT.subn(line, text)
    if n != 1:
        sys.exit(f"seed_golden: README.md has {n} lines like {line!r}; it should have one")
    if new != text:
        readme.write_text(new, encoding="utf-8")
        print(f"seed_golden: README.md now says {line}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cutegen", required=True, help="the cutegen binary")
    ap.add_argument("--golden", type=Path, default=GOLDEN, help="the record to check or write")
    ap.add_argument("--dir", type=Path, action="append", help="problem directories (default: the repository's)")
    ap.add_argument("--update", action="store_true", help="write the record instead of checking it")
    ap.add_argument("--dump", type=Path, help="keep every generated kernel under this directory")
    ap.add_argument("--per-file", action="store_true", help="run `cutegen seed FILE` for each problem")
    args = ap.parse_args()
    dirs = [d.resolve() for d in args.dir] if args.dir else problem_dirs([ROOT])
    if not dirs:
        sys.exit("seed_golden: no problem files found")
    records = []
    for d in dirs:
        records += records_per_file(args.cutegen, d) if args.per_file else records_by_list(args.cutegen, d, args.dump)
    text = HEADER + "".join(r + "\n" for r in records)
    if args.update:
        args.golden.write_text(text)
        print(f"seed_golden: wrote {len(records)} records to {display(args.golden)}")
        if args.golden.resolve() == GOLDEN and not args.dir:
            update_readme_count(text)
        return 0
    expected = args.golden.read_text() if args.golden.exists() else ""
    if text == expected:
        print(f"seed_golden: {len(records)} problems give the recorded seeds and refusals")
        return 0
    sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                               str(args.golden), "now"))
    print("seed_golden: the seeds differ from the record (above). If the change is meant, run with --update and "
          "say why in the commit; --dump shows the kernels (see this script's docstring).")
    return 1


if __name__ == "__main__":
    sys.exit(main())
