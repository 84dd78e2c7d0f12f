#!/usr/bin/env python3
"""A stand-in LLM for the turnaround benchmark (benchmarks/turnaround.py), an `exec:` backend.

Reads the conversation on stdin (as `cutegen prompt` prints it). A synthesis or restart prompt gets the
kernel file named by $TURNAROUND_KERNEL as its whole-file answer; an optimisation prompt gets one edit that
adds a comment line with a fresh random token after the kernel's `#include <cutegen/kernel.h>`. The kernel
is then the same code, but a new source: every candidate misses the compile cache and is compiled and
judged in full, as a real proposal would be, while the LLM's own time is nil. Any other prompt
(diagnose, repair) is an error: the kernels this stub hands out compile and pass.

With TURNAROUND_SLOW_FIRST=1 the synthesis answer is the kernel made twice as slow (its entry point renamed and
called twice by a new one; an idempotent kernel computes the same), and an optimisation prompt whose kernel
still does its work twice is answered with the edit that calls it once (with the fresh comment): the first
step's proposals are then the given kernel, twice as fast as the best, so that step judges its chosen candidate
in full and keeps it -- the step a benchmark of several candidates must time (the same kernel screens no faster
than itself, and its step then ends at screening).

With TURNAROUND_ATTACK_ONE=FILE (a file to count in; scripts/gpu_candidates.py --attack) the first optimisation
call to take FILE's count answers with an edit that makes the entry point return without launching anything: a
kernel that writes nothing, among honest proposals of the same step. A screening group must fail it alone
(`unwritten`), whichever candidate it follows on the slot."""
import fcntl
import os
import pathlib
import secrets
import sys

INCLUDE = "#include <cutegen/kernel.h>"
ENTRY_POINTS = {  # the contract's two forms: the definition's start, and the call of the renamed one
    'extern "C" int cutegen_forward(': ("cutegen_forward", "(inputs, num_inputs, outputs, num_outputs, stream)",
                                        "const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs, "
                                        "int32_t num_outputs, cudaStream_t stream"),
    'extern "C" int cutegen_forward_ws(': ("cutegen_forward_ws",
                                           "(inputs, num_inputs, outputs, num_outputs, workspace, workspace_bytes, stream)",
                                           "const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs, "
                                           "int32_t num_outputs, void* workspace, size_t workspace_bytes, "
                                           "cudaStream_t stream"),
}


SECOND_CALL = "return rc != 0 ? rc : turnaround_once("  # the slow kernel's line that does the work again


def faster_edit(conversation: str):
    """The SEARCH/REPLACE blocks that make the slow first kernel shown in `conversation` call its work once, with a
    fresh comment; None when the kernel shown does its work once already."""
    at = conversation.rfind(SECOND_CALL)
    if at < 0:
        return None
    line = "  " + conversation[at:conversation.index(";", at) + 1]
    return (f"<<<<<<< SEARCH\n{line}\n=======\n  return rc;  // turnaround probe {secrets.token_hex(8)}\n"
            f">>>>>>> REPLACE\n")


def twice_as_slow(source: str) -> str:
    """The kernel whose entry point runs its work twice: renamed to a static function, called twice by a new one."""
    for start, (name, call, params) in ENTRY_POINTS.items():
        if start in source:
            return (source.replace(start, "static int turnaround_once(", 1)
                    + f'\n// The turnaround benchmark\'s slow first kernel: the same work twice.\n'
                    + f'extern "C" int {name}({params}) {{\n'
                    + f"  const int rc = turnaround_once{call};\n"
                    + f"  {SECOND_CALL}{call[1:]};\n}}\n")
    raise SystemExit("turnaround_llm: TURNAROUND_SLOW_FIRST needs a kernel whose entry point starts with "
                     + " or ".join(repr(s) for s in ENTRY_POINTS))


def first_to_count(counter: str) -> bool:
    """True for the first caller to increment the count in `counter` (proposals are asked for in parallel)."""
    with open(counter, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        count = len(f.read())
        f.write(".")
        return count == 0


def writes_nothing_edit(conversation: str):
    """The SEARCH/REPLACE block that puts an entry point doing nothing before the kernel's own, renamed (None when
    the kernel shown has no entry point this can rename)."""
    for start, (name, _, params) in ENTRY_POINTS.items():
        at = conversation.rfind(start)
        if at < 0:
            continue
        line = conversation[at:conversation.index("\n", at)]  # edits replace whole lines
        return (f"<<<<<<< SEARCH\n{line}\n=======\n"
                f'extern "C" int {name}({params}) {{ return 0; }}  // writes nothing {secrets.token_hex(8)}\n'
                f"{line.replace(start, 'static int turnaround_unused(', 1)}\n>>>>>>> REPLACE\n")
    return None


def last_user_turn(text: str) -> str:
    return text.rsplit("=== user ===\n", 1)[-1]


def answer(text: str, kernel_path: str) -> str:
    last = last_user_turn(text)
    if "faster with **exactly one**" in last:  # an optimisation step (each candidate of one is asked the same way)
        counter = os.environ.get("TURNAROUND_ATTACK_ONE")
        if counter and first_to_count(counter):
            if (edit := writes_nothing_edit(last)) is None:
                raise SystemExit("turnaround_llm: TURNAROUND_ATTACK_ONE: no entry point in the kernel shown")
            return ("OPTIMIZATION: skip the work (an attack: the entry point launches nothing)\n\n"
                    "EXPECTED: nothing written\n\n" + edit)
        if (edit := faster_edit(last)) is not None:
            return ("OPTIMIZATION: the work once instead of twice (the stand-in's slow first kernel undone)\n\n"
                    "EXPECTED: twice as fast\n\n" + edit)
        return (f"OPTIMIZATION: none: the same kernel as a new source, so the compiler and the judge run in full\n\n"
                f"EXPECTED: the same time (this is the turnaround benchmark's stand-in LLM)\n\n"
                f"<<<<<<< SEARCH\n{INCLUDE}\n=======\n{INCLUDE}\n"
                f"// turnaround probe {secrets.token_hex(8)}\n>>>>>>> REPLACE\n")
    if "Write the first CuTe kernel" in last or "Write the complete `.cu` file" in last:
        source = pathlib.Path(kernel_path).read_text()
        if INCLUDE not in source:
            raise SystemExit(f"turnaround_llm: {kernel_path} has no `{INCLUDE}` line to edit later")
        if os.environ.get("TURNAROUND_SLOW_FIRST") == "1":
            source = twice_as_slow(source)
        return f"PLAN: the kernel given to the benchmark\n\n```cuda\n{source}```\n"
    raise SystemExit("turnaround_llm: a prompt that is neither synthesis nor optimisation (a diagnosis or repair: "
                     "the kernel given by $TURNAROUND_KERNEL failed; see the run's report)")


def main() -> int:
    kernel = os.environ.get("TURNAROUND_KERNEL", "")
    if not kernel or not pathlib.Path(kernel).is_file():
        print("turnaround_llm: set TURNAROUND_KERNEL to the kernel file synthesis should answer with", file=sys.stderr)
        return 2
    sys.stdout.write(answer(sys.stdin.read(), kernel))
    return 0


if __name__ == "__main__":
    sys.exit(main())
