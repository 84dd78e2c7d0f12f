"""benchmarks/turnaround.py (the loop's per-step wall time, issue 36) and its stand-in LLM: the run-log reading
on a recorded run and on a step with several candidates, and the stub's answers to the loop's own prompt texts."""
import importlib.util
import json
import os
import subprocess
import sys

from conftest import ROOT

BENCH = os.path.join(ROOT, "benchmarks")


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(BENCH, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


turnaround = load("turnaround")


def test_step_walls_on_a_recorded_run():
    path = os.path.join(ROOT, "src", "report", "testdata", "relu-run", "events.jsonl")
    events = [json.loads(line) for line in open(path)]
    walls = turnaround.step_walls(events)
    assert [w["step"] for w in walls] == [1, 2, 3, 4]
    # Step 1: the optimize answer at ...398.749, the decision at ...426.269; its evaluation's phases.
    assert abs(walls[0]["wall_s"] - 27.52) < 1e-3
    assert walls[0]["llm_answers"] == 1 and walls[0]["outcome"] == "accepted"
    assert walls[0]["compile_s"] == 14.2 and walls[0]["session_s"] == 7.9
    # Step 3 broke the kernel: no full evaluation's phases, and its diagnosis and repair are in its wall.
    assert walls[2]["compile_s"] is None and abs(walls[2]["wall_s"] - (1796047611.445 - 1796047541.38)) < 1e-3


def test_a_step_with_several_candidates_counts_from_its_last_answer():
    events = [{"type": "llm", "what": "optimize", "t": 100.0 + i} for i in range(4)]
    events += [{"type": "compile", "t": 110.0}, {"type": "screen", "t": 115.0},
               {"type": "eval", "what": "step1", "t": 120.0,
                "evaluation": {"phase_seconds": {"compile": 9.0, "session": 4.0},
                               "compile": {"host_pch": "used", "nvcc_steps": "overlapped, host compile from the early stub"},
                               "session": {"phase_seconds": {"trials": 2.5, "timed_compare": 0.75}}}},
               {"type": "decision", "decision": "step", "kind": "optimization", "step": 1, "outcome": "slower", "t": 121.0},
               {"type": "decision", "decision": "step", "kind": "tuning", "step": 1, "t": 130.0}]
    walls = turnaround.step_walls(events)
    assert len(walls) == 1  # the tuning decision is no optimisation step
    assert walls[0]["wall_s"] == 121.0 - 103.0 and walls[0]["llm_answers"] == 4 and walls[0]["compile_s"] == 9.0
    assert walls[0]["session_phases"] == {"trials": 2.5, "timed_compare": 0.75}  # where the session's 4 s went
    assert walls[0]["host_pch"] == "used"
    assert walls[0]["nvcc_steps"] == "overlapped, host compile from the early stub"


def test_table_reports_the_ratio_to_one_candidate():
    results = {"relu_large": {1: [{"wall_s": 10.0, "compile_s": 6.0, "session_s": 3.0}] * 3,
                              4: [{"wall_s": 14.0, "compile_s": 6.5, "session_s": 3.0}] * 3}}
    md = turnaround.table(results, [1, 4])
    assert ("| relu_large | 10.0 (6.0 / 3.0; host header 0 of 3; early stub 0 of 3) | 14.0 (6.5 / 3.0; host header 0 "
            "of 3; early stub 0 of 3) | 1.40 |") in md


def test_table_says_in_how_many_judged_steps_the_host_header_was_read_and_the_early_stub_used():
    early = "overlapped, host compile from the early stub"
    read = {"wall_s": 8.0, "compile_s": 3.4, "session_s": 4.2, "host_pch": "used", "nvcc_steps": early}
    first = {"wall_s": 9.5, "compile_s": 4.7, "session_s": 4.3, "host_pch": "precompiling for the next build",
             "nvcc_steps": "overlapped (host compile after cicc: compile.stub_ahead is off)"}
    md = turnaround.table({"relu_large": {1: [first, read, read]}}, [1])
    assert "| relu_large | 8.0 (3.4 / 4.2; host header 2 of 3; early stub 2 of 3) |" in md


def test_table_says_how_many_steps_of_several_candidates_ended_at_screening():
    judged = {"wall_s": 14.0, "compile_s": 6.5, "session_s": 3.0}
    screened = {"wall_s": 9.0, "compile_s": None, "session_s": None}
    results = {"relu_large": {1: [{"wall_s": 10.0, "compile_s": 6.0, "session_s": 3.0}], 4: [judged, screened, screened]}}
    md = turnaround.table(results, [1, 4])
    assert ("| relu_large | 10.0 (6.0 / 3.0; host header 0 of 1; early stub 0 of 1) | 9.0 (6.5 / 3.0; 2 of 3 ended at "
            "screening; host header 0 of 1; early stub 0 of 1) | 0.90 |") in md


def stub(conversation, kernel):
    return subprocess.run([sys.executable, os.path.join(BENCH, "turnaround_llm.py")], input=conversation, text=True,
                          capture_output=True, env=dict(os.environ, TURNAROUND_KERNEL=kernel))


def user_turn(template):
    # The loop's own wording (prompts/*.md), so a change there that the stub no longer recognises fails here.
    return "=== system ===\nrules\n=== user ===\n" + open(os.path.join(ROOT, "prompts", template)).read()


def test_stub_answers_synthesis_with_the_kernel_and_optimisation_with_a_fresh_edit():
    kernel = os.path.join(ROOT, "attacks", "honest", "relu_vec.cu")
    source = open(kernel).read()
    first = stub(user_turn("synthesis.md"), kernel)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("```") == 2 and source in first.stdout
    edits = [stub(user_turn("optimize.md"), kernel) for _ in range(2)]
    for e in edits:
        assert e.returncode == 0, e.stderr
        search = e.stdout.split("<<<<<<< SEARCH\n", 1)[1].split("\n=======\n", 1)[0]
        assert source.count(search + "\n") == 1  # matches exactly one place of the kernel
        assert "OPTIMIZATION:" in e.stdout and "EXPECTED:" in e.stdout
    assert edits[0].stdout != edits[1].stdout  # each proposal is a new source: a compile-cache miss


def test_stub_refuses_a_repair_and_a_missing_kernel():
    kernel = os.path.join(ROOT, "attacks", "honest", "relu_vec.cu")
    assert stub(user_turn("repair.md"), kernel).returncode != 0
    missing = stub(user_turn("synthesis.md"), "/nonexistent.cu")
    assert missing.returncode == 2 and "TURNAROUND_KERNEL" in missing.stderr


def test_a_slow_first_kernel_runs_its_entry_point_twice_in_either_contract_form():
    llm = load("turnaround_llm")
    for path, entry in (("library/elementwise.cu", "cutegen_forward("), ("library/softmax_ticket.cu", "cutegen_forward_ws(")):
        source = open(os.path.join(ROOT, path)).read()
        slow = llm.twice_as_slow(source)
        # The original is a static function now, the new entry point its only caller, twice.
        assert slow.count(f'extern "C" int {entry}') == 1 and "static int turnaround_once(" in slow
        wrapper = slow.split(f'extern "C" int {entry}', 1)[1]
        assert wrapper.count("turnaround_once(") == 2
    try:
        llm.twice_as_slow("__global__ void k() {}\n")
        assert False, "a kernel without an entry point must be refused"
    except SystemExit as exc:
        assert "TURNAROUND_SLOW_FIRST" in str(exc)


def test_the_stub_answers_synthesis_with_the_slow_kernel_when_asked(monkeypatch):
    kernel = os.path.join(ROOT, "library", "elementwise.cu")
    monkeypatch.setenv("TURNAROUND_SLOW_FIRST", "1")
    first = stub(user_turn("synthesis.md"), kernel)
    assert first.returncode == 0, first.stderr
    assert "static int turnaround_once(" in first.stdout


def test_an_optimisation_of_the_slow_kernel_calls_its_work_once(tmp_path):
    llm = load("turnaround_llm")
    slow = llm.twice_as_slow(open(os.path.join(ROOT, "library", "elementwise.cu")).read())
    kernel = tmp_path / "slow.cu"
    kernel.write_text(slow)
    # The optimize prompt shows the best kernel: the slow one, then (after the step) the fast one.
    answer = stub(user_turn("optimize.md") + "\n```cuda\n" + slow + "```\n", str(kernel))
    assert answer.returncode == 0, answer.stderr
    search = answer.stdout.split("<<<<<<< SEARCH\n", 1)[1].split("\n=======\n", 1)[0]
    assert slow.count(search + "\n") == 1 and "turnaround_once" in search
    replaced = slow.replace(search, answer.stdout.split("\n=======\n", 1)[1].split("\n>>>>>>> REPLACE", 1)[0])
    wrapper = replaced.split('extern "C" int cutegen_forward(', 1)[1]
    assert wrapper.count("turnaround_once(") == 1  # the work once: the given kernel's time
    again = stub(user_turn("optimize.md") + "\n```cuda\n" + replaced + "```\n", str(kernel))
    assert "turnaround probe" in again.stdout and "turnaround_once(" not in again.stdout.split("=======")[0].split("SEARCH")[1]


def test_one_optimisation_answer_of_a_step_writes_nothing_when_asked(tmp_path):
    # scripts/gpu_candidates.py --attack: the first proposal to take the count is a kernel whose entry point
    # returns without launching anything; the others are the honest edit.
    for path, entry in (("library/elementwise.cu", 'extern "C" int cutegen_forward('),
                        ("library/softmax_ticket.cu", 'extern "C" int cutegen_forward_ws(')):
        source = open(os.path.join(ROOT, path)).read()
        counter = tmp_path / f"count-{os.path.basename(path)}"
        env = dict(os.environ, TURNAROUND_KERNEL=os.path.join(ROOT, path), TURNAROUND_ATTACK_ONE=str(counter))
        prompt = user_turn("optimize.md") + "\n```cuda\n" + source + "```\n"
        answers = [subprocess.run([sys.executable, os.path.join(BENCH, "turnaround_llm.py")], input=prompt, text=True,
                                  capture_output=True, env=env) for _ in range(3)]
        assert all(a.returncode == 0 for a in answers), [a.stderr for a in answers]
        attacks = [a.stdout for a in answers if "writes nothing" in a.stdout]
        assert len(attacks) == 1 and "writes nothing" in answers[0].stdout
        search = attacks[0].split("<<<<<<< SEARCH\n", 1)[1].split("\n=======\n", 1)[0]
        replace = attacks[0].split("\n=======\n", 1)[1].split("\n>>>>>>> REPLACE", 1)[0]
        assert source.count(search + "\n") == 1 and entry in search
        edited = source.replace(search, replace)
        # One entry point, and it does nothing; the kernel's own is renamed and never called.
        assert edited.count(entry) == 1 and "{ return 0; }  // writes nothing" in edited.split(entry, 1)[1].split("\n")[0]
        assert "static int turnaround_unused(" in edited
