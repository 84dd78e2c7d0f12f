"""benchmarks/build_variant.py: a kernel file with #defines prepended, built by scripts/sass_diff.py's build
(`cutegen compile`; here a fake that records the source it was given), the library copied to OUT_DIR/NAME.so;
a build error is one line."""
import os
import subprocess

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "benchmarks", "build_variant.py")


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
    done = run(source, tmp_path / "out", "s7", "TKS_STAGES=7", "TKS_THREADS=128", "--cutegen", fake)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "out" / "s7.so")
    assert (tmp_path / "out" / "s7.so").read_bytes() == b"\x7fELF fake"
    assert (tmp_path / "compiled.cu").read_text() == "#define TKS_STAGES 7\n#define TKS_THREADS 128\nint body;\n"


def test_a_file_at_a_git_revision_is_built_as_git_has_it(tmp_path):
    library = tmp_path / "kernel.so"
    library.write_bytes(b"\x7fELF fake")
    fake = fake_cutegen(tmp_path, '{"verdict": "ok", "library": "%s"}' % library)
    done = run("HEAD:library/softmax_ticket.cu", tmp_path / "out", "head", "TKS_STAGES=7", "--cutegen", fake)
    assert done.returncode == 0, done.stderr
    shown = subprocess.run(["git", "-C", ROOT, "show", "HEAD:library/softmax_ticket.cu"],
                           capture_output=True, text=True, check=True).stdout
    assert (tmp_path / "compiled.cu").read_text() == "#define TKS_STAGES 7\n" + shown


def test_a_build_error_is_one_line_naming_the_source_and_the_first_error(tmp_path):
    fake = fake_cutegen(tmp_path, '{"verdict": "compile_error", "errors": [{"line": 98, "message": "static '
                                  'assertion failed"}, {"line": 99, "message": "later"}]}')
    source = tmp_path / "k.cu"
    source.write_text("int body;\n")
    done = run(source, tmp_path / "out", "bad", "TKS_STAGES=40", "--cutegen", fake)
    assert done.returncode == 1
    assert done.stderr.strip() == (f"build_variant: {source}: does not build (compile_error): "
                                   "line 98: static assertion failed")
    assert not (tmp_path / "out" / "bad.so").exists()


def test_bad_arguments_say_what_is_wrong(tmp_path):
    fake = fake_cutegen(tmp_path, "{}")
    assert run("a", "b").returncode == 2
    missing = run(tmp_path / "nosuch.cu", tmp_path / "out", "x", "--cutegen", fake)
    assert missing.returncode == 1 and "no such file" in missing.stderr
    not_a_knob = run(tmp_path / "k.cu", tmp_path / "out", "x", "NOPE", "--cutegen", fake)
    assert not_a_knob.returncode == 2 and "'NOPE': expected NAME=VALUE" in not_a_knob.stderr
    no_cutegen = run(tmp_path / "k.cu", tmp_path / "out", "x", "--cutegen", tmp_path / "nothing")
    assert no_cutegen.returncode == 1 and "not an executable cutegen" in no_cutegen.stderr
    assert run("--help").returncode == 0
