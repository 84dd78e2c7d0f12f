"""attacks/check_manifest.py's layout rules (the attack_manifest test): every attack names the docs/judge.md
section it tests in `guarantee`, lives in that guarantee's folder under attacks/, and every numbered
guarantee of docs/judge.md has a folder with attacks; and attacks/README.md's folder table says the same.
The cases run check_layout on the real manifest and judge.md, then on small changes of them."""
import importlib.util
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
_spec = importlib.util.spec_from_file_location("check_manifest", ROOT / "attacks" / "check_manifest.py")
check_manifest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_manifest)

JUDGE = (ROOT / "docs" / "judge.md").read_text(encoding="utf-8")
ATTACKS = json.loads((ROOT / "attacks" / "manifest.json").read_text())["attacks"]
TIMING = check_manifest.GUARANTEE_FOLDERS["timing"]


def planted(*parts):
    """A kernel path the cases plant, spelled in pieces so that this file does not itself cite a missing
    attack (scripts/check_docs.py checks the citations)."""
    return "/".join(("attacks",) + parts)


def entry(kernel, guarantee):
    return {"kernel": kernel, "guarantee": guarantee}


def test_the_suite_is_laid_out_by_guarantee():
    assert check_manifest.check_layout(ATTACKS, JUDGE) == []


def test_every_folder_under_attacks_is_a_guarantee_or_the_honest_kernels():
    folders = {p.name for p in (ROOT / "attacks").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(check_manifest.GUARANTEE_FOLDERS) | check_manifest.HONEST_FOLDERS | {"problems"}


def test_an_attack_in_another_guarantees_folder_fails_naming_the_right_one():
    attacks = ATTACKS + [entry(planted("sandbox", "forged_times.cu"), TIMING)]
    assert check_manifest.check_layout(attacks, JUDGE) == [
        f"attacks[{len(ATTACKS)}] {planted('sandbox', 'forged_times.cu')}: its guarantee {TIMING!r} is tested in "
        "attacks/timing/; git mv the kernel there"]


def test_an_attack_left_flat_in_attacks_fails():
    found = check_manifest.check_layout(ATTACKS + [entry(planted("forged_times.cu"), TIMING)], JUDGE)
    assert len(found) == 1 and f"{planted('forged_times.cu')}: its guarantee" in found[0]


def test_a_guarantee_named_by_its_old_number_or_missing_fails():
    for guarantee in ("1 self-reported timing", None):
        found = check_manifest.check_layout(ATTACKS + [entry(planted("timing", "forged_times.cu"), guarantee)], JUDGE)
        assert len(found) == 1 and f"guarantee {guarantee!r} is not a section" in found[0]


def test_a_kernel_outside_attacks_needs_a_guarantee_but_no_folder():
    # src/compile/testdata/ kernels are other tests' inputs too: they stay where they are.
    assert check_manifest.check_layout(ATTACKS + [entry("src/compile/testdata/no_cute.cu", TIMING)], JUDGE) == []


def test_a_renamed_or_added_guarantee_in_judge_md_fails_until_the_folders_follow():
    renamed = JUDGE.replace(f"### 1. {TIMING}\n", "### 1. Times are the worker's\n")
    assert renamed != JUDGE
    found = check_manifest.check_layout(ATTACKS, renamed)
    assert any(f"attacks/timing/: its guarantee {TIMING!r} is no heading" in f for f in found), found
    assert any("guarantee \"Times are the worker's\" has no folder" in f for f in found), found
    added = JUDGE + "\n### 10. Nothing is left in the L2\n"
    assert check_manifest.check_layout(ATTACKS, added) == [
        "docs/judge.md: guarantee 'Nothing is left in the L2' has no folder under attacks/ (add it to "
        "GUARANTEE_FOLDERS, with the attacks that fail without it)"]


def test_a_guarantee_folder_without_attacks_fails():
    others = [a for a in ATTACKS if a["guarantee"] != TIMING]
    assert check_manifest.check_layout(others, JUDGE) == [f"attacks/timing/: no attack names its guarantee {TIMING!r}"]


def test_an_unlisted_kernel_in_a_guarantee_folder_fails_as_a_flat_one_did(tmp_path, monkeypatch):
    # A tree of its own: one listed attack, one unlisted beside it, one honest kernel (not an attack).
    for rel in (planted("timing", "listed.cu"), planted("timing", "unlisted.cu"), planted("controls", "honest_one.cu"),
                "problems/relu.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("// test\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "judge.md").write_text(f"## Three processes\n### 1. {TIMING}\n")
    monkeypatch.setattr(check_manifest, "ROOT", tmp_path)
    monkeypatch.setattr(check_manifest, "GUARANTEE_FOLDERS", {"timing": TIMING})
    monkeypatch.setattr(check_manifest, "MIN_ATTACKS", 1)
    monkeypatch.setattr(check_manifest, "MIN_HONEST", 0)
    listed = dict(entry(planted("timing", "listed.cu"), TIMING), problem="problems/relu.py", expect="tampering")
    assert check_manifest.check_manifest({"honest": [], "attacks": [listed]}) == [
        f"{planted('timing', 'unlisted.cu')}: not in the manifest (every attack kernel needs an expected verdict)"]


def test_the_readme_lists_every_folder_with_its_guarantee():
    readme = (ROOT / "attacks" / "README.md").read_text(encoding="utf-8")
    rows = {}
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) >= 3 and cells[0].startswith("`") and cells[0].endswith("/`"):
            rows[cells[0].strip("`/")] = cells[1]
    assert set(rows) == set(check_manifest.GUARANTEE_FOLDERS)
    # The README's numbers are judge.md's own: "5. Only CuTe, ...", or no number for an unnumbered section.
    numbers = {m.group(2): (m.group(1) or "") for m in check_manifest.HEADING.finditer(JUDGE)}
    for folder, title in check_manifest.GUARANTEE_FOLDERS.items():
        assert rows[folder].startswith(numbers[title] + title), (folder, rows[folder], numbers[title] + title)
