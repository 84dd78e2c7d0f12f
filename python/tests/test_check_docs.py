"""scripts/check_docs.py (the docs_layout test): benchmarks/ holds one results file, and citations of
benchmarks/*.md point at files that exist. Each case builds a small repository tree in tmp_path."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import check_docs  # noqa: E402

# The names the cases plant, spelled in pieces so this file does not itself cite them.
DATED_LOG = "gpu-check-" + "2026-12-09.md"
OLD_DATED_LOG = "gpu-check-" + "2026-12-01b.md"
GONE = "benchmarks/" + "gone.md"
SECOND = "benchmarks/" + "library.md"
MOVED_ATTACK = "attacks/" + "side_stream.cu"  # its old place, before the folders per guarantee
FILED_ATTACK = "attacks/" + "outside_the_call/side_stream.cu"


def make_tree(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def problems(root):
    return check_docs.benchmark_dir_problems(root) + check_docs.citation_problems(root)


CLEAN = {
    "benchmarks/results.md": "# Current results\n",
    "benchmarks/two_process_excess.py": "# records its numbers in benchmarks/results.md\n",
    "src/seed/route.cpp": "// 1.39 ms on the H200 (benchmarks/results.md).\n",
    "README.md": "see [results](benchmarks/results.md)\n",
}


def test_a_tree_with_one_results_file_and_live_citations_passes(tmp_path):
    make_tree(tmp_path, CLEAN)
    assert problems(tmp_path) == []


def test_a_dated_file_under_benchmarks_fails(tmp_path):
    make_tree(tmp_path, dict(CLEAN, **{"benchmarks/" + DATED_LOG: "# a log\n"}))
    found = problems(tmp_path)
    assert len(found) == 1 and f"benchmarks/{DATED_LOG}: a dated file" in found[0]


def test_a_second_markdown_file_under_benchmarks_fails(tmp_path):
    make_tree(tmp_path, dict(CLEAN, **{SECOND: "# numbers\n"}))
    found = problems(tmp_path)
    assert len(found) == 1 and "a second results file" in found[0]


def test_a_citation_of_a_missing_benchmarks_file_names_the_line(tmp_path):
    make_tree(tmp_path, dict(CLEAN, **{"python/worker.py": f"x = 1\n# as measured ({GONE})\n"}))
    assert problems(tmp_path) == [
        f"python/worker.py:2: cites {GONE}, which does not exist; cite benchmarks/results.md "
        "or a docs/ page"]


def test_a_bare_dated_log_name_fails_even_without_the_folder(tmp_path):
    make_tree(tmp_path, dict(CLEAN, **{"docs/judge.md": f"judged alike ({OLD_DATED_LOG}, call 2)\n"}))
    found = problems(tmp_path)
    assert len(found) == 1 and found[0].startswith(f"docs/judge.md:1: cites the dated log {OLD_DATED_LOG}")


def test_a_citation_of_an_attack_where_it_no_longer_is_fails(tmp_path):
    make_tree(tmp_path, dict(CLEAN, **{FILED_ATTACK: "// a kernel\n",
                                       "src/run/runner.cpp": f"// (as {FILED_ATTACK} shows)\n// ({MOVED_ATTACK})\n",
                                       "docs/notes.md": f"see src/other/{MOVED_ATTACK}, a longer path\n"}))
    found = problems(tmp_path)
    assert len(found) == 1 and found[0].startswith(f"src/run/runner.cpp:2: cites {MOVED_ATTACK}, which does not"), found


def test_recorded_cassettes_are_left_as_recorded(tmp_path):
    make_tree(tmp_path, dict(CLEAN, **{"examples/cassettes/demo/01.json": f'{{"text": "{GONE}"}}\n'}))
    assert problems(tmp_path) == []


def test_an_architecture_page_over_400_lines_fails(tmp_path):
    make_tree(tmp_path, {"ARCHITECTURE.md": "# map\n" * 400})
    assert check_docs.architecture_problems(tmp_path) == []
    make_tree(tmp_path, {"ARCHITECTURE.md": "# map\n" * 401})
    found = check_docs.architecture_problems(tmp_path)
    assert len(found) == 1 and found[0].startswith("ARCHITECTURE.md: 401 lines, more than 400")


def test_this_repository_passes():
    assert check_docs.main(["check_docs.py", ROOT]) == 0


GOLDEN_RECORD = ("# header\n"
                 "problems/relu.py\tpointwise chain y = relu(x)\t0123456789abcdef\n"
                 "problems/split.py\tno seed for this operator graph: torch.chunk (...)\t-\n"
                 "problems/sub/deeper.py\tpointwise chain y = x\t0123456789abcdef\n"
                 "attacks" "/problems/a.py\tpointwise chain y = x\t0123456789abcdef\n")  # in pieces: no citation


def test_the_readme_seed_count_is_the_golden_records(tmp_path):
    make_tree(tmp_path, {"src/seed/testdata/seed_golden.txt": GOLDEN_RECORD,
                         "README.md": "… " + check_docs.readme_seed_line(1, 2) + ".\n"})
    assert check_docs.seed_count_problems(tmp_path) == []
    make_tree(tmp_path, {"README.md": "… " + check_docs.readme_seed_line(62, 71) + ".\n"})
    found = check_docs.seed_count_problems(tmp_path)
    assert len(found) == 1 and "says 62 of 71" in found[0] and "says 1 of 2" in found[0], found
    make_tree(tmp_path, {"README.md": "no count at all\n"})
    found = check_docs.seed_count_problems(tmp_path)
    assert len(found) == 1 and "no line saying" in found[0], found


def test_the_count_reads_only_problems_own_files():
    assert check_docs.seed_counts(GOLDEN_RECORD) == (1, 2)
