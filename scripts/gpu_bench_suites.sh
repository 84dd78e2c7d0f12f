#!/usr/bin/env bash
# GPU checks of `cutegen bench` (scripts/gpu-check --stages suites), what CI's CPU tests cannot show:
#  1. baselines: `bench --baselines-only` over the project's problems, and over KernelBench level 1 and 2
#     when $KERNELBENCH_DIR names a KernelBench checkout (its KernelBench/level1, level2): which problems
#     load, and the eager/torch.compile times of tasks 19-32 against a direct PyTorch measurement;
#  2. lanes: an exec-backed suite (scripts/bench_exec_llm.py answers with the honest example kernels)
#     of seven problems on one GPU, then on two (when there are two): tasks per hour, recorded;
#  3. kill -9 of the scheduler mid-suite, then the same command: finishes, no evaluation done twice;
#  4. seeds-kb (not in the default parts): `bench <level1> --llm none` (SEEDS_LEVEL=2: level 2), each
#     problem with a seed judged and exported, the rest recorded with the one line why not.
# Usage: scripts/gpu_bench_suites.sh CUTEGEN OUT
#   SUITES_PARTS  which parts, comma-separated (default all): baselines-own,baselines-kb,lanes,kill9
#   KB_JOBS       tasks in flight for the KernelBench baselines (default 1 per GPU: a slot holds its GPU's
#                 lock for the whole problem, torch.compile included, so more slots only wait)
#   LANES_STEPS   optimisation steps per task in the lanes and kill -9 suites (default 1)
#   LANES_JOBS    tasks in flight per GPU there (default 2)
#   LANES_COPIES  each of the seven problems this many times in the lanes suites (NAME__cN; default 1): a
#                 longer suite, so the first wave of compiles weighs less in tasks/hour
#   LANES_PRECOMPILE=1  compile the kernels into each run's fresh cache before its clock starts: both runs
#                 then do the same GPU-side work without nvcc (nvcc scales with -j, not with GPUs)
#   KB_COMPARE=0  skip the direct-PyTorch comparison of tasks 19-32 (run gpu_bench_compare.py yourself)
#   KB_FILTER     only these KernelBench tasks (bench --filter, e.g. 19-32: the tasks the comparison checks)
#   KB_TIMEOUT_S  stop the KernelBench baselines after this long (the suite is resumable: the same
#                 command with the same OUT continues where it stopped; default: no limit)
#   SEEDS_LEVEL (1 or 2, default 1), SEEDS_FILTER, SEEDS_JOBS (default 8: tasks in flight; a waiting task keeps only its CUDA context on
#                 the GPU), SEEDS_TUNE (never|auto, default never), SEEDS_TIMEOUT_S (stop after this long,
#                 resumable: carry OUT/suites/seeds-kb into the next device call and run the same command),
#                 SEEDS_ARGS (more bench options, e.g. "--runs 30 --trials 2": a level's sweep in less device time)
set -uo pipefail
cutegen="$1"
out="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out/suites"
status=0
gpus=$(nvidia-smi -L | grep -c '^GPU ')
llm="exec:python3 $root/scripts/bench_exec_llm.py"
own="$root/problems"
pick="relu,softmax_rows,row_sum,layernorm,scale_add,split_halves,matmul_square"
parts="${SUITES_PARTS:-baselines-own,baselines-kb,lanes,kill9}"
part() { [[ ",$parts," == *",$1,"* ]]; }
# wait_for_idle_gpu SECONDS: until no process holds a CUDA context (nvidia-smi's compute apps), at most SECONDS.
wait_for_idle_gpu() {
  local until=$(( $(date +%s) + $1 )) apps
  while :; do
    apps=$(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader 2>/dev/null)
    [[ -z "$apps" ]] && return 0
    (( $(date +%s) >= until )) && { echo "the GPU is still in use after $1 s: $apps" | tr '\n' ' '; echo; return 1; }
    sleep 5
  done
}

if part baselines-own; then
  echo "-- baselines of the project's problems"
  "$cutegen" bench "$own" --baselines-only --out "$out/suites/baselines-own" --quiet >"$out/suites/baselines-own.md" \
    2>"$out/suites/baselines-own.err" || status=1
  head -8 "$out/suites/baselines-own.md"
fi

if part seeds-kb && [[ -n "${KERNELBENCH_DIR:-}" ]]; then
  level="${SEEDS_LEVEL:-1}"
  echo "-- the seed path on KernelBench level $level (--llm none, tune ${SEEDS_TUNE:-never})"
  start=$(date +%s)
  limit=()
  [[ -n "${SEEDS_TIMEOUT_S:-}" ]] && limit=(timeout --signal=INT "$SEEDS_TIMEOUT_S")
  # shellcheck disable=SC2086  # SEEDS_ARGS is a list of options
  "${limit[@]}" "$cutegen" bench "$KERNELBENCH_DIR/KernelBench/level$level" ${SEEDS_FILTER:+--filter "$SEEDS_FILTER"} \
    --llm none --tune "${SEEDS_TUNE:-never}" -j "${SEEDS_JOBS:-8}" ${SEEDS_ARGS:-} --out "$out/suites/seeds-kb" --quiet \
    >"$out/suites/seeds-kb.md" 2>"$out/suites/seeds-kb.err"
  rc=$?
  echo "took $(( $(date +%s) - start )) s (exit $rc)"; "$cutegen" bench status "$out/suites/seeds-kb" | head -12
  if ((rc != 0)); then
    echo "not all done or not all correct (exit $rc): the same command with the same OUT (carried) continues"
    # A cut run's table is written by `bench report` (bench prints its own only at the end). The tasks it killed
    # may hold the GPU a while longer (2026-12-05, an H100: a killed task's worker and runner, about two
    # minutes): whatever runs next must find it idle, or the judge refuses to time.
    "$cutegen" bench report "$out/suites/seeds-kb" >"$out/suites/seeds-kb.md" 2>>"$out/suites/seeds-kb.err"
    wait_for_idle_gpu 240
  fi
fi

if part baselines-kb && [[ -n "${KERNELBENCH_DIR:-}" ]]; then
  echo "-- baselines of KernelBench level 1 and 2 ($KERNELBENCH_DIR)"
  start=$(date +%s)
  limit=()
  [[ -n "${KB_TIMEOUT_S:-}" ]] && limit=(timeout --signal=INT "$KB_TIMEOUT_S")
  "${limit[@]}" "$cutegen" bench "$KERNELBENCH_DIR/KernelBench/level1" "$KERNELBENCH_DIR/KernelBench/level2" \
    ${KB_FILTER:+--filter "$KB_FILTER"} --baselines-only -j "${KB_JOBS:-$gpus}" --out "$out/suites/baselines-kb" --quiet \
    >"$out/suites/baselines-kb.md" 2>"$out/suites/baselines-kb.err"
  rc=$?
  echo "took $(( $(date +%s) - start )) s (exit $rc)"; "$cutegen" bench status "$out/suites/baselines-kb" | head -30
  if ((rc == 0)) && [[ "${KB_COMPARE:-1}" == 1 ]]; then
    echo "-- tasks 19-32 of level 1: bench's eager/compile against a direct PyTorch measurement (3% expected)"
    python3 "$root/scripts/gpu_bench_compare.py" "$out/suites/baselines-kb" --filter 19-32 || status=1
  else
    ((rc == 0)) || status=1
    ((rc == 0)) || echo "the baselines stopped before the end: run again with the same OUT to continue (no comparison yet)"
  fi
fi

lanes_problems="$out/suites/lanes-problems"
rm -rf "$lanes_problems"; mkdir -p "$lanes_problems"
for p in ${pick//,/ }; do
  for ((c = 1; c <= ${LANES_COPIES:-1}; c++)); do
    if [[ "${LANES_COPIES:-1}" == 1 ]]; then cp "$own/$p.py" "$lanes_problems/"; continue; fi
    # A line that makes each copy's file hash its own: copies share no cached baselines, as distinct
    # problems would not (in a one-GPU run the second copy found the first's; in a two-GPU run both
    # ran at once and measured — which made one GPU look faster than it is).
    { cat "$own/$p.py"; echo "# copy $c for a longer lanes suite"; } >"$lanes_problems/${p}__c$c.py"
  done
done
run_lanes() {  # run_lanes NAME GPUS JOBS
  local dir="$out/suites/$1"
  rm -rf "$dir" "$dir.cache" "$dir.inductor" "$dir.triton"
  if [[ "${LANES_PRECOMPILE:-0}" == 1 ]]; then
    for k in relu_vec softmax_rows row_sum_two_pass layernorm_affine scale_add split_halves gemm_tiled; do
      CUTEGEN_CACHE_DIR="$dir.cache" "$cutegen" compile "$root/library/$k.cu" >/dev/null 2>&1 &
    done
    wait
  fi
  local start=$(date +%s.%N)
  # Each run starts cold — its own cutegen cache (compiles, baselines, calibration) and torch's
  # compile caches — so the one-GPU and two-GPU runs do the same work and tasks/hour compares.
  # torch's FX graph cache off: copies have the same graph, and would hit it only in the one-GPU run.
  CUTEGEN_CACHE_DIR="$dir.cache" TORCHINDUCTOR_CACHE_DIR="$dir.inductor" TRITON_CACHE_DIR="$dir.triton" \
  TORCHINDUCTOR_FX_GRAPH_CACHE=0 TORCHINDUCTOR_AUTOGRAD_CACHE=0 \
  "$cutegen" bench "$lanes_problems" --llm "$llm" --steps "${LANES_STEPS:-1}" --profile-from never --tune never --start scratch --gpus "$2" -j "$3" \
    --out "$dir" --quiet >"$dir.md" 2>"$dir.err" || status=1
  local end=$(date +%s.%N)
  "$cutegen" bench report "$dir" --format json >"$dir.json"
  python3 - "$dir.json" "$start" "$end" "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c = s["counts"]
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"{sys.argv[4]}: {c['correct']}/{c['total']} correct, {c['total'] / wall * 3600:.1f} tasks/hour "
      f"(wall {wall:.0f} s), lanes: " + ", ".join(f"{l['lane']} {l['tasks']} tasks {l['busy_s']:.0f} s busy" for l in s["lanes"]))
PY
}
if part lanes; then
  echo "-- an exec-backed suite of seven problems: one GPU, then two"
  run_lanes lanes-1gpu 0 "${LANES_JOBS:-2}"
  if ((gpus >= 2)); then run_lanes lanes-2gpu 0,1 $((2 * ${LANES_JOBS:-2})); else echo "one GPU here: the two-GPU run needs nvidia-h200-x2"; fi
fi

part kill9 || exit $status
echo "-- kill -9 of the scheduler mid-suite, then the same command"
dir="$out/suites/kill9"
rm -rf "$dir"
"$cutegen" bench "$lanes_problems" --llm "$llm" --steps "${LANES_STEPS:-1}" --profile-from never --tune never --start scratch -j 2 --out "$dir" --quiet \
  >/dev/null 2>&1 &
pid=$!
sleep "${KILL_AFTER_S:-40}"
kill -9 $pid; wait $pid 2>/dev/null
sleep 3  # the tasks die with their scheduler (parent-death signal)
"$cutegen" bench "$lanes_problems" --llm "$llm" --steps "${LANES_STEPS:-1}" --profile-from never --tune never --start scratch -j 2 --out "$dir" --quiet \
  >"$dir.md" 2>"$dir.err" || status=1
python3 - "$dir" <<'PY' || status=1
import collections, json, pathlib, sys
d = pathlib.Path(sys.argv[1])
bad = []
for ev in d.glob("tasks/*/events.jsonl"):
    keys = collections.Counter()
    for line in ev.read_text().splitlines():
        e = json.loads(line)
        if e.get("type") in ("eval", "llm", "problem"):
            keys[(e["type"], e.get("key"))] += 1
    bad += [f"{ev.parent.name}: {k} x{n}" for k, n in keys.items() if n > 1]
results = [json.loads(p.read_text()) for p in d.glob("results/*.json")]
print(f"kill -9: {len(results)} tasks recorded, verdicts {collections.Counter(r['verdict'] for r in results)}, "
      f"attempts {sorted(r['attempts'] for r in results)}")
if bad:
    print("done twice:", bad); sys.exit(1)
print("nothing done twice")
PY
exit $status
