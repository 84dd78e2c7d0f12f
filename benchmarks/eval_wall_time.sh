#!/usr/bin/env bash
# Wall time of `cutegen eval` for a candidate on a large problem (default: the ReLU example on the
# 6.4 GB ReLU), with a cold compile cache and then a warm one; the JSON reports give the kernel's own
# time, so the harness overhead is wall time minus what the kernel runs.
# Usage: eval_wall_time.sh CUTEGEN OUT_DIR [PROBLEM KERNEL [NAME]]   (EVAL_ARGS: more eval options, e.g. --generalize 2)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cutegen="$1"; out="$2"; mkdir -p "$out"
problem="${3:-$root/problems/relu_large.py}"
kernel="${4:-$root/attacks/honest/relu_vec.cu}"
name="${5:-relu_large}"
cache="$(mktemp -d)"
for label in cold cached; do
  start=$(date +%s.%N)
  CUTEGEN_CACHE_DIR="$cache" "$cutegen" eval "$problem" "$kernel" \
    --trials 1 --runs 50 --seed 7 --no-baselines ${EVAL_ARGS:-} --json "$out/eval_${name}_$label.json" >"$out/eval_${name}_$label.log" 2>&1 \
    || { echo "eval ($label) failed:"; tail -5 "$out/eval_${name}_$label.log"; }
  # A failed verdict still writes its report; no report means the judge itself did not run.
  [[ -s "$out/eval_${name}_$label.json" ]] || no_report=1
  end=$(date +%s.%N)
  python3 - "$label" "$start" "$end" "$out/eval_${name}_$label.json" <<'PY'
import json, sys
label, start, end, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
try:
    r = json.load(open(path))
except OSError:
    r = {}
ev = r.get("time") or (r.get("timing") or {}).get("event", {})  # the report before and after the judge's redesign
print(f"{label}: wall {end - start:.1f} s, verdict {r.get('verdict')}, kernel median {ev.get('median_ms')} ms "
      f"over {ev.get('runs')} runs, compile {r.get('compile', {}).get('total_seconds')} s, phases {r.get('phase_seconds')}, "
      f"session {(r.get('session') or {}).get('phase_seconds')}")
PY
done
rm -rf "$cache"
[[ -z ${no_report:-} ]] || { echo "eval_wall_time: an evaluation wrote no report (see the logs in $out)" >&2; exit 1; }
