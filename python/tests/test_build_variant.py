"""benchmarks/build_variant.sh: a kernel file with #defines prepended, built by `cutegen compile` (here a fake
that records the source it was given), the library copied to OUT_DIR/NAME.so; a build error is one line."""
import os
import subprocess

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "benchmarks", "build_variant.sh")


def fake_cutegen(tmp_path, report):
    """A stand-in for `cutegen compile --json FILE`: copies FILE beside it and prints `report`."""
    fake = tmp_path / "cutegen"
    fake.write_text("#!/bin/sh\ncp \"$3\" \"$(dirname \"$0\")/compiled.cu\"\ncat <<'EOF'\n" + report + "\nEOF\n")
    fake.chmod(0o755)
    return fake


def run(*args):
    return subprocess.run([SCRIPT, *map(str, args)], capture_output=True, text=True)


def test_the_defines_come_first_and_the_library_is_copied_under_its_name(tmp_path):
    library = tmp_path / "kernel.so"
    library.write_bytes(b"\x7fELF fake")
    fake = fake_cutegen(tmp_path, '{"verdict": "ok", "library": "%s"}' % library)
    source = tmp_path / "k.cu"
    source.write_text("int body;\n")
    done = run("--cutegen", fake, source, tmp_path / "out", "s7", "TKS_STAGES=7", "TKS_THREADS=128")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "out" / "s7.so")
    assert (tmp_path / "out" / "s7.so").read_bytes() == b"\x7fELF fake"
    assert (tmp_path / "compiled.cu").read_text() == "#define TKS_STAGES 7\n#define TKS_THREADS 128\nint body;\n"


def test_a_build_error_is_one_line_naming_the_variant_and_the_first_error(tmp_path):
    fake = fake_cutegen(tmp_path, '{"verdict": "compile_error", "errors": [{"line": 98, "message": "static '
                                  'assertion failed"}, {"line": 99, "message": "later"}]}')
    source = tmp_path / "k.cu"
    source.write_text("int body;\n")
    done = run("--cutegen", fake, source, tmp_path / "out", "bad", "TKS_STAGES=40")
    assert done.returncode == 1
    assert done.stderr.strip() == f"build_variant: {tmp_path}/out/src/bad.cu: line 98: static assertion failed"
    assert not (tmp_path / "out" / "bad.so").exists()


def test_bad_arguments_say_what_is_wrong(tmp_path):
    fake = fake_cutegen(tmp_path, "{}")
    assert run("a", "b").returncode == 2
    missing = run("--cutegen", fake, tmp_path / "nosuch.cu", tmp_path / "out", "x")
    assert missing.returncode == 1 and "no file" in missing.stderr
    source = tmp_path / "k.cu"
    source.write_text("int body;\n")
    not_a_knob = run("--cutegen", fake, source, tmp_path / "out", "x", "NOPE")
    assert not_a_knob.returncode == 1 and "'NOPE' is not KNOB=VALUE" in not_a_knob.stderr
    assert run("--help").returncode == 0
