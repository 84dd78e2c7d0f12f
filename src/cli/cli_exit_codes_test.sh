#!/usr/bin/env bash
# The exit status table of README.md ("Exit status", src/common/exit_codes.h): the same outcome exits the
# same way from every command, and global options work after the command too. CPU only: the worker traces
# problems on meta tensors, nothing is compiled or run on a GPU.
set -uo pipefail
cutegen="$1"
src="$2"
d="$(mktemp -d)"
trap 'rm -rf "$d"' EXIT
export XDG_CONFIG_HOME="$d/xdg" CUTEGEN_CACHE_DIR="$d/cache"
unset CUTEGEN_CONFIG
cd "$d"  # nothing a command writes by default lands in the build tree
fails=0
check() {  # check NAME CONDITION...
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
status() {  # status EXPECTED NAME COMMAND...: the command's exit status, its stderr kept in $d/err
  local want="$1" name="$2"; shift 2
  "$@" >"$d/out" 2>"$d/err"
  local rc=$?
  check "$name exits $want (got $rc)" test "$rc" -eq "$want" || sed 's/^/    /' "$d/err"
}
no_seed="$src/problems/split_halves.py"  # torch.chunk: no route takes it (seed_golden.txt)
echo '{}' >"$d/empty.json"

# 0
status 0 "seed of a problem with one" "$cutegen" seed "$src/problems/relu.py" -o "$d/relu.cu"
# 3: no seed, from each command that can meet it
status 3 "seed without one" "$cutegen" seed "$no_seed"
check "... saying why in one line" test "$(wc -l <"$d/err")" -eq 1 -a -n "$(grep 'no seed for this operator graph: torch.chunk' "$d/err")"
status 3 "optimize --llm none without one" "$cutegen" optimize "$no_seed" --llm none --out "$d/run"
check "... before making a run directory" test ! -e "$d/run"
# 2: the command line, wherever the mistake is
status 2 "an unknown option" "$cutegen" seed --no-such-option
status 2 "an unknown command" "$cutegen" no-such-command
status 2 "a value out of range" "$cutegen" optimize "$no_seed" --steps -1
status 2 "--config naming no file, before the command" "$cutegen" --config "$d/missing.json" seed "$src/problems/relu.py"
check "... naming the file" grep -q "missing.json, which is not a file" "$d/err"
status 2 "--config naming no file, after the command" "$cutegen" seed "$src/problems/relu.py" --config "$d/missing.json"
status 2 "CUTEGEN_CONFIG naming no file, for a command that reads no config" \
  env CUTEGEN_CONFIG="$d/missing.json" "$cutegen" report "$d"
# --config after the command is read like one before it
status 0 "--config after the command" "$cutegen" cache --config "$d/empty.json"
check "... and read" grep -q "config: $d/empty.json (named)" "$d/err"
# 1: an error to act on
status 1 "report of a directory that is not a run" "$cutegen" report "$d"
printf 'raise RuntimeError("this problem does not import")\n' >"$d/broken.py"
status 1 "seed of a problem that does not import" "$cutegen" seed "$d/broken.py"
status 2 "seed of a file that is not there (the command line)" "$cutegen" seed "$d/none.py"
exit $((fails > 0))
