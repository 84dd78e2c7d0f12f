#!/usr/bin/env bash
# `cutegen report` as a user runs it, on the committed fixture run (testdata/relu-run).
#   cli       help, one-line errors, the page written where asked
#   chromium  the page in headless Chromium: the DOM it builds (charts, step table) and a screenshot;
#             skipped (exit 77) when Debian's chromium is not installed
# Usage: report_page_test.sh cli|chromium CUTEGEN SOURCE_DIR [SCREENSHOT.png]
set -uo pipefail
mode="$1" cutegen="$2" src="$3" shot="${4:-}"
fixture="$src/src/report/testdata/relu-run"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {  # check NAME CONDITION...
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}

if [[ "$mode" == cli ]]; then
  out=$("$cutegen" report --help); check "report --help names -o" grep -q -- '--output' <<<"$out"
  out=$("$cutegen" --help); check "--help lists report" grep -q 'report' <<<"$out"
  out=$("$cutegen" report "$tmp/none" 2>&1); rc=$?
  check "a missing directory fails" test $rc -ne 0
  check "... with one line naming it" test "$(wc -l <<<"$out")" -eq 1 -a -n "$(grep 'no such directory' <<<"$out")"
  mkdir "$tmp/mine" && echo hi >"$tmp/mine/notes.txt"
  out=$("$cutegen" report "$tmp/mine" 2>&1); rc=$?
  check "a directory that is not a run fails" test $rc -ne 0
  check "... saying so" grep -q 'is not a cutegen run' <<<"$out"
  check "... and writes nothing there" test ! -e "$tmp/mine/report.html"
  out=$("$cutegen" report "$fixture" -o "$tmp/page.html" 2>&1); rc=$?
  check "the fixture's page is written" test $rc -eq 0 -a -s "$tmp/page.html"
  check "... and its path printed" test "$out" = "$tmp/page.html"
  check "... self-contained (no external scripts, styles or images)" \
    test -z "$(grep -Eo '<(script|img|link)[^>]* (src|href)=' "$tmp/page.html")"
  cp -r "$fixture" "$tmp/run" && rm -f "$tmp/run/report.html"
  out=$(cd "$tmp" && "$cutegen" report run 2>/dev/null)
  check "the default output is the run's name with .html, in the current directory" \
    test "$out" = "run.html" -a -s "$tmp/run.html"
  check "... and nothing is written inside the run" test ! -e "$tmp/run/report.html"
  exit $((fails > 0))
fi

[[ "$mode" == chromium ]] || { echo "unknown mode $mode" >&2; exit 2; }
chromium="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z "$chromium" ]]; then
  echo "SKIP: no chromium binary (Debian package 'chromium', which scripts/setup installs); the page's DOM is not checked"
  exit 77
fi
"$cutegen" report "$fixture" -o "$tmp/page.html" >/dev/null || { echo "FAIL cutegen report"; exit 1; }
# --no-sandbox: CI runs as root, where Chromium's own sandbox refuses to start. The page has no
# network and little script, so a short virtual-time budget is plenty.
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --disable-extensions
       --user-data-dir="$tmp/profile" --virtual-time-budget=2000)
timeout 30 "$chromium" "${flags[@]}" --dump-dom "file://$tmp/page.html" >"$tmp/dom.html" 2>"$tmp/chromium.log"
check "chromium renders the page" test -s "$tmp/dom.html" || tail -5 "$tmp/chromium.log"
check "the DOM has the charts and the step table" python3 "$src/src/report/check_report_dom.py" "$tmp/dom.html"
timeout 30 "$chromium" "${flags[@]}" --window-size=1280,1290 --screenshot="$tmp/page.png" \
  "file://$tmp/page.html" >/dev/null 2>>"$tmp/chromium.log"
check "a screenshot is taken" test "$(stat -c %s "$tmp/page.png" 2>/dev/null || echo 0)" -gt 20000
check "... and is a PNG" test "$(head -c 4 "$tmp/page.png" | tail -c 3)" = "PNG"
if [[ -n "$shot" && -s "$tmp/page.png" ]]; then cp "$tmp/page.png" "$shot" && echo "screenshot: $shot"; fi
exit $((fails > 0))
