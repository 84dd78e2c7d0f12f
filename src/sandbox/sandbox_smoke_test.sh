#!/usr/bin/env bash
# cutegen-sandbox as a user runs it: help, errors in one line, exit codes like a shell, a denied call.
set -uo pipefail
sandbox="$1"
probe="$2"
fails=0
check() {  # check NAME CONDITION...
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}

out=$("$sandbox" --help); rc=$?
check "--help exits 0" test $rc -eq 0
check "--help shows --syscalls" grep -q -- '--syscalls' <<<"$out"
check "--help shows the exit codes" grep -q '127' <<<"$out"

err=$("$sandbox" 2>&1); rc=$?
check "no program: exit 125" test $rc -eq 125
check "no program: one line" test "$(grep -c . <<<"$err")" -eq 1
err=$("$sandbox" --syscalls paranoid -- true 2>&1); rc=$?
check "unknown profile: exit 125 and one line" test $rc -eq 125 -a "$(grep -c . <<<"$err")" -eq 1
"$sandbox" -- /no/such/program 2>/dev/null; check "missing program: exit 127" test $? -eq 127

"$sandbox" --syscalls runner -- /bin/true; check "runner profile runs /bin/true" test $? -eq 0
"$sandbox" --syscalls compiler -- /bin/sh -c 'exit 3'; check "the program's exit code passes through" test $? -eq 3
out=$("$sandbox" --syscalls compiler -- /bin/sh -c 'ulimit -c'); check "core dumps are off" test "$out" = 0
"$sandbox" --syscalls runner -- "$probe" fork >/dev/null 2>&1; rc=$?
check "runner profile: fork is killed by SIGSYS (exit 159)" test $rc -eq 159
out=$("$sandbox" --syscalls compiler -- "$probe" socket-inet); check "compiler profile: no AF_INET socket" grep -q 'errno=1' <<<"$out"

[ $fails -eq 0 ]
