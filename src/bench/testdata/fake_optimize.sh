#!/usr/bin/env bash
# A stand-in for `cutegen optimize` in the scheduler's CPU tests (CUTEGEN_BENCH_TASK_EXE): the same
# command line, run directory, lock, resume-by-log and result.json, with "units of work" instead of
# LLM calls and evaluations. Each unit done is appended to $BENCH_LEDGER, so a test can prove no unit
# is ever done twice. Like cutegen (PR_SET_PDEATHSIG via CUTEGEN_PARENT_PID) it ends when the
# scheduler that started it is gone, here at the next unit.
set -uo pipefail
problem="" out="" resume=0 lock=""
while (($#)); do
  case "$1" in
    optimize) ;;
    --config) shift ;;
    --out) out="$2"; shift ;;
    --resume) resume=1 ;;
    --gpu-lock) lock="$2"; shift ;;
    --*) shift ;;  # options with a value, passed through by bench
    *) [[ -z "$problem" ]] && problem="$1" ;;
  esac
  shift
done
name=$(basename "$problem" .py)
units=${FAKE_UNITS:-3}
mkdir -p "$out"
if ((resume)); then
  [[ -f "$out/.cutegen-run" ]] || { echo "cutegen: nothing to resume: $out" >&2; exit 1; }
else
  [[ -z "$(ls -A "$out" 2>/dev/null | grep -v '^.cutegen-lock$')" ]] || { echo "cutegen: $out already holds a run" >&2; exit 1; }
  echo '{"format": "cutegen-run/1"}' >"$out/.cutegen-run"
fi
exec 9>"$out/.cutegen-lock"
flock -n 9 || { echo "cutegen: $out is in use by another cutegen run" >&2; exit 1; }
[[ -n "$lock" ]] || { echo "cutegen: no --gpu-lock given" >&2; exit 1; }

write_result() {
  printf '%s\n' "$1" >"$out/result.json.tmp" && mv "$out/result.json.tmp" "$out/result.json"
}
case "$name" in
  *nokey*) rmdir "$out" 2>/dev/null; rm -rf "$out"; echo "cutegen: OPENAI_API_KEY is not set" >&2; exit 1 ;;
  *bad*)
    write_result '{"format": "cutegen-task/1", "verdict": "problem_error", "detail": "bad.py: get_inputs() is missing"}'
    echo "cutegen: bad.py: get_inputs() is missing" >&2; exit 1 ;;
  *crash*) echo "about to crash" >&2; kill -SEGV $$ ;;
  *noseed*) rm -rf "$out"; echo "cutegen: no seed for this operator graph: torch.matmul (not pointwise); give --llm" >&2; exit 3 ;;
esac
for ((k = 1; k <= units; k++)); do
  grep -qx "unit $k" "$out/events.jsonl" 2>/dev/null && continue  # replayed from the log
  if [[ -n "${CUTEGEN_PARENT_PID:-}" ]] && ! kill -0 "$CUTEGEN_PARENT_PID" 2>/dev/null; then exit 143; fi
  sleep "${FAKE_UNIT_S:-0.2}"
  echo "unit $k" >>"$out/events.jsonl"
  echo "$name unit $k cvd=${CUDA_VISIBLE_DEVICES:-} lock=$(basename "$lock")" >>"$BENCH_LEDGER"
done
write_result "{\"format\": \"cutegen-task/1\", \"verdict\": \"correct\", \"best_ms\": 1.0, \"eager_ms\": 2.0,
  \"compile_ms\": 1.5, \"steps\": $units, \"llm_calls\": $units, \"device\": \"fake\", \"gpu_busy_s\": 0.5}"
echo "report of $name"
