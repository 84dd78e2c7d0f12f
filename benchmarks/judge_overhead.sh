#!/usr/bin/env bash
# The cost of the judge's redesign (docs/judge.md) on a KernelBench-size problem: `cutegen eval` of the
# row-softmax example on a 4096 x 393216 fp32 softmax (6.4 GB per tensor), by an old and a new build,
# same flags, each with a cold and then a warm compile cache (eval_wall_time.sh).
# Usage: judge_overhead.sh NEW_CUTEGEN OLD_CUTEGEN OUT_DIR   (the new one three times: without the other shapes
# under each comparison engine, then with --generalize 2 under each)
# OVERHEAD_ROWS: some of the rows, in order (default all five).
# OLD_CUTEGEN: a build of the commit before the redesign (scripts/gpu-check --stages overhead builds one
# from .old-judge/, which scripts/export-old-judge fills).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
new="$1"; old="$2"; out="$3"; mkdir -p "$out"
problem="$root/problems/softmax_large.py"
kernel="$root/attacks/honest/softmax_rows.cu"
for which in ${OVERHEAD_ROWS:-old new new-fused new-generalize new-fused-generalize}; do
  bin="$old"; [[ $which == new* ]] && bin="$new"
  # The generalization trials (the new judge only; two by default since 2026-12-06): the new judge without
  # them, then with them, so their cost is the difference.
  args=""; [[ $which == new* ]] && args="--generalize 0"; [[ $which == *-generalize ]] && args="--generalize 2"
  # new-fused: the full checks' element test as one Triton kernel (CUTEGEN_COMPARE=fused, fused_compare.py).
  engine=torch; [[ $which == new-fused* ]] && engine=fused
  echo "== $which judge ($bin${args:+ $args})"
  CUTEGEN_COMPARE=$engine EVAL_ARGS="$args" "$root/benchmarks/eval_wall_time.sh" "$bin" "$out/$which" "$problem" "$kernel" softmax_large
done
