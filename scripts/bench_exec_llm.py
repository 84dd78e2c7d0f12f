#!/usr/bin/env python3
"""A stand-in LLM for GPU suite runs of `cutegen bench` (`--llm exec:'python3 scripts/bench_exec_llm.py'`):
reads the conversation on stdin, answers a synthesis prompt for one of the project's problems with the
matching honest example kernel, and every optimisation prompt with NO_FURTHER_CHANGE. It makes a
suite's scheduling, GPU lanes and judge runs real without an LLM's cost or variance (scripts/gpu_bench_suites.sh)."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
KERNELS = {
    "relu": "relu_vec.cu",
    "softmax_rows": "softmax_rows.cu",
    "row_sum": "row_sum_two_pass.cu",
    "layernorm": "layernorm_affine.cu",
    "scale_add": "scale_add.cu",
    "split_halves": "split_halves.cu",
    "matmul_square": "gemm_tiled.cu",
}


def main() -> int:
    text = sys.stdin.read()
    # The last user turn decides: synthesis names the problem in a heading, optimisation asks for one change.
    last = text.rsplit("=== user ===\n", 1)[-1]
    if "faster with **exactly one**" in last:
        print("NO_FURTHER_CHANGE: this stand-in LLM only supplies the example kernels (suite scheduling run)")
        return 0
    m = re.search(r"^# The problem: (\S+)", last, re.M) or re.search(r"^# The problem: (\S+)", text, re.M)
    # Copies of a problem for a longer suite (gpu_bench_suites.sh: LANES_COPIES) are named NAME__cN.
    name = re.sub(r"__c\d+$", "", m.group(1)) if m else ""
    kernel = KERNELS.get(name)
    if kernel is None:
        print(f"bench_exec_llm: no example kernel for problem {name!r}", file=sys.stderr)
        return 1
    source = (ROOT / "attacks" / "honest" / kernel).read_text()  # the judge suite's honest kernels
    print(f"PLAN: the project's honest example kernel {kernel}.\n\n```cuda\n{source}```")
    return 0


if __name__ == "__main__":
    sys.exit(main())
