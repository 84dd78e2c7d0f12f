#!/usr/bin/env python3
"""A stand-in LLM for the turnaround benchmark (benchmarks/turnaround.py), an `exec:` backend.

Reads the conversation on stdin (as `cutegen prompt` prints it). A synthesis or restart prompt gets the
kernel file named by $TURNAROUND_KERNEL as its whole-file answer; an optimisation prompt gets one edit that
adds a comment line with a fresh random token after the kernel's `#include <cutegen/kernel.h>`. The kernel
is then the same code, but a new source: every candidate misses the compile cache and is compiled and
judged in full, as a real proposal would be, while the LLM's own time is nil. Any other prompt
(diagnose, repair) is an error: the kernels this stub hands out compile and pass."""
import os
import pathlib
import secrets
import sys

INCLUDE = "#include <cutegen/kernel.h>"


def last_user_turn(text: str) -> str:
    return text.rsplit("=== user ===\n", 1)[-1]


def answer(text: str, kernel_path: str) -> str:
    last = last_user_turn(text)
    if "faster with **exactly one**" in last:  # an optimisation step (each candidate of one is asked the same way)
        return (f"OPTIMIZATION: none: the same kernel as a new source, so the compiler and the judge run in full\n\n"
                f"EXPECTED: the same time (this is the turnaround benchmark's stand-in LLM)\n\n"
                f"<<<<<<< SEARCH\n{INCLUDE}\n=======\n{INCLUDE}\n"
                f"// turnaround probe {secrets.token_hex(8)}\n>>>>>>> REPLACE\n")
    if "Write the first CuTe kernel" in last or "Write the complete `.cu` file" in last:
        source = pathlib.Path(kernel_path).read_text()
        if INCLUDE not in source:
            raise SystemExit(f"turnaround_llm: {kernel_path} has no `{INCLUDE}` line to edit later")
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
