#!/usr/bin/env python3
"""Checks attacks/manifest.json without a GPU.

Always: the manifest's shape (known fields, verdicts from the judge's closed set, files that exist,
`static` only with `rejected`, `min_ms` only with `pass`, one entry per attack kernel under attacks/, no two attacks
with one file stem, at least 40 attacks and 8 honest kernels) and the suite's layout (every attack names the
docs/judge.md section it tests in `guarantee` and lives in that guarantee's folder, GUARANTEE_FOLDERS; every
numbered guarantee there has a folder with attacks). With --cutegen: compiles kernels with
`cutegen compile --json` and requires the verdict the manifest implies: `ok` for honest kernels and
runtime attacks, `rejected` for static ones (--compile picks which: honest, static, all; the compile
tests already build every attack, so CTest asks for the honest ones only, and only in the slow tier,
--slow-tier; honest entries marked `slow_compile` only with --slow).
Exits 1 with one line per disagreement.
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
VERDICTS = {
    "pass", "compile_error", "rejected", "load_failed", "kernel_error", "cuda_error", "crash", "timeout",
    "printed_output", "mismatch", "unwritten", "nondeterministic", "input_mutated", "hidden_work", "result_reuse",
    "forbidden_call", "tampering", "host_compute", "shape_specific",
}
PRECISIONS = {"strict", "tf32", "bf16"}
HONEST_FIELDS = {"kernel", "problem", "precision", "min_ms", "note", "slow_compile", "verified_shapes"}
ATTACK_FIELDS = {"kernel", "guarantee", "problem", "expect", "static", "violation", "min_ms", "reason_contains", "absent_files", "precision",
                 "note", "verified_shapes"}
# The codes of the compile stage's violations (src/compile): which guarantee refuses a static attack.
VIOLATIONS = {"forbidden-import", "forbidden-library", "load-time-code", "library-load-time-code", "include-not-allowed",
              "include-computed", "asm-reads-file", "line-directive", "pragma-not-allowed", "embed", "nondeterministic-build", "no-cute",
              "cute-unverifiable", "forged-line-info", "analysis-mismatch", "missing-entry-point",
              "entry-point-mismatch", "arch-conditional", "no-device-code", "unreadable-device-code",
              "embedded-device-code", "cute-not-built", "raw-stores"}
MIN_ATTACKS, MIN_HONEST = 40, 8
# The suite's honest kernels: every other .cu under attacks/ is an attack.
HONEST_FOLDERS = {"honest", "controls"}
# attacks/<folder>/ holds the attacks of one section of docs/judge.md, named by its heading without the
# number (a guarantee added before it would shift the number; notes once cited an older numbering and
# drifted). An attack's `guarantee` is that heading, and the kernel lives in its folder. `defects` are
# broken kernels: what "Three processes" says counts (how the runner ended, what the kernel returned).
JUDGE_DOC = "docs/judge.md"
GUARANTEE_FOLDERS = {
    "timing": "Times come from the trusted side",
    "every_call_checked": "Every timed call is checked, and inputs never repeat nor can be foreseen",
    "outside_the_call": "Nothing may happen outside the call",
    "correctness": "Correct on every input, at the precision asked for",
    "cute_only": "Only CuTe, only what a kernel needs",
    "sandbox": "The user's machine is protected (defence in depth)",
    "host_compute": "The host only launches: host computing is a verdict",
    "printed_output": "What is printed is seen, and cannot be taken back",
    "every_shape": "Right at every shape it accepts, not only the benchmark's",
    "defects": "Three processes",
}
HEADING = re.compile(r"^#{2,3} (\d+\. )?(.+?)\s*$", re.M)


def check_entry(entry, fields, where, errors):
    unknown = set(entry) - fields
    if unknown:
        errors.append(f"{where}: unknown field(s) {sorted(unknown)}; known: {sorted(fields)}")
    for key in ("kernel", "problem"):
        value = entry.get(key)
        if not isinstance(value, str) or not (ROOT / value).is_file():
            errors.append(f"{where}: {key} {value!r} is not a file under the repository root")
    if "precision" in entry and entry["precision"] not in PRECISIONS:
        errors.append(f"{where}: precision {entry['precision']!r} is not one of {sorted(PRECISIONS)}")
    if "min_ms" in entry and (not isinstance(entry["min_ms"], (int, float)) or entry["min_ms"] <= 0):
        errors.append(f"{where}: min_ms must be a positive number of milliseconds")
    if "verified_shapes" in entry and (type(entry["verified_shapes"]) is not int or entry["verified_shapes"] < 1):
        errors.append(f"{where}: verified_shapes is how many shapes a passing record verifies (at least the problem's own)")
    if "slow_compile" in entry and not isinstance(entry["slow_compile"], bool):
        errors.append(f"{where}: slow_compile must be true or false")
    if "note" in entry and (not isinstance(entry["note"], str) or "\n" in entry["note"]):
        errors.append(f"{where}: note must be one line of text")


def check_manifest(manifest):
    errors = []
    honest, attacks = manifest.get("honest", []), manifest.get("attacks", [])
    for i, entry in enumerate(honest):
        check_entry(entry, HONEST_FIELDS, f"honest[{i}] {entry.get('kernel')}", errors)
    stems = {}
    for i, entry in enumerate(attacks):
        where = f"attacks[{i}] {entry.get('kernel')}"
        check_entry(entry, ATTACK_FIELDS, where, errors)
        expect = entry.get("expect")
        # A list: any of these verdicts (the same cheat can be caught two ways, e.g. a wait charged to
        # it or the poison it left unwritten); a runtime entry only.
        accepted = expect if isinstance(expect, list) else [expect]
        if not accepted or any(v not in VERDICTS for v in accepted):
            errors.append(f"{where}: expect {expect!r} is not a verdict the judge gives (or a non-empty list of them)")
        if isinstance(expect, list) and (entry.get("static") or "rejected" in accepted):
            errors.append(f"{where}: a list of verdicts is for runtime entries")
        if entry.get("static") and expect != "rejected":
            errors.append(f"{where}: a static entry must expect 'rejected'")
        if expect == "rejected" and not entry.get("static"):
            errors.append(f"{where}: 'rejected' happens at compile time: mark the entry static")
        # Which check must refuse it, so that another one catching the same kernel cannot stand in unseen.
        if entry.get("static") and entry.get("violation") not in VIOLATIONS:
            errors.append(f"{where}: a static entry names the violation that refuses it "
                          f"(violation: one of {', '.join(sorted(VIOLATIONS))})")
        if "violation" in entry and not entry.get("static"):
            errors.append(f"{where}: violation is for static entries")
        if "verified_shapes" in entry and "pass" not in accepted:
            errors.append(f"{where}: verified_shapes counts the shapes of a kernel that passes; expect is {expect!r}")
        if "min_ms" in entry and "pass" not in accepted:
            errors.append(f"{where}: min_ms bounds the time of a kernel that passes; expect is {expect!r}")
        if "reason_contains" in entry and (entry.get("static") or not isinstance(entry["reason_contains"], str)
                                           or not entry["reason_contains"]):
            errors.append(f"{where}: reason_contains is text a runtime verdict's reason must hold")
        absent = entry.get("absent_files", [])
        if not isinstance(absent, list) or not all(isinstance(p, str) and p.startswith(("/", "~/")) for p in absent):
            errors.append(f"{where}: absent_files must be absolute paths or ~/ paths")
        stem = pathlib.Path(str(entry.get("kernel"))).stem
        if stem in stems:
            errors.append(f"{where}: file stem {stem!r} is also attacks[{stems[stem]}]'s (results are named by stem)")
        stems.setdefault(stem, i)
    listed = {entry.get("kernel") for entry in attacks}
    for path in sorted((ROOT / "attacks").rglob("*.cu")):
        rel = path.relative_to(ROOT).as_posix()
        if path.parent.name in HONEST_FOLDERS:
            continue
        if rel not in listed:
            errors.append(f"{rel}: not in the manifest (every attack kernel needs an expected verdict)")
    # attacks/honest/ holds the suite's own honest kernels (the library's are in library/): each must be run.
    honest_listed = {entry.get("kernel") for entry in honest}
    for path in sorted((ROOT / "attacks" / "honest").glob("*.cu")):
        rel = path.relative_to(ROOT).as_posix()
        if rel not in honest_listed:
            errors.append(f"{rel}: not an honest entry of the manifest (the suite's honest kernels must pass)")
    errors += check_layout(attacks, (ROOT / JUDGE_DOC).read_text(encoding="utf-8"))
    if len(attacks) < MIN_ATTACKS:
        errors.append(f"manifest: {len(attacks)} attacks, the suite needs at least {MIN_ATTACKS}")
    if len(honest) < MIN_HONEST:
        errors.append(f"manifest: {len(honest)} honest kernels, the suite needs at least {MIN_HONEST}")
    return errors


def check_layout(attacks, judge_text):
    """Attacks grouped by the guarantee they test: each entry's `guarantee` is a heading of judge_text (the
    text of docs/judge.md) that GUARANTEE_FOLDERS gives a folder, and a kernel under attacks/ lives in it."""
    errors = []
    sections = {m.group(2): bool(m.group(1)) for m in HEADING.finditer(judge_text)}  # heading -> numbered
    folder_of = {title: folder for folder, title in GUARANTEE_FOLDERS.items()}
    for folder, title in GUARANTEE_FOLDERS.items():
        if title not in sections:
            errors.append(f"attacks/{folder}/: its guarantee {title!r} is no heading of {JUDGE_DOC} "
                          f"(renamed there? rename it in GUARANTEE_FOLDERS and the manifest)")
    for title, numbered in sections.items():
        if numbered and title not in folder_of:
            errors.append(f"{JUDGE_DOC}: guarantee {title!r} has no folder under attacks/ (add it to "
                          f"GUARANTEE_FOLDERS, with the attacks that fail without it)")
    tested = set()
    for i, entry in enumerate(attacks):
        where = f"attacks[{i}] {entry.get('kernel')}"
        title = entry.get("guarantee")
        if title not in folder_of:
            errors.append(f"{where}: guarantee {title!r} is not a section attacks/ is grouped by; name one of "
                          f"{JUDGE_DOC}'s headings GUARANTEE_FOLDERS lists: {sorted(folder_of)}")
            continue
        tested.add(title)
        parts = pathlib.PurePosixPath(str(entry.get("kernel"))).parts
        # A kernel outside attacks/ (src/compile/testdata/) is also another test's input and stays there.
        if parts[:1] == ("attacks",) and parts[:-1] != ("attacks", folder_of[title]):
            errors.append(f"{where}: its guarantee {title!r} is tested in attacks/{folder_of[title]}/; "
                          f"git mv the kernel there")
    for folder, title in GUARANTEE_FOLDERS.items():
        if title in sections and title not in tested:
            errors.append(f"attacks/{folder}/: no attack names its guarantee {title!r}")
    return errors


def compile_verdict(cutegen, kernel):
    """(verdict, first line of feedback, violation codes) from `cutegen compile --json`."""
    proc = subprocess.run([cutegen, "compile", "--json", str(ROOT / kernel)], capture_output=True, text=True,
                          timeout=900)
    try:
        outcome = json.loads(proc.stdout)
    except json.JSONDecodeError:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return "no_outcome", f"cutegen compile exited {proc.returncode}: {last}", set()
    feedback = (outcome.get("feedback") or "").strip().splitlines()
    codes = {v.get("code") for v in outcome.get("violations", [])}
    return outcome.get("verdict", "no_verdict"), " ".join(feedback[:2])[:300], codes


def check_compiles(manifest, cutegen, which, slow):
    wanted = []
    if which in ("honest", "all"):
        # slow_compile kernels (minutes of nvcc each: CUTLASS GEMMs) would push CI past its time limit;
        # the GPU suite's precompile stage builds every entry.
        wanted += [(e["kernel"], "ok", None) for e in manifest["honest"] if slow or not e.get("slow_compile")]
    if which in ("static", "all"):
        wanted += [(e["kernel"], "rejected", e.get("violation")) for e in manifest["attacks"] if e.get("static")]
    if which == "all":
        wanted += [(e["kernel"], "ok", None) for e in manifest["attacks"] if not e.get("static")]
    errors, unique = [], list(dict.fromkeys(wanted))
    # In parallel: each compile is one nvcc build plus one analysis compile, tens of seconds for the
    # larger kernels; one after another they were the longest test of CI's run.
    jobs = int(os.environ.get("CHECK_MANIFEST_JOBS", os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcomes = pool.map(lambda item: (item, compile_verdict(cutegen, item[0])), unique)
        for (kernel, expect, violation), (got, feedback, codes) in outcomes:
            right = got == expect and (violation is None or violation in codes)
            named = f" [{', '.join(sorted(codes))}]" if codes else ""
            wanted_code = f" [{violation}]" if violation else ""
            print(f"{'ok  ' if right else 'FAIL'} {kernel}: compile {got}{named} (expected {expect}{wanted_code})",
                  flush=True)
            if not right:
                errors.append(f"{kernel}: compile verdict {got}{named}, expected {expect}{wanted_code}: {feedback}")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", default=str(ROOT / "attacks" / "manifest.json"))
    ap.add_argument("--cutegen", help="the cutegen executable; without it only the manifest itself is checked")
    ap.add_argument("--compile", choices=("honest", "static", "all"), default="honest",
                    help="which kernels to compile when --cutegen is given (default: honest)")
    ap.add_argument("--slow", action="store_true",
                    help="also compile honest kernels marked slow_compile (skipped by default: CI's time limit)")
    ap.add_argument("--slow-tier", action="store_true",
                    help="with --cutegen: compile only when CUTEGEN_SLOW_COMPILE_TESTS=1, else exit 77 (CTest's skip) "
                         "saying so after checking the manifest itself")
    args = ap.parse_args()
    try:
        manifest = json.loads(pathlib.Path(args.manifest).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        print(f"check_manifest: cannot read {args.manifest}: {exc}", file=sys.stderr)
        return 1
    errors = check_manifest(manifest)
    if not errors and args.cutegen and args.slow_tier and os.environ.get("CUTEGEN_SLOW_COMPILE_TESTS") != "1":
        print(f"manifest ok; its {args.compile} kernels' builds are the slow tier (scripts/gpu-check builds every "
              f"manifest kernel before judging it): CUTEGEN_SLOW_COMPILE_TESTS=1 builds them here")
        return 77
    if not errors and args.cutegen:
        if not os.access(args.cutegen, os.X_OK):
            print(f"check_manifest: {args.cutegen} is not an executable; build cutegen first", file=sys.stderr)
            return 1
        errors = check_compiles(manifest, args.cutegen, args.compile, args.slow)
    for line in errors:
        print(line, file=sys.stderr)
    if errors:
        return 1
    print(f"manifest ok: {len(manifest['honest'])} honest kernels, {len(manifest['attacks'])} attacks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
