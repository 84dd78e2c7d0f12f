#!/usr/bin/env bash
# A kernel file built with knob values (or an experiment's EXP_ switches) prepended as #defines, through
# `cutegen compile` (its checks and cache), copied to OUT_DIR/NAME.so for benchmarks/pointwise_variants.py --
# the in-process comparison of several variants within one GPU call (machines differ by a few percent;
# compare variants in the same call). No GPU needed: build on the CPU machine and carry OUT_DIR.
#   benchmarks/build_variant.sh [--cutegen PATH] SOURCE OUT_DIR NAME [KNOB=VALUE ...]
# e.g. the ticket softmax experiment's trace build and the library file with 7 stages:
#   benchmarks/build_variant.sh benchmarks/softmax_ticket.cu v trace EXP_TRACE=1 EXP_THREADS=128
#   benchmarks/build_variant.sh examples/kernels/softmax_ticket.cu v s7 TKS_STAGES=7
#   python3 benchmarks/pointwise_variants.py problems/softmax_large.py v/trace.so v/s7.so --reps 3
# The generated source stays in OUT_DIR/src/NAME.cu. Exit 1 with the compile verdict's message on failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cutegen="$root/build/cutegen"
if [[ "${1:-}" == "--cutegen" ]]; then cutegen="$2"; shift 2; fi
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,11p' "$0" | cut -c3-
  exit 0
fi
[[ $# -ge 3 ]] || { echo "build_variant: needs SOURCE OUT_DIR NAME [KNOB=VALUE ...] (see --help)" >&2; exit 2; }
source_file="$1" out="$2" name="$3"; shift 3
[[ -f "$source_file" ]] || { echo "build_variant: no file $source_file" >&2; exit 1; }
[[ -x "$cutegen" ]] || { echo "build_variant: no cutegen at $cutegen (build it, or pass --cutegen PATH)" >&2; exit 1; }
mkdir -p "$out/src"
variant="$out/src/$name.cu"
: >"$variant"
for kv in "$@"; do
  [[ "$kv" == *=* ]] || { echo "build_variant: '$kv' is not KNOB=VALUE" >&2; exit 1; }
  echo "#define ${kv%%=*} ${kv#*=}" >>"$variant"
done
cat "$source_file" >>"$variant"
report="$("$cutegen" compile --json "$variant" 2>/dev/null || true)"
library="$(python3 -c '
import json, sys
try:
    d = json.loads(sys.argv[1])
except ValueError:
    sys.exit("build_variant: cutegen compile gave no JSON")
if d.get("verdict") != "ok" or not d.get("library"):
    errors = d.get("errors") or []
    why = ("line %s: %s" % (errors[0].get("line"), errors[0].get("message")) if errors
           else "; ".join(v.get("message", "") for v in d.get("violations") or []) or d.get("verdict", "failed"))
    sys.exit("build_variant: %s: %s" % (sys.argv[2], why))
print(d["library"])' "$report" "$variant")" || exit 1
cp "$library" "$out/$name.so"
echo "$out/$name.so"
