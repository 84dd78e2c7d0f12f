"""CuTe's atom and algorithm headers build on what cute/tensor.hpp declares: included before it, they do not parse
("copy_if has already been declared", 100 errors). cutegen/kernel.h includes only cute/tensor_impl.hpp (a998dda),
so a kernel file that included them ahead of cute/tensor.hpp -- library/softmax_cluster.cu, log_softmax_cluster.cu
and layernorm_rows_grid.cu, the last one the CuTe idiom example the prompts show -- stopped building, and no
default-tier test compiles them (nvcc takes minutes). This reads the include lines of every kernel in the tree
instead; the cases check the reader on small texts first."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
INCLUDE = re.compile(r'^\s*#\s*include\s*<(cute/[^>]+)>', re.M)
NEEDS_TENSOR = re.compile(r"^cute/(atom|algorithm)/")


def misordered(text):
    """The cute/atom and cute/algorithm headers a file includes before cute/tensor.hpp (all of them when it never
    includes it)."""
    bad = []
    for header in INCLUDE.findall(text):
        if header == "cute/tensor.hpp":
            break
        if NEEDS_TENSOR.match(header):
            bad.append(header)
    return bad


def test_the_reader_finds_an_atom_header_ahead_of_the_tensor_header():
    assert misordered("#include <cute/atom/copy_atom.hpp>\n#include <cute/tensor.hpp>\n") == ["cute/atom/copy_atom.hpp"]
    assert misordered("#include <cute/tensor.hpp>\n#include <cute/atom/copy_atom.hpp>\n") == []
    assert misordered("#include <cute/arch/copy_sm80.hpp>\n#include <cute/tensor.hpp>\n") == []
    assert misordered("#include <cute/algorithm/copy.hpp>\n") == ["cute/algorithm/copy.hpp"]


def test_every_kernel_includes_the_tensor_header_before_atoms_and_algorithms():
    files = sorted(ROOT.glob("library/*.cu")) + sorted(ROOT.glob("attacks/**/*.cu")) + \
        sorted(ROOT.glob("src/seed/routes/**/*.cu.in")) + sorted(ROOT.glob("examples/**/*.cu"))
    assert len(files) > 50  # the tree's kernels were found
    offenders = {str(f.relative_to(ROOT)): misordered(f.read_text(encoding="utf-8")) for f in files}
    assert {f: h for f, h in offenders.items() if h} == {}
