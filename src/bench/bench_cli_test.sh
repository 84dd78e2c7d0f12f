#!/usr/bin/env bash
# `cutegen bench` end to end on the CPU: arguments, a --baselines-only suite timed on the CPU (the
# real worker), `bench status`/`report`, and the scheduler with a stand-in for `cutegen optimize`
# (src/bench/testdata/fake_optimize.sh) over two pretend GPUs: kill -9 mid-suite, rerun, nothing
# done twice.
set -uo pipefail
cutegen="$1"
src="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export CUTEGEN_CACHE_DIR="$tmp/cache" XDG_CONFIG_HOME="$tmp/xdg" CUTEGEN_LOCK_DIR="$tmp/locks"
unset CUTEGEN_CONFIG CUDA_VISIBLE_DEVICES
fails=0
check() {  # check NAME CONDITION...
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
one_line() { test "$(grep -c . <<<"$1")" -eq 1; }

# --- arguments ---------------------------------------------------------------------------------
out=$("$cutegen" bench --help); check "bench --help names status and report" grep -q 'bench status DIR' <<<"$out"
for o in --baselines-only --gpus --jobs --filter --exclude --limit --shard --slurm --sbatch-arg --shards --suite-max-cost --tune --start --examples; do
  check "bench --help shows $o" grep -q -- "$o" <<<"$out"
done
out=$("$cutegen" bench status --help); check "bench status --help" grep -q 'DIR\|dir' <<<"$out"
out=$("$cutegen" bench report --help); check "bench report --help shows --format" grep -q -- '--format' <<<"$out"

mkdir -p "$tmp/p"
cp "$src/problems/relu.py" "$src/problems/scale_add.py" "$src/problems/layernorm.py" "$tmp/p/"
cat >"$tmp/p/broken.py" <<'PY'
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x
def get_inputs():
    raise ValueError("no inputs today")
def get_init_inputs():
    return []
PY
bad() {  # bad NAME ARGS...: exit 2 and one line
  local name="$1"; shift
  err=$("$cutegen" bench "$@" 2>&1 >/dev/null); rc=$?
  check "$name: exit 2" test $rc -eq 2
  check "$name: one line" one_line "$err"
}
bad "no --out" "$tmp/p" --baselines-only
bad "a problem that does not exist" "$tmp/nothing.py" --baselines-only --out "$tmp/x"
bad "an empty glob" "$tmp/p/*.nothing" --baselines-only --out "$tmp/x"
bad "a backwards range" "$tmp/p" --baselines-only --out "$tmp/x" --filter 32-19
bad "a filter that leaves nothing" "$tmp/p" --baselines-only --out "$tmp/x" --filter nothing_matches
bad "a bad shard" "$tmp/p" --baselines-only --out "$tmp/x" --shard 2/2
bad "--device cpu without --baselines-only" "$tmp/p" --llm replay:x --device cpu --out "$tmp/x"
bad "no --llm" "$tmp/p" --out "$tmp/x"
bad "--dry-run without --slurm" "$tmp/p" --baselines-only --out "$tmp/x" --dry-run
bad "an unknown option" "$tmp/p" --baselines-only --out "$tmp/x" --bogus
bad "-j 0" "$tmp/p" --baselines-only --out "$tmp/x" -j 0
bad "a bad --tune" "$tmp/p" --llm none --out "$tmp/x" --tune sometimes
bad "a bad --start" "$tmp/p" --llm none --out "$tmp/x" --start middle
bad "a --limit that is no number" "$tmp/p" --baselines-only --out "$tmp/x" --limit many
check "nothing was written for bad arguments" test ! -e "$tmp/x"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  err=$("$cutegen" bench "$tmp/p" --baselines-only --out "$tmp/x" 2>&1 >/dev/null); rc=$?
  check "no GPU: exit 1" test $rc -eq 1
  check "no GPU: said in one line" one_line "$err"
  check "no GPU: says so" grep -q 'no GPU' <<<"$err"
fi
err=$("$cutegen" bench status "$tmp/nothing" 2>&1); rc=$?
check "status of a non-suite fails with one line" test $rc -eq 1 -a "$(grep -c . <<<"$err")" -eq 1

out=$("$cutegen" bench "$tmp/p" --baselines-only --device cpu --out "$tmp/s" --slurm --shards 2 --dry-run 2>&1); rc=$?
check "slurm --dry-run succeeds" test $rc -eq 0
check "slurm --dry-run prints a 2-task array job" grep -q '^#SBATCH --array=0-1$' <<<"$out"
check "slurm --dry-run: CPU shards ask for no GPU" test "$(grep -c -- '--gres' <<<"$out")" -eq 0
check "slurm --dry-run: each shard runs its part quietly" grep -q -- "--shard \"\${SLURM_ARRAY_TASK_ID}/2\" --quiet" <<<"$out"
check "slurm --dry-run writes nothing" test ! -e "$tmp/s"

# Submission through a stand-in sbatch (the real Slurm is bench_slurm's): the script is written into
# the suite, sbatch gets it, the job id is kept; a refusal by sbatch is one line.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "$@" >"%s/sbatch.args"\necho 4242\n' "$tmp" >"$tmp/bin/sbatch"
chmod +x "$tmp/bin/sbatch"
out=$(PATH="$tmp/bin:$PATH" "$cutegen" bench "$tmp/p" --baselines-only --device cpu --out "$tmp/sb" --slurm --shards 2 2>&1); rc=$?
check "slurm: submitted" test $rc -eq 0
check "slurm: sbatch got the suite's script" grep -q -- "--parsable $tmp/sb/slurm/bench.sbatch" "$tmp/sbatch.args"
check "slurm: the job id is kept" test "$(cat "$tmp/sb/slurm/job")" = 4242
check "slurm: says how to follow it" grep -q "bench status $tmp/sb" <<<"$out"
check "slurm: the suite exists before any shard runs" grep -q '"mode": "baselines"' "$tmp/sb/suite.json"
printf '#!/bin/sh\necho "sbatch: error: invalid partition specified: gpu" >&2\nexit 1\n' >"$tmp/bin/sbatch"
err=$(PATH="$tmp/bin:$PATH" "$cutegen" bench "$tmp/p" --baselines-only --device cpu --out "$tmp/sb" --slurm 2>&1); rc=$?
check "slurm: a refused submission exits 1 with one line" test $rc -eq 1 -a "$(grep -c . <<<"$err")" -eq 1
check "slurm: with sbatch's reason" grep -q 'invalid partition specified' <<<"$err"

# --- baselines on the CPU, with the real worker ---------------------------------------------------
export CUTEGEN_PROBLEM_SCALE=64
"$cutegen" bench "$tmp/p" --baselines-only --device cpu --runs 5 --out "$tmp/b" >"$tmp/b.out" 2>"$tmp/b.err"; rc=$?
check "baselines suite exits 0" test $rc -eq 0 || cat "$tmp/b.err"
check "baselines: the table is printed" grep -q '^| relu | measured |' "$tmp/b.out"
check "baselines: CPU times are labelled" grep -q 'CPU times' "$tmp/b.out"
check "baselines: a problem that does not import is problem_error" grep -q '^| broken | problem_error |' "$tmp/b.out"
check "baselines: with the worker's message" grep -q 'broken (problem_error): .*no inputs today' "$tmp/b.out"
for f in summary.md summary.csv summary.json report.html suite.json results/relu.json; do check "baselines: $f written" test -s "$tmp/b/$f"; done
out=$("$cutegen" bench report "$tmp/b" --format json)
check "report --format json counts 3 measured and 1 problem error" python3 -c '
import json, sys
s = json.load(sys.stdin)
c = s["counts"]
assert (c["measured"], c["problem_error"], c["total"]) == (3, 1, 4), c
relu = next(t for t in s["tasks"] if t["name"] == "relu")
assert relu["device"] == "cpu" and relu["eager_ms"] > 0, relu
assert relu.get("floor_ms") is None and relu.get("physics_speedup") is None, relu  # no roofline on a CPU
assert relu["flops"] > 0 and relu["min_bytes"] > 0, relu
' <<<"$out"
out=$("$cutegen" bench report "$tmp/b" --format csv); check "report --format csv: header and 4 rows" test "$(wc -l <<<"$out")" -eq 5
out=$("$cutegen" bench status "$tmp/b"); check "status counts" grep -q '3 measured, 1 problem errors' <<<"$out"
"$cutegen" bench "$tmp/p" --baselines-only --device cpu --runs 5 --out "$tmp/b" --quiet >"$tmp/b2.out" 2>&1; rc=$?
check "rerun of a finished suite exits 0" test $rc -eq 0
check "rerun of a finished suite runs nothing" test "$(python3 -c 'import json; print(json.load(open("'"$tmp"'/b/results/relu.json"))["attempts"])')" -eq 1
err=$("$cutegen" bench "$tmp/p" --baselines-only --device cpu --runs 6 --out "$tmp/b" 2>&1 >/dev/null); rc=$?
check "rerun with other settings is refused" test $rc -eq 1 -a "$(grep -c . <<<"$err")" -eq 1
check "rerun with other settings names the setting" grep -q 'runs was 5, now 6' <<<"$err"
unset CUTEGEN_PROBLEM_SCALE

# --- the scheduler with a stand-in optimize: two lanes, kill -9, rerun -----------------------------
mkdir -p "$tmp/q"
for n in 1_alpha 2_beta 3_gamma 4_delta 5_eps 6_bad 7_crash; do
  printf 'class Model:\n    pass\ndef get_inputs():\n    return []\n' >"$tmp/q/$n.py"
done
export CUTEGEN_BENCH_TASK_EXE="$src/src/bench/testdata/fake_optimize.sh" BENCH_LEDGER="$tmp/ledger" FAKE_UNITS=4 FAKE_UNIT_S=0.25
export CUDA_VISIBLE_DEVICES=0,1  # two pretend GPUs
: >"$BENCH_LEDGER"
"$cutegen" bench "$tmp/q" --llm replay:none --out "$tmp/f" -j 3 --quiet >/dev/null 2>&1 &
pid=$!
for _ in $(seq 50); do [ "$(grep -c . "$BENCH_LEDGER")" -ge 3 ] && break; sleep 0.1; done
kill -9 $pid; wait $pid 2>/dev/null
check "kill -9 came mid-suite" test "$(grep -c . "$BENCH_LEDGER")" -lt 20
# The stand-ins notice their scheduler is gone within a unit; then every run directory lock is free.
for _ in $(seq 50); do
  busy=0
  for l in "$tmp"/f/tasks/*/.cutegen-lock; do flock -n "$l" true || busy=1; done
  [ $busy -eq 0 ] && break; sleep 0.1
done
check "the tasks ended with their scheduler" test $busy -eq 0
"$cutegen" bench "$tmp/q" --llm replay:none --out "$tmp/f" -j 3 >"$tmp/f.out" 2>"$tmp/f.err"; rc=$?
check "the rerun finishes the suite" test $rc -eq 0 || cat "$tmp/f.err"
for n in 1_alpha 2_beta 3_gamma 4_delta 5_eps; do
  check "$n: each unit done exactly once" test "$(grep -c "^$n unit" "$BENCH_LEDGER")" -eq 4 -a \
    "$(grep "^$n unit" "$BENCH_LEDGER" | cut -d' ' -f1-3 | sort -u | wc -l)" -eq 4
done
check "some task was resumed, not restarted" grep -q '==== resumed attempt' "$tmp"/f/logs/*.log
check "both lanes ran tasks" test "$(grep -o 'cvd=[01]' "$BENCH_LEDGER" | sort -u | wc -l)" -eq 2
# Each lane's tasks get that lane's device lock (named after the GPU: its index here, its UUID where nvidia-smi runs).
check "each lane has one device lock of its own" test "$(grep -o 'cvd=[01] lock=[^ ]*' "$BENCH_LEDGER" | sort -u | wc -l)" -eq 2 -a \
  "$(grep -o 'lock=[^ ]*' "$BENCH_LEDGER" | sort -u | wc -l)" -eq 2
check "the table shows 5 correct" grep -q '5 correct' "$tmp/f.out"
check "a problem error is that task's verdict" grep -q '^| 6_bad | problem_error |' "$tmp/f.out"
check "a crash is that task's verdict, with how it ended" grep -q '7_crash (crashed): killed by signal 11' "$tmp/f.out"
check "fast_p over eager: 5 of 7 tasks are correct and 2x faster" grep -q '^| fast_1.5 | 0.714 | 0.000 |' "$tmp/f.out"
out=$("$cutegen" bench status "$tmp/f"); check "status after the rerun" grep -q '5 correct, 0 without a correct kernel, 1 problem errors, 1 crashed, 0 running, 0 not started' <<<"$out"
: >"$BENCH_LEDGER"
"$cutegen" bench "$tmp/q" --llm replay:none --out "$tmp/f" -j 3 --quiet >/dev/null 2>&1; rc=$?
check "a third run does nothing" test $rc -eq 0 -a ! -s "$BENCH_LEDGER"

# Issue 32: a file name reaches the terminal and summary.md with its escape sequences shown, not
# obeyed; one damaged results/*.json is skipped with one line, not fatal to status and report.
mkdir -p "$tmp/e"
evil=$'9_bad\e]8;;http:x\a\e[2J\rok'  # OSC 8 (a link), BEL, clear the screen, CR
cp "$tmp/q/1_alpha.py" "$tmp/e/$evil.py" && cp "$tmp/q/2_beta.py" "$tmp/e/"
raw=$'[\e\r\a]'
"$cutegen" bench "$tmp/e" --llm replay:none --out "$tmp/ee" -j 1 >"$tmp/e.out" 2>"$tmp/e.err"; rc=$?
check "a hostile file name: the suite finishes" test $rc -eq 0 || cat "$tmp/e.err"
check "a hostile file name: no raw control character on stdout or stderr" bash -c "test -s '$tmp/e.out' && ! grep -q '$raw' '$tmp/e.out' '$tmp/e.err'"
check "a hostile file name: shown escaped in the table" grep -qF '| 9_bad\x1b]8;;http:x\x07\x1b[2J\rok | problem_error |' "$tmp/e.out"
check "a hostile file name: summary.md holds it escaped" bash -c "test -s '$tmp/ee/summary.md' && ! grep -q '$raw' '$tmp/ee/summary.md'"
out=$("$cutegen" bench status "$tmp/ee" 2>&1)
check "a hostile file name: status shows it escaped" grep -qF 'problem_error 9_bad\x1b]8;;http:x\x07\x1b[2J\rok: ' <<<"$out"
check "a hostile file name: status writes no raw control character" bash -c "test -n \"\$1\" && ! grep -q '$raw' <<<\"\$1\"" _ "$out"
printf '{"verdict": "corr' >"$tmp/ee/results/2_beta.json"
out=$("$cutegen" bench status "$tmp/ee" 2>"$tmp/st.err"); rc=$?
check "a damaged record: status exits 0" test $rc -eq 0
check "a damaged record: one line names the file and what is wrong" test "$(cat "$tmp/st.err")" = \
  "bench: skipped $tmp/ee/results/2_beta.json: not JSON (cut short or edited?)"
check "a damaged record: the counts say one was skipped" grep -q '0 correct, .* 1 problem errors, .*; 1 skipped (damaged record)' <<<"$out"
out=$("$cutegen" bench report "$tmp/ee" 2>"$tmp/rp.err"); rc=$?
check "a damaged record: report exits 0" test $rc -eq 0
check "a damaged record: report names it on stderr" grep -q "skipped $tmp/ee/results/2_beta.json" "$tmp/rp.err"
check "a damaged record: the table says one task was skipped" grep -qF '**1 task skipped**' <<<"$out"
check "a damaged record: summary.json counts it" python3 -c '
import json; s = json.load(open("'"$tmp"'/ee/summary.json"))
assert s["counts"]["skipped_damaged"] == 1 and s["counts"]["total"] == 1, s["counts"]
assert s["skipped"][0]["task"] == "2_beta", s["skipped"]'
out=$(cd "$tmp" && "$cutegen" report ee 2>&1); rc=$?
check "a damaged record: the suite page is written" test $rc -eq 0 -a -s "$tmp/ee.html"

# A failure every task would share (no API key) stops the suite instead of failing every task.
mkdir -p "$tmp/k" && cp "$tmp/q/1_alpha.py" "$tmp/k/0_nokey.py" && cp "$tmp/q/2_beta.py" "$tmp/k/"
err=$("$cutegen" bench "$tmp/k" --llm replay:none --out "$tmp/kk" -j 1 --quiet 2>&1 >/dev/null); rc=$?
check "a setup failure stops the suite with exit 1" test $rc -eq 1
check "and says why" grep -q 'OPENAI_API_KEY is not set' <<<"$err"
check "the other task was not started" test ! -s "$tmp/kk/tasks/2_beta/events.jsonl"

# Without an LLM, a problem with no seed is that task's answer (optimize exits 3), not a failure every
# task shares: the suite goes on.
mkdir -p "$tmp/n" && cp "$tmp/q/1_alpha.py" "$tmp/n/0_noseed.py" && cp "$tmp/q/2_beta.py" "$tmp/n/"
"$cutegen" bench "$tmp/n" --llm none --out "$tmp/nn" -j 1 >"$tmp/n.out" 2>&1; rc=$?
check "no seed: the suite finishes" test $rc -eq 0 || cat "$tmp/n.out"
check "no seed: the task has no correct kernel, stop reason no_seed" python3 -c '
import json; r = json.load(open("'"$tmp"'/nn/results/0_noseed.json"))
assert (r["verdict"], r["stop_reason"]) == ("no_correct_kernel", "no_seed"), r
assert r["detail"].startswith("no seed for this operator graph: torch.matmul"), r'
check "no seed: the next task ran" grep -q '"verdict": "correct"' "$tmp/nn/results/2_beta.json"

# The real `cutegen optimize` as the task: without a GPU it fails before its loop and removes its run
# directory; bench takes that as a failure every task shares and stops at the first task.
if ! command -v nvidia-smi >/dev/null 2>&1; then
  unset CUTEGEN_BENCH_TASK_EXE
  err=$("$cutegen" bench "$tmp/k" --llm replay:none --out "$tmp/real" -j 1 --quiet 2>&1 >/dev/null); rc=$?
  check "real optimize without a GPU: the suite stops with exit 1" test $rc -eq 1
  check "real optimize without a GPU: it says so" grep -q 'could not start: .*NVIDIA GPU' <<<"$err"
  check "real optimize without a GPU: no run directory is left" test ! -e "$tmp/real/tasks/0_nokey/.cutegen-run"
  check "real optimize without a GPU: the task is not_started" grep -q '"verdict": "not_started"' "$tmp/real/results/0_nokey.json"
  check "real optimize without a GPU: its log has the command" grep -q '==== first attempt: .* optimize .*--gpu-lock' "$tmp/real/logs/0_nokey.log"
fi

if ((fails)); then echo "$fails check(s) failed"; exit 1; fi
echo "all bench CLI checks passed"
