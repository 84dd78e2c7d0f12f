#!/usr/bin/env bash
# Which part of the runner's sandbox Nsight Compute trips on: `cutegen profile` of relu_vec on a small
# problem under each setting, one line each (status and message). Diagnosis only, never part of a
# verdict. Usage: gpu_profile_bisect.sh CUTEGEN OUT_DIR
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cutegen="$1"; out="$2"; mkdir -p "$out"
try() {
  local name="$1"; shift
  env "$@" "$cutegen" profile "$root/attacks/problems/relu_small.py" "$root/attacks/honest/relu_vec.cu" \
    --json "$out/$name.json" >"$out/$name.log" 2>&1
  python3 - "$name" "$out/$name.json" <<'PY'
import json, sys
try:
    p = json.load(open(sys.argv[2])).get("profile", {})
    print(f"{sys.argv[1]:32s} {p.get('status')}: {p.get('message', '')[:300]}")
except Exception as e:
    print(f"{sys.argv[1]:32s} no report ({e})")
PY
}
try default                      CUTEGEN_RUNNER_SANDBOX=full


try full+read-all                CUTEGEN_RUNNER_SANDBOX=full CUTEGEN_RUNNER_EXTRA_READ=/
try full+write-all               CUTEGEN_RUNNER_SANDBOX=full CUTEGEN_RUNNER_EXTRA_WRITE=/

try off                          CUTEGEN_RUNNER_SANDBOX=off
