#!/usr/bin/env bash
# End-to-end checks of the cutegen executable as a user runs it: help, version, doctor, compile, llm.
set -uo pipefail
cutegen="$1"
src="$2"
export CUTEGEN_CACHE_DIR="$(mktemp -d)"
trap 'rm -rf "$CUTEGEN_CACHE_DIR"' EXIT
# The user's own config (and a named one) must not change what these checks see.
export XDG_CONFIG_HOME="$CUTEGEN_CACHE_DIR/xdg"
unset CUTEGEN_CONFIG
fails=0
check() {  # check NAME CONDITION...
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}

out=$("$cutegen" --help); check "--help lists compile and doctor" grep -q 'compile' <<<"$out"
check "--help lists doctor" grep -q 'doctor' <<<"$out"
out=$("$cutegen" compile --help); check "compile --help shows --arch" grep -q -- '--arch' <<<"$out"
out=$("$cutegen" --version); check "--version" grep -Eq '^cutegen [0-9]+\.[0-9]+\.[0-9]+' <<<"$out"

"$cutegen" >/dev/null 2>&1; check "no subcommand is an error" test $? -ne 0

out=$("$cutegen" doctor 2>&1); rc=$?
check "doctor succeeds where nvcc and CUTLASS exist" test $rc -eq 0
for item in nvcc CUTLASS contract GPU python torch ncu cache; do
  check "doctor reports $item" grep -Eq "^$item +(OK|missing|none)" <<<"$out"
done
check "doctor reports the CUTLASS version" grep -Eq '^CUTLASS +OK +4\.2\.0' <<<"$out"
for item in sandbox seccomp Landlock no_new_privs MPS; do
  check "doctor reports $item" grep -Eq "^$item +(OK|missing|warning)" <<<"$out"
done
check "doctor finds cutegen-sandbox" grep -Eq '^sandbox +OK' <<<"$out"
# The judge's busy-CPU check reads the kernel's run delays: Linux here counts them (schedstat).
check "doctor reports the run delay check" grep -Eq '^run delay +OK +/proc/<pid>/schedstat' <<<"$out"

err=$("$cutegen" compile /nonexistent.cu 2>&1); rc=$?
check "compile of a missing file fails" test $rc -ne 0
err=$("$cutegen" compile "$src/attacks/honest/relu_vec.cu" --arch hopper 2>&1); rc=$?
check "bad --arch fails with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1

# Two concurrent compiles of one source, as two processes: both succeed, one compiles, one hits.
k="$src/attacks/honest/relu_vec.cu"
"$cutegen" compile "$k" --json >"$CUTEGEN_CACHE_DIR/a.json" 2>/dev/null & pa=$!
"$cutegen" compile "$k" --json >"$CUTEGEN_CACHE_DIR/b.json" 2>/dev/null & pb=$!
wait $pa; ra=$?; wait $pb; rb=$?
check "concurrent compile A ok" test $ra -eq 0
check "concurrent compile B ok" test $rb -eq 0
hits=$(cat "$CUTEGEN_CACHE_DIR"/a.json "$CUTEGEN_CACHE_DIR"/b.json | grep -c '"cache_hit": true')
check "exactly one of the two was a cache hit" test "$hits" -eq 1
out=$("$cutegen" compile "$k" 2>&1); check "third compile reports a cache hit" grep -q 'cache hit' <<<"$out"

# Ctrl-C mid-compile: cutegen exits 130 and nvcc with everything it started is gone. cutegen runs in
# a session of its own, so "left behind" means any process still in that session.
cp "$k" "$CUTEGEN_CACHE_DIR/interrupted.cu" && echo "// not in the cache yet" >>"$CUTEGEN_CACHE_DIR/interrupted.cu"
setsid "$cutegen" compile "$CUTEGEN_CACHE_DIR/interrupted.cu" >/dev/null 2>&1 & sid=$!
# Wait for the compilation itself (nvcc's front ends), not the short version probes (`nvcc --version`,
# `g++ --version`) cutegen runs first: a probe seen and gone by the time of the signal proves nothing.
compiling=no
for _ in $(seq 600); do
  ps -o comm= -s "$sid" | grep -Eqx 'cicc|cc1plus|cudafe\+\+' && { compiling=yes; break; }
  sleep 0.1
done
check "compile started nvcc's front ends (in its session)" test "$compiling" = yes
kill -INT "$sid"; wait "$sid"; rc=$?
check "Ctrl-C: cutegen exits 130" test $rc -eq 130
# Killed processes may linger as zombies until init reaps them; they are dead, so only others count.
alive() { ps -o stat= -s "$sid" | grep -vc '^Z'; }
for _ in $(seq 20); do [ "$(alive)" -eq 0 ] && break; sleep 0.1; done
check "Ctrl-C: no process of cutegen's session is left" test "$(alive)" -eq 0
err=$(CUTEGEN_SANDBOX=/nonexistent "$cutegen" compile "$k" 2>&1); rc=$?
check "compile without cutegen-sandbox fails with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
check "compile without cutegen-sandbox names it" grep -q 'cutegen-sandbox' <<<"$err"

# A rejection through the CLI: a source rule refuses it before nvcc runs (the CuTe check's rejections after a
# build are proven by the manifest's static no-cute entries, in the same tier).
{ echo '#include "/etc/hostname"'; cat "$k"; } >"$CUTEGEN_CACHE_DIR/bad_include.cu"
err=$("$cutegen" compile "$CUTEGEN_CACHE_DIR/bad_include.cu" 2>&1 >/dev/null); rc=$?
check "rejected kernel exits non-zero" test $rc -ne 0
check "rejection reason on stderr" grep -q 'rejected: line 1: #include "/etc/hostname": absolute paths are refused' <<<"$err"

# cutegen cache: what the cache holds, its cap, and pruning.
out=$("$cutegen" cache --help)
for o in --prune --max-mb --clear --all; do check "cache --help shows $o" grep -q -- "$o" <<<"$out"; done
out=$("$cutegen" cache 2>&1); rc=$?
check "cache lists the cache" test $rc -eq 0
check "cache names its directory" grep -q "compile cache $CUTEGEN_CACHE_DIR/compile/v1" <<<"$out"
check "cache lists the ok and the rejected entry" grep -q '2 entries' <<<"$out"
check "cache shows an ok entry" grep -Eq '^  [0-9-]+ [0-9:]+ +ok ' <<<"$out"
check "cache shows the default cap" grep -q 'of the 5000 MB cap' <<<"$out"
out=$("$cutegen" cache --max-mb 300 2>&1); check "--max-mb sets the cap shown" grep -q 'of the 300 MB cap' <<<"$out"
err=$("$cutegen" cache --prune --clear 2>&1); rc=$?
check "--prune with --clear is refused" test $rc -ne 0
echo '{"cache": {"max_gb": 1}}' >"$CUTEGEN_CACHE_DIR/bad-cache.json"
err=$("$cutegen" --config "$CUTEGEN_CACHE_DIR/bad-cache.json" cache 2>&1); rc=$?
check "an unknown cache key fails with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
check "an unknown cache key is named" grep -q 'unknown key cache.max_gb' <<<"$err"
# A cached library cut short is noticed, removed and compiled again, never served.
lib=$("$cutegen" compile "$k" --json 2>/dev/null | grep -o '"library": "[^"]*"' | cut -d'"' -f4)
check "the cached library is found" test -s "$lib"
truncate -s 1000 "$lib"
out=$("$cutegen" compile "$k" 2>&1); rc=$?
check "a truncated cached library is compiled again" test $rc -eq 0
check "a truncated cached library is reported" grep -q 'does not match its recorded SHA-256' <<<"$out"
check "a truncated cached library is not a hit" bash -c '! grep -q "cache hit" <<<"$1"' _ "$out"
check "the recompiled library is whole" test "$(stat -c %s "$lib")" -gt 1000
out=$("$cutegen" cache --prune 2>&1); check "cache --prune under the cap evicts nothing" grep -q 'pruned: 0 entries evicted' <<<"$out"
out=$("$cutegen" cache --clear 2>&1); rc=$?
check "cache --clear removes every entry" test $rc -eq 0
check "cache --clear says what it removed" grep -q 'cleared: 2 entries evicted' <<<"$out"
check "cache --clear leaves no entry" grep -q '^0 entries' <<<"$out"

# cutegen llm: a quick check of a backend. exec and replay need no network and no key.
out=$("$cutegen" llm --help); check "llm --help shows --llm" grep -q -- '--llm' <<<"$out"
d="$CUTEGEN_CACHE_DIR"
out=$("$cutegen" llm "hello there" --llm "exec:tr a-z A-Z" --record "$d/cassette" 2>"$d/llm.err"); rc=$?
check "llm through exec succeeds" test $rc -eq 0
check "llm prints the answer" grep -q 'HELLO THERE' <<<"$out"
check "llm prints the usage line on stderr" grep -q 'finish stop' "$d/llm.err"
out2=$("$cutegen" llm "hello there" --llm "replay:$d/cassette" 2>/dev/null); rc=$?
check "llm replays the recorded answer" test $rc -eq 0 -a "$out2" = "$out"
err=$("$cutegen" llm "never recorded" --llm "replay:$d/cassette" 2>&1); rc=$?
check "a replay miss fails with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
check "a replay miss names the request" grep -q 'never recorded' <<<"$err"
err=$("$cutegen" llm hi --llm gemini:pro 2>&1); rc=$?
check "an unknown backend fails with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
err=$("$cutegen" llm hi --llm "exec:exit 3" 2>&1); rc=$?
check "a failing exec command fails with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
# Issue 32: what a backend said reaches the terminal escaped (a window title, a clear-screen and a CR
# that would hide the start of the line), and an answer goes unchanged into a pipe.
err=$("$cutegen" llm hi --llm "exec:printf 'oops \\033]0;owned\\007\\033[2J\\rall fine' >&2; exit 3" 2>&1); rc=$?
check "a backend's escape sequences are shown escaped in its error" grep -qF 'oops \x1b]0;owned\x07\x1b[2J\rall fine' <<<"$err"
check "... and none reaches the terminal raw" test $rc -ne 0 -a -z "$(tr -d '\n' <<<"$err" | tr -d '[:print:]')"
out=$("$cutegen" llm hi --llm "exec:printf 'red \\033[31m text'" 2>/dev/null)
check "an answer goes into a pipe as it came" test "$out" = $'red \e[31m text'
if ! nvidia-smi -L >/dev/null 2>&1; then
  err=$("$cutegen" profile "$k" "$k" 2>&1); rc=$?
  check "profile without a GPU fails with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
  check "profile without a GPU says why" grep -q 'needs an NVIDIA GPU' <<<"$err"
fi
out=$("$cutegen" profile --help); check "profile --help shows --json" grep -q -- '--json' <<<"$out"

# cutegen optimize: the loop needs a GPU; without one it says so in one line and writes nothing.
out=$("$cutegen" optimize --help); check "optimize --help shows --resume" grep -q -- '--resume' <<<"$out"
check "optimize --help shows --profile-from" grep -q -- '--profile-from' <<<"$out"
# The judge's options are the same on every command that runs it.
for c in eval profile optimize; do
  out=$("$cutegen" $c --help)
  for o in --precision --trials --runs --generalize --seed --runner-timeout --arch; do
    check "$c --help shows $o" grep -q -- "$o" <<<"$out"
  done
done
# Two other shapes by default where the verdict matters; none before a profile, which is about speed.
for c in eval optimize; do
  check "$c runs two other shapes by default" grep -q -- '--generalize INT:INT in \[0 - 8\]=2' <<<"$("$cutegen" $c --help)"
done
check "profile runs no other shapes by default" grep -q -- '--generalize INT:INT in \[0 - 8\]=0' <<<"$("$cutegen" profile --help)"
err=$("$cutegen" optimize "$src/problems/relu.py" --llm "replay:$src/examples/cassettes/relu-demo" --profile-from sometimes 2>&1); rc=$?
check "a bad --profile-from fails with one line naming the choices" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
check "a bad --profile-from names the choices" grep -q 'auto, always, never' <<<"$err"
# Without an LLM (no --llm, no llm.backend; or --llm none): the seed path (docs/seed.md). Tracing needs no GPU.
for how in "" "--llm none"; do
  err=$("$cutegen" optimize "$src/problems/split_halves.py" $how --out "$d/unmatched" 2>&1); rc=$?
  check "optimize ${how:-without --llm}: an unmatched problem exits 3 with one line" test $rc -eq 3 -a "$(grep -c . <<<"$err")" -eq 1
  check "optimize ${how:-without --llm}: the line names the graph and asks for an LLM" \
    grep -q '^cutegen: no seed for this operator graph: torch.chunk, getitem, add, sub (.*); give --llm$' <<<"$err"
  check "optimize ${how:-without --llm}: an unmatched problem leaves no run directory" test ! -e "$d/unmatched"
done
if ! nvidia-smi -L >/dev/null 2>&1; then
  err=$("$cutegen" optimize "$src/problems/relu.py" --out "$d/seedrun" 2>&1); rc=$?
  check "optimize without an LLM matches relu's seed before needing the GPU" grep -q '^seed: pointwise chain y = relu(x)$' <<<"$err"
  check "optimize without an LLM and without a GPU fails saying so" test $rc -ne 0 -a "$(tail -1 <<<"$err" | grep -c 'needs an NVIDIA GPU')" -eq 1
  check "optimize without an LLM and without a GPU leaves no run directory" test ! -e "$d/seedrun"
fi
# With an LLM, --start picks the first kernel: the seed (auto, seed) or the LLM's (scratch). The
# problem is traced once the judge is up, so without a GPU that is all these can check.
err=$("$cutegen" optimize "$src/problems/relu.py" --llm none --start sometimes 2>&1); rc=$?
check "a bad --start is refused" test $rc -ne 0
err=$("$cutegen" optimize "$src/problems/relu.py" --llm none --start scratch 2>&1); rc=$?
check "--start scratch without an LLM is refused with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1

# cutegen seed: the generated kernel or why none, on the CPU.
out=$("$cutegen" seed --help); check "seed --help shows --list" grep -q -- '--list' <<<"$out"
out=$("$cutegen" seed "$src/problems/gelu_tanh.py" 2>"$d/seed.err"); rc=$?
check "seed prints the kernel" test $rc -eq 0 -a "$(grep -c 'extern "C" int cutegen_forward' <<<"$out")" -eq 1
check "seed's kernel has gelu's tanh formula" grep -q 'tanhf(0.7978846f \* (x0 + 0.044715f \* x0 \* x0 \* x0))' <<<"$out"
check "seed says what matched" grep -q '^seed: pointwise chain y = gelu(x, approximate=.tanh.)$' "$d/seed.err"
"$cutegen" seed "$src/problems/scale_add.py" -o "$d/scale_add_seed.cu" 2>/dev/null; rc=$?
check "seed -o writes the kernel" test $rc -eq 0 -a -s "$d/scale_add_seed.cu"
check "scale_add's seed reads alpha from its descriptor" grep -q 'op.s2 = static_cast<float>(inputs\[2\].scalar_f);' "$d/scale_add_seed.cu"
err=$("$cutegen" seed "$src/problems/split_halves.py" 2>&1); rc=$?
check "seed of a torch.chunk fails with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
check "seed of a torch.chunk names it" grep -q '^cutegen: no seed for this operator graph: torch.chunk' <<<"$err"
out=$("$cutegen" seed "$src/problems/matmul_square.py" 2>"$d/seed.err"); rc=$?
check "seed of a 4096^3 matmul is the library's 3xTF32 GEMM" \
  test $rc -eq 0 -a "$(grep -c 'constexpr bool kTransA = false;  // set by the seed' <<<"$out")" -eq 1
check "seed of a 4096^3 matmul says what matched" \
  grep -q "^seed: matrix product (the library's 3xTF32 GEMM) y = matmul(a, b)$" "$d/seed.err"
out=$("$cutegen" seed "$src/problems/bmm.py" 2>"$d/seed.err"); rc=$?
check "seed of a bmm is the library GEMM's batch" \
  test $rc -eq 0 -a "$(grep -c '// a batch of 16 products, each (M, N, K) = (500, 260, 300)' <<<"$out")" -eq 1
check "seed of a bmm says what matched" \
  grep -q "^seed: matrix product (the library's 3xTF32 GEMM) y = matmul(a, b)$" "$d/seed.err"
out=$("$cutegen" seed "$src/problems/matmul_tril_tn.py" 2>"$d/seed.err"); rc=$?
check "seed of a masked product is the library GEMM with the mask in its epilogue" \
  test $rc -eq 0 -a "$(grep -c '^constexpr int kMask = 2;' <<<"$out")" -eq 1
check "seed of a masked product says what matched" \
  grep -q "^seed: matrix product (the library's 3xTF32 GEMM) y = tril(matmul(transpose(a, dim0=-2, dim1=-1), b), diagonal=0)$" "$d/seed.err"
out=$("$cutegen" seed --list "$src/problems" 2>&1); rc=$?
check "seed --list lists every problem" test $rc -eq 0 -a "$(grep -c '\.py: ' <<<"$out")" -eq "$(ls "$src"/problems/*.py | wc -l)"
check "seed --list shows softmax_rows' seed" \
  grep -q "^softmax_rows.py: row softmax (the library's ticket softmax) y = softmax(x, dim=-1)$" <<<"$out"
check "seed --list shows that rows too long for the ticket softmax take the cluster softmax" \
  grep -q "^softmax_long_rows.py: row softmax (the library's cluster softmax) y = softmax(x, dim=-1)$" <<<"$out"
check "seed --list counts the seeds" grep -Eq '^[0-9]+ of [0-9]+ problems have a seed$' <<<"$out"
check "seed --list shows relu's seed" grep -q '^relu.py: pointwise chain y = relu(x)$' <<<"$out"
check "seed --list shows a Linear + gelu's epilogue seed" \
  grep -q "^matmul_bias_gelu.py: matrix product with an epilogue (the skinny 3xTF32 kernel) y = gelu(linear(x, fc_weight, fc_bias), approximate='none')$" <<<"$out"
# A newline in a problem's file name (a name holds any byte but '/') stays inside the seed's comment (issue 32).
evil="$d/evil"$'\n'"int x = 1;.py"
cp "$src/problems/relu.py" "$evil"
out=$("$cutegen" seed "$evil" 2>/dev/null); rc=$?
check "a newline in a problem's file name stays in the seed's first comment line" test $rc -eq 0 -a \
  "$(head -1 <<<"$out")" = '// Seed kernel for evil\x0aint x = 1;.py, written by cutegen without an LLM (docs/seed.md): a pointwise chain,'
check "no line of the seed is the rest of the file name" test "$(grep -c '^int x = 1;' <<<"$out")" -eq 0
out=$("$cutegen" seed --list "$src/attacks/problems" -o "$d/seeds" 2>&1); rc=$?
check "seed --list -o writes each seed as <problem>.cu" test $rc -eq 0 -a -s "$d/seeds/relu_small.cu"
check "seed --list -o writes no file for a problem without a seed" test ! -e "$d/seeds/batchnorm_eval.cu"
if ! nvidia-smi -L >/dev/null 2>&1; then
  err=$("$cutegen" optimize "$src/problems/relu.py" --llm "replay:$src/examples/cassettes/relu-demo" --out "$d/run" 2>&1); rc=$?
  check "optimize without a GPU fails with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
  check "optimize without a GPU leaves no run directory" test ! -e "$d/run"
  mkdir -p "$d/cwd"
  (cd "$d/cwd" && "$cutegen" optimize "$src/problems/relu.py" --llm "replay:$src/examples/cassettes/relu-demo" >/dev/null 2>&1)
  check "a failed start under a default name leaves no run directory" test -z "$(ls -A "$d/cwd/cutegen-runs" 2>/dev/null)"
fi

# Run directories are checked and locked before anything else (so these need no GPU).
replay=(--llm "replay:$src/examples/cassettes/relu-demo")
mkdir -p "$d/mine"; echo "my notes" >"$d/mine/report.md"
err=$("$cutegen" optimize "$src/problems/relu.py" "${replay[@]}" --out "$d/mine" 2>&1); rc=$?
check "a non-empty --out that is no run is refused with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
check "the refusal says what is there" grep -q 'not a cutegen run directory (it holds report.md)' <<<"$err"
check "the refused directory is left as it was" test "$(ls -A "$d/mine")" = "report.md" -a "$(cat "$d/mine/report.md")" = "my notes"
err=$("$cutegen" optimize "$src/problems/relu.py" "${replay[@]}" --out "$d/mine" --resume 2>&1); rc=$?
check "--resume of a directory that is no run is refused" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
err=$("$cutegen" optimize "$src/problems/relu.py" "${replay[@]}" --out "$d/none" --resume 2>&1); rc=$?
check "--resume of a missing directory says there is nothing to resume" grep -q 'nothing to resume' <<<"$err"
mkdir -p "$d/old"; echo '{"format": "cutegen-run/1"}' >"$d/old/.cutegen-run"
echo '{"type":"problem","key":"describe:x","problem":{}}' >"$d/old/events.jsonl"
err=$("$cutegen" optimize "$src/problems/relu.py" "${replay[@]}" --out "$d/old" 2>&1); rc=$?
check "an existing run without --resume is refused with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
check "the refusal says how to resume" grep -q 'add --resume to continue it' <<<"$err"
# A run in progress (here: this shell, holding the lock) keeps every other cutegen out, at once.
echo 4242 >"$d/old/.cutegen-lock"
exec 9<>"$d/old/.cutegen-lock"; flock -x 9
err=$(timeout 20 "$cutegen" optimize "$src/problems/relu.py" "${replay[@]}" --out "$d/old" --resume 2>&1 9>&-); rc=$?
exec 9>&-
check "a second run on a locked directory fails with one line" test $rc -ne 0 -a $rc -ne 124 -a "$(grep -c . <<<"$err")" -eq 1
check "a second run names the holder" grep -q 'in use by another cutegen run (pid 4242)' <<<"$err"
if ! nvidia-smi -L >/dev/null 2>&1; then
  err=$("$cutegen" optimize "$src/problems/relu.py" "${replay[@]}" --out "$d/old" --resume 2>&1); rc=$?
  check "a resume that cannot start keeps the run" test $rc -ne 0 -a -s "$d/old/events.jsonl" -a -e "$d/old/.cutegen-run"
  # Stopped after claiming its directory, before its first event (cutegen bench interrupted while the
  # task started): --resume starts it from the beginning instead of refusing; here it then needs the GPU.
  mkdir -p "$d/started/work"; echo '{"format": "cutegen-run/1"}' >"$d/started/.cutegen-run"
  echo '{"llm": "replay:earlier"}' >"$d/started/config.json"; : >"$d/started/events.jsonl"
  err=$("$cutegen" optimize "$src/problems/relu.py" "${replay[@]}" --out "$d/started" --resume 2>&1); rc=$?
  check "a resume with nothing recorded says it starts from the beginning" \
    grep -qx "resume: nothing was recorded in $d/started yet; starting from the beginning" <<<"$err"
  check "a resume with nothing recorded is not refused as nothing to resume" test "$(grep -c 'nothing to resume' <<<"$err")" -eq 0
  check "a resume with nothing recorded that cannot start keeps the run and its config" \
    test $rc -ne 0 -a -e "$d/started/.cutegen-run" -a "$(cat "$d/started/config.json")" = '{"llm": "replay:earlier"}'
fi

# Config trust: a project's ./cutegen.json comes with the checkout and may not run a program or
# redirect a key; the same file named with --config, or the user's own file, may.
proj="$d/checkout"
mkdir -p "$proj"
printf '#!/bin/sh\ntouch "%s/planted-nvcc-ran"\nexit 1\n' "$proj" >"$proj/nvcc.sh"
chmod +x "$proj/nvcc.sh"
echo '{"compile": {"nvcc": "./nvcc.sh"}}' >"$proj/cutegen.json"
err=$(cd "$proj" && "$cutegen" compile "$k" 2>&1); rc=$?
check "a project cutegen.json setting compile.nvcc is refused with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
check "the refusal names the key" grep -q 'compile.nvcc' <<<"$err"
check "the refusal names the file and how to trust it" grep -q -- '--config ./cutegen.json' <<<"$err"
check "the planted nvcc did not run" test ! -e "$proj/planted-nvcc-ran"
err=$(cd "$proj" && "$cutegen" --config cutegen.json compile "$k" 2>&1)
check "the same file named with --config is honoured (its nvcc ran)" test -e "$proj/planted-nvcc-ran"
check "a named config is announced" grep -q '^config: ./cutegen.json (named)' <<<"$err"
for planted in '"base_url": "http://127.0.0.1:9/v1"' '"api_key_env": "HOME"' '"backend": "exec", "command": "env"'; do
  echo "{\"llm\": {\"backend\": \"openai\", \"model\": \"gpt-5\", $planted}}" >"$proj/cutegen.json"
  err=$(cd "$proj" && "$cutegen" llm hi 2>&1); rc=$?
  key=$(sed -E 's/.*"(base_url|api_key_env|command)".*/\1/' <<<"$planted")
  check "a project cutegen.json setting llm.$key is refused" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
  check "the refusal names llm.$key" grep -q "llm.$key" <<<"$err"
done
echo '{"llm": {"budget": {"max_dollars": 1}}}' >"$proj/cutegen.json"
err=$(cd "$proj" && "$cutegen" llm hi --llm "exec:cat" 2>&1); rc=$?
check "an unknown nested key fails with one line naming it" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
check "an unknown nested key is named" grep -q 'llm.budget.max_dollars' <<<"$err"
echo '{"compile": {"arch": "sm_90a"}, "llm": {"max_tokens": 2000}}' >"$proj/cutegen.json"
mkdir -p "$XDG_CONFIG_HOME/cutegen"
echo '{"llm": {"backend": "exec", "command": "tr a-z A-Z"}}' >"$XDG_CONFIG_HOME/cutegen/config.json"
out=$(cd "$proj" && "$cutegen" llm "from the user config" 2>"$d/cfg.err"); rc=$?
check "the user's config may name a command" test $rc -eq 0
check "the user's command answered" grep -q 'FROM THE USER CONFIG' <<<"$out"
check "the config line names both files, once" test "$(grep -c '^config: ' "$d/cfg.err")" -eq 1
check "the config line says which file is the user's" grep -q "config: $XDG_CONFIG_HOME/cutegen/config.json (user), ./cutegen.json (project" "$d/cfg.err"
err=$(cd "$proj" && "$cutegen" optimize "$src/problems/relu.py" --out "$d/cfg-run" 2>&1)
check "optimize announces its config once" test "$(grep -c '^config: ' <<<"$err")" -eq 1
rm -rf "$XDG_CONFIG_HOME/cutegen"

# cutegen tune: knob mistakes and kernels without knobs are refused with one line before any GPU is needed.
out=$("$cutegen" tune --help); check "tune --help names its options" grep -q -- '--max-variants' <<<"$out"
err=$("$cutegen" tune "$src/problems/relu.py" "$src/attacks/honest/relu_vec.cu" 2>&1); rc=$?
check "tune of a kernel without knobs fails with one line" test $rc -ne 0 -a "$(grep -c . <<<"$err")" -eq 1
check "tune says the kernel declares no knobs" grep -q 'declares no knobs' <<<"$err"
d2=$(mktemp -d)
printf '// cutegen:knob T in {1, 2}\n#ifndef T\n#define T 3\n#endif\n' >"$d2/bad.cu"
err=$("$cutegen" tune "$src/problems/relu.py" "$d2/bad.cu" --out "$d2/out" 2>&1); rc=$?
check "tune of a wrong knob fails with one line naming it" grep -q 'bad.cu: line 3: knob T: the default 3 is not among its values' <<<"$err"
check "tune of a wrong knob writes nothing" test ! -e "$d2/out"
echo '{"tune": {"max_variant": 4}}' >"$d2/cfg.json"
err=$("$cutegen" --config "$d2/cfg.json" tune "$src/problems/relu.py" "$src/library/elementwise.cu" 2>&1); rc=$?
check "an unknown tune key is named" grep -q 'unknown key tune.max_variant' <<<"$err"
rm -rf "$d2"

echo "$((0)) passed, $fails failed" >/dev/null
[ $fails -eq 0 ]
