"""scripts/sass_diff.py: whether two versions of a kernel file compile to the same SASS.

The parser and comparison run on a real `cuobjdump -sass` dump (data/relu_cute_1d.sass: library/
relu_cute_1d.cu built by `cutegen compile` for sm_90a, dumped by the cuobjdump scripts/setup installs); the
builds themselves are nvcc work and run in the slow tier (docs/testing.md)."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import sass_diff  # noqa: E402

RELU = "_ZN15relu_1d_example7relu_1dEPKfPfl"


def relu_dump():
    with open(os.path.join(os.path.dirname(__file__), "data", "relu_cute_1d.sass")) as f:
        return f.read()


def test_a_real_dump_parses_to_one_kernel_without_offsets_or_encodings():
    kernels = sass_diff.parse_sass(relu_dump())
    assert list(kernels) == [RELU]
    code = kernels[RELU]
    assert len(code) == 232  # every /*offset*/ line of the dump
    assert code[0] == "LDC R1, c[0x0][0x28]"
    assert code[1] == "S2R R2, SR_TID.X"
    assert not any("/*" in i or "0x0000" in i for i in code[:5])
    assert any(i.startswith("EXIT") for i in code)


def test_the_same_code_at_other_offsets_is_identical():
    dump = relu_dump()
    shifted = dump.replace("/*0000*/", "/*1000*/").replace("/* 0x000fe20000000800 */", "/* 0x000fe20000000999 */")
    rows, same = sass_diff.compare(sass_diff.parse_sass(dump), sass_diff.parse_sass(shifted))
    assert same
    assert rows == [(RELU, "identical", "232 instructions")]


def test_one_changed_instruction_is_a_difference_and_is_counted():
    before = sass_diff.parse_sass(relu_dump())
    after = {RELU: list(before[RELU])}
    after[RELU][1] = "S2R R3, SR_TID.X"
    rows, same = sass_diff.compare(before, after)
    assert not same
    assert rows == [(RELU, "differs", "232 -> 232 instructions, 1 changed")]


def test_a_kernel_in_one_build_only_is_a_difference():
    before = sass_diff.parse_sass(relu_dump())
    after = dict(before, other_kernel=["EXIT"])
    rows, same = sass_diff.compare(before, after)
    assert not same
    assert ("other_kernel", "only in AFTER", "1 instructions") in rows


def test_what_cannot_be_compared_is_one_line_and_status_2(capsys, tmp_path):
    true = shutil.which("true")
    assert sass_diff.main([str(tmp_path / "missing.cu"), str(tmp_path / "also.cu"), "--cutegen", true,
                           "--cuobjdump", true]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"sass-diff: {tmp_path / 'missing.cu'}: no such file (and not REV:PATH)"
    assert sass_diff.main(["a.cu", "b.cu", "--cutegen", str(tmp_path / "no-cutegen")]) == 2
    assert "not an executable cutegen" in capsys.readouterr().err
    with pytest.raises(SystemExit) as bad_define:
        sass_diff.main(["a.cu", "b.cu", "-D", "NOVALUE"])
    assert bad_define.value.code == 2
    assert "expected NAME=VALUE" in capsys.readouterr().err


def test_a_git_revision_that_has_no_such_file_is_an_error():
    with pytest.raises(sass_diff.CompareError, match="git show failed"):
        sass_diff.read_source("HEAD:library/no_such_kernel.cu")


def test_a_file_at_a_git_revision_is_read_from_git():
    assert "relu_1d" in sass_diff.read_source("HEAD:attacks/honest/relu_cute_1d.cu")


@pytest.mark.skipif(os.environ.get("CUTEGEN_SLOW_COMPILE_TESTS") != "1",
                    reason="slow tier (three nvcc builds of relu_cute_1d.cu): CUTEGEN_SLOW_COMPILE_TESTS=1 runs it")
def test_real_builds_a_comment_changes_nothing_and_a_constant_does(tmp_path):
    cutegen = os.environ.get("CUTEGEN", os.path.join(ROOT, "build", "cutegen"))
    assert os.access(cutegen, os.X_OK), f"{cutegen}: build cutegen first (scripts/setup)"
    src = os.path.join(ROOT, "attacks", "honest", "relu_cute_1d.cu")
    with open(src) as f:
        text = f.read()
    commented = tmp_path / "commented.cu"
    commented.write_text(text.replace("using namespace cute;", "using namespace cute;  // a comment"))
    changed = tmp_path / "changed.cu"
    changed.write_text(text.replace("v < 0.f ? 0.f : v", "v < 0.f ? 0.5f : v"))
    script = os.path.join(ROOT, "scripts", "sass_diff.py")
    same = subprocess.run([sys.executable, script, src, str(commented), "--cutegen", cutegen],
                          capture_output=True, text=True)
    assert same.returncode == 0, same.stderr
    assert "identical" in same.stdout and RELU in same.stdout
    differ = subprocess.run([sys.executable, script, src, str(changed), "--cutegen", cutegen],
                            capture_output=True, text=True)
    assert differ.returncode == 1, differ.stderr
    assert "differs" in differ.stdout


def test_a_file_that_does_not_build_names_its_first_error(tmp_path):
    fake = tmp_path / "cutegen"  # stands in for `cutegen compile --json` with a build error
    fake.write_text("#!/bin/sh\necho '{\"verdict\": \"compile_error\", \"errors\": "
                    "[{\"line\": 3, \"message\": \"expected a )\"}]}'\n")
    fake.chmod(0o755)
    source = tmp_path / "k.cu"
    source.write_text("int broken(\n")
    with pytest.raises(sass_diff.CompareError) as e:
        sass_diff.build(str(source), [("KNOB", "1")], str(fake), str(tmp_path), "before")
    assert str(e.value) == f"{source}: does not build (compile_error): line 3: expected a )"
    assert (tmp_path / "before" / "k.cu").read_text() == "#define KNOB 1\nint broken(\n"
