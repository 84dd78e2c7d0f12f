#!/usr/bin/env bash
# `cutegen prompt` as a user runs it, on the CPU: the conversation on stdout as an exec backend reads it,
# --json, --help, and one-line errors.
set -uo pipefail
cutegen="$1"
src="$2"
d="$(mktemp -d)"
trap 'rm -rf "$d"' EXIT
export XDG_CONFIG_HOME="$d/xdg" CUTEGEN_CACHE_DIR="$d/cache"
unset CUTEGEN_CONFIG
export CUTEGEN_PROBLEM_SCALE=64  # relu at 64 x 1024: the worker loads it on the CPU in a moment
fails=0
check() {  # check NAME CONDITION...
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
relu="$src/problems/relu.py"
kernel="$src/attacks/honest/relu_vec.cu"

out=$("$cutegen" prompt --help); check "prompt --help names the kinds" grep -q 'synthesis, diagnose, repair, optimize or restart' <<<"$out"

out=$("$cutegen" prompt optimize "$relu" "$kernel" 2>"$d/err"); rc=$?
check "optimize prompt succeeds" test $rc -eq 0
check "the system message comes first" test "$(head -1 <<<"$out")" = "=== system ==="
check "then one user message" test "$(grep -c '^=== user ===$' <<<"$out")" -eq 1
check "the rules name the arch" grep -q 'one `-gencode` for `sm_90a`' <<<"$out"
check "the kernel's time is a labelled placeholder" \
  grep -q '^- Current best kernel (below): \[measured on the GPU at run time: its median time\]' <<<"$out"
check "the baselines are labelled placeholders" grep -q 'PyTorch eager: \[measured on the GPU at run time:' <<<"$out"
check "an elementwise step 1 shows a profile placeholder" grep -q 'the Nsight Compute summary of the best kernel' <<<"$out"
check "the pointwise guide has no TMA" test "$(grep -c 'make_tma_copy' <<<"$out")" -eq 0
check "the kernel is shown" grep -q '^namespace relu_example {$' <<<"$out"

out=$("$cutegen" prompt synthesis "$relu" --arch sm_100a --precision tf32 --examples none 2>/dev/null); rc=$?
check "synthesis prompt succeeds" test $rc -eq 0
check "--arch reaches the rules" grep -q 'one `-gencode` for `sm_100a`' <<<"$out"
check "--precision tf32 reaches the precision rule" grep -q '^## Precision: tf32 (the user opted in)' <<<"$out"
check "--examples none shows no library kernel" grep -q 'No library kernel is shown in this run' <<<"$out"

out=$("$cutegen" prompt diagnose "$relu" "$kernel" --base "$src/attacks/honest/relu_cute_1d.cu" 2>/dev/null); rc=$?
check "diagnose prompt succeeds" test $rc -eq 0
check "diagnose of a broken step shows its diff" grep -q '^```diff$' <<<"$out"

out=$("$cutegen" prompt synthesis "$relu" --json 2>/dev/null); rc=$?
check "--json succeeds" test $rc -eq 0
check "--json is the request with the cache mark" python3 -c '
import json, sys
r = json.loads(sys.argv[1])
m = r["messages"]
assert [x["role"] for x in m] == ["system", "user"] and m[0]["cache_prefix"] is True and "cache_prefix" not in m[1]
' "$out"

for args in "optimize $relu" "synthesis $relu $kernel" "explain $relu" "diagnose $relu $kernel --verdict pass" \
            "repair $relu $kernel --base $kernel"; do
  err=$("$cutegen" prompt $args 2>&1 >/dev/null); rc=$?
  check "prompt $args fails with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
done

[[ $fails -eq 0 ]] && echo "all passed" || { echo "$fails failed"; exit 1; }
