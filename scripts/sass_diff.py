#!/usr/bin/env python3
"""Whether two versions of a kernel file compile to the same SASS, kernel by kernel. No GPU needed.

A refactor of a tuned kernel (a helper factored out, a knob added whose default should change nothing)
can cost time without changing what the kernel computes: nvcc schedules the new form differently. On the
H200, softmax_cluster.cu's first SMC_EARLY_FOLD=0 ran 3.67 ms where the code before the knob ran 3.47,
with the same registers and the same work (benchmarks/results.md). When both versions
compile to the same instructions, the earlier measurements hold for the new file without a GPU run.

Usage:
  scripts/sass_diff.py BEFORE AFTER [-D NAME=VALUE]... [--cutegen build/cutegen] [--cuobjdump PATH]

BEFORE and AFTER: a .cu file, or REV:PATH for the file as git has it at REV
(e.g. HEAD:library/softmax_cluster.cu). -D prepends `#define NAME VALUE` to both (a knob's
value; repeat it). Both are built by `cutegen compile` (its cache makes repeats free), then compared
with `cuobjdump -sass` instruction by instruction, encodings and offsets aside.
Exit status: 0 every kernel identical; 1 some kernel differs or exists in one build only; 2 the
comparison could not be made (one line says why).
"""
import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# scripts/setup unpacks NVIDIA's cuobjdump and nvdisasm wheels here when the toolkit's cuobjdump is not installed.
BUNDLED_CUOBJDUMP = os.path.join(ROOT, "third_party", "cuobjdump", "cuobjdump")


class CompareError(Exception):
    """Why the comparison could not be made: one line for the user."""


def parse_sass(text):
    """cuobjdump -sass output -> {kernel (mangled name): [instruction, ...]} for the last architecture listed.

    An instruction is its text without the `/*0040*/` offset and the trailing `/* 0x... */` encoding, so two
    builds compare by what they execute."""
    kernels = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            current = kernels.setdefault(m.group(1), [])
            current.clear()  # a later architecture's section replaces an earlier one
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", line)
        if m and current is not None:
            current.append(re.sub(r"\s+", " ", m.group(1)))
    return kernels


def compare(before, after):
    """Rows (kernel, verdict, detail) and whether every kernel is identical."""
    rows, same = [], True
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if a is None or b is None:
            rows.append((name, "only in " + ("AFTER" if a is None else "BEFORE"), f"{len(a or b)} instructions"))
            same = False
        elif a == b:
            rows.append((name, "identical", f"{len(a)} instructions"))
        else:
            ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
            changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")
            rows.append((name, "differs", f"{len(a)} -> {len(b)} instructions, {changed} changed"))
            same = False
    return rows, same


def read_source(spec):
    if os.path.isfile(spec):
        with open(spec) as f:
            return f.read()
    if ":" in spec:
        rev, path = spec.split(":", 1)
        done = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{path}"], capture_output=True, text=True)
        if done.returncode != 0:
            raise CompareError(f"{spec}: git show failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'no output'}")
        return done.stdout
    raise CompareError(f"{spec}: no such file (and not REV:PATH)")


def build(spec, defines, cutegen, workdir, label):
    """The shared library `cutegen compile` makes of the file with the defines prepended."""
    source = "".join(f"#define {name} {value}\n" for name, value in defines) + read_source(spec)
    path = os.path.join(workdir, label, os.path.basename(spec.split(":")[-1]) or "kernel.cu")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(source)
    done = subprocess.run([cutegen, "compile", "--json", path], capture_output=True, text=True)
    try:
        outcome = json.loads(done.stdout)
    except json.JSONDecodeError:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise CompareError(f"{spec}: cutegen compile gave no JSON: {last}")
    if outcome.get("verdict") != "ok" or not outcome.get("library"):
        errors = outcome.get("errors") or outcome.get("violations") or []
        first = errors[0] if errors else {"message": outcome.get("feedback", "")}
        where = f"line {first['line']}: " if isinstance(first, dict) and first.get("line") else ""
        what = first.get("message", first) if isinstance(first, dict) else first
        raise CompareError(f"{spec}: does not build ({outcome.get('verdict')}): {where}{str(what)[:300]}")
    return outcome["library"]


def find_cuobjdump(explicit):
    for candidate in (explicit, os.environ.get("CUOBJDUMP"), BUNDLED_CUOBJDUMP, shutil.which("cuobjdump")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise CompareError("no cuobjdump: run scripts/setup (it unpacks one into third_party/cuobjdump), "
                       "set CUOBJDUMP or pass --cuobjdump")


def sass_of(library, cuobjdump):
    # cuobjdump runs nvdisasm, which the wheels put beside it rather than on PATH.
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(cuobjdump)) + os.pathsep + os.environ.get("PATH", ""))
    done = subprocess.run([cuobjdump, "-sass", library], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise CompareError(f"cuobjdump -sass {library}: {done.stderr.strip()[:300]}")
    kernels = parse_sass(done.stdout)
    if not kernels:
        raise CompareError(f"cuobjdump found no kernel code in {library}")
    return kernels


def define(text):
    name, sep, value = text.partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z_]\w*", name) or not value:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=VALUE")
    return name, value


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="BEFORE/AFTER: a .cu file or REV:PATH. Exit 0 identical, 1 differ, 2 error.")
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("-D", dest="defines", type=define, action="append", default=[], metavar="NAME=VALUE",
                    help="#define prepended to both files (repeatable)")
    ap.add_argument("--cutegen", default=os.path.join(ROOT, "build", "cutegen"), help="the cutegen binary")
    ap.add_argument("--cuobjdump", help="cuobjdump to use (default: $CUOBJDUMP, third_party/cuobjdump, PATH)")
    args = ap.parse_args(argv)
    try:
        if not os.access(args.cutegen, os.X_OK):
            raise CompareError(f"{args.cutegen}: not an executable cutegen (run scripts/setup or pass --cutegen)")
        cuobjdump = find_cuobjdump(args.cuobjdump)
        with tempfile.TemporaryDirectory(prefix="sass-diff-") as work:
            print(f"sass-diff: building {args.before} ...", file=sys.stderr)
            before = sass_of(build(args.before, args.defines, args.cutegen, work, "before"), cuobjdump)
            print(f"sass-diff: building {args.after} ...", file=sys.stderr)
            after = sass_of(build(args.after, args.defines, args.cutegen, work, "after"), cuobjdump)
    except CompareError as e:
        print(f"sass-diff: {e}", file=sys.stderr)
        return 2
    rows, same = compare(before, after)
    for name, verdict, detail in rows:
        print(f"{verdict:<15} {detail:<45} {name}")
    print("same SASS" if same else "SASS differs", file=sys.stderr)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
