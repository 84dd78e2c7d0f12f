#!/usr/bin/env bash
# The suite page on a synthetic 100-task suite (written by make-suite-fixture from typed task records,
# as the bench scheduler writes them) and a baselines-only one:
#   * `cutegen report SUITE_DIR` and `cutegen bench report DIR --format html` write the same page, under
#     5 MB (the issue's bound, asserted strictly), self-contained;
#   * in headless Chromium (skipped, exit 77, without Debian's chromium): the DOM's task table, fast_p
#     points, histogram bars and run-page links against `bench report --format json` (one source), the
#     column sorter, and the render time (navigation start to load with layout done; recorded, and held
#     to the issue's 2 s).
# Usage: suite_page_test.sh CUTEGEN MAKE_SUITE_FIXTURE SOURCE_DIR [SCREENSHOT.png]
set -uo pipefail
cutegen="$1" make_fixture="$2" src="$3" shot="${4:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {  # check NAME CONDITION...
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}

"$make_fixture" "$tmp/level1" 100 && "$make_fixture" "$tmp/base" 24 baselines || { echo "FAIL make-suite-fixture"; exit 1; }
out=$(cd "$tmp" && "$cutegen" report level1 2>&1); rc=$?
check "cutegen report SUITE_DIR writes SUITE_DIR's name with .html in the current directory" \
  test $rc -eq 0 -a "$out" = "level1.html" -a -s "$tmp/level1.html"
check "... and nothing inside the suite" test ! -e "$tmp/level1/report.html"
size=$(stat -c %s "$tmp/level1.html" 2>/dev/null || echo 0)
echo "page size for 100 tasks: $size bytes"
check "the 100-task page is under 5 MB" test "$size" -gt 0 -a "$size" -lt 5000000
check "... self-contained (no external scripts, styles or images)" \
  test -z "$(grep -Eo '<(script|img|link)[^>]* (src|href)=' "$tmp/level1.html")"
"$cutegen" report "$tmp/level1" -o "$tmp/level1/page.html" >/dev/null 2>&1
out=$("$cutegen" bench report "$tmp/level1" --format html 2>&1); rc=$?
check "bench report --format html prints the page's path" test $rc -eq 0 -a "$out" = "$tmp/level1/report.html"
check "... and writes the page cutegen report writes there" cmp -s "$tmp/level1/page.html" "$tmp/level1/report.html"
out=$("$cutegen" report "$tmp/level1" -o "$tmp/elsewhere.html" 2>&1); rc=$?
check "a page written elsewhere (-o) links into the suite directory" \
  test $rc -eq 0 -a -n "$(grep -o 'href="level1/tasks/[^"]*/report.html"' "$tmp/elsewhere.html" | head -1)"
"$cutegen" bench report "$tmp/level1" --format json >"$tmp/summary.json" 2>/dev/null
check "bench report --format json" test -s "$tmp/summary.json"
out=$("$cutegen" report "$tmp/base" -o "$tmp/base.html" 2>&1); rc=$?
check "a baselines-only suite's page" test $rc -eq 0 -a "$out" = "$tmp/base.html"
check "... shows the best possible speedups" grep -q 'id="physics"' "$tmp/base.html"
first=$(ls "$tmp/base/results" | head -1)
echo '{"verdict": 7}' >"$tmp/base/results/$first"
out=$("$cutegen" report "$tmp/base" -o "$tmp/bad.html" 2>&1 >/dev/null); rc=$?
check "a damaged task record is said in one line naming it" \
  test $rc -eq 0 -a "$(wc -l <<<"$out")" -eq 1 -a -n "$(grep -F "results/$first: task record: field 'verdict'" <<<"$out")"
check "... and the page is written without it, saying so" grep -q '1 skipped (damaged record)' "$tmp/bad.html"

chromium="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z "$chromium" ]]; then
  echo "SKIP: no chromium binary (Debian package 'chromium', which scripts/setup installs); the page's DOM is not checked"
  exit $((fails > 0 ? 1 : 77))
fi
# The test's own probe, appended to a copy of the page: at the load event, force layout and record the
# time since navigation start, the charts' laid-out widths, then sort the task table by "x eager".
probe='<script>window.addEventListener("load",function(){var d=document.documentElement;document.body.offsetHeight;
d.setAttribute("data-render-ms",String(performance.now()));
var w=Array.prototype.map.call(document.querySelectorAll("svg.chart"),function(s){return s.getBoundingClientRect().width;});
d.setAttribute("data-chart-widths",w.join(","));
Array.prototype.forEach.call(document.querySelectorAll("#tasks th"),function(th){if(th.textContent==="x eager")th.click();});});</script>'
page=$(<"$tmp/level1/page.html")  # written in the suite directory: its links resolve from there
printf '%s\n' "${page/<\/body>/$probe</body>}" >"$tmp/level1/probe.html"
# --no-sandbox: CI runs as root, where Chromium's own sandbox refuses to start. No virtual time: the
# probe measures real time.
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --disable-extensions
       --user-data-dir="$tmp/profile")
timeout 60 "$chromium" "${flags[@]}" --dump-dom "file://$tmp/level1/probe.html" >"$tmp/dom.html" 2>"$tmp/chromium.log"
check "chromium renders the page" test -s "$tmp/dom.html" || tail -5 "$tmp/chromium.log"
check "the DOM's table, fast_p points, bars and links are summary.json's" \
  python3 "$src/src/report/check_suite_dom.py" "$tmp/dom.html" "$tmp/summary.json" "$tmp/level1"
render_ms=$(grep -o 'data-render-ms="[0-9.]*"' "$tmp/dom.html" | grep -o '[0-9.]*' | head -1)
echo "render time for 100 tasks (navigation start to load, layout done): ${render_ms:-?} ms"
# The issue's bound. Measured here at a few hundred ms at most; a loaded 2-core CI machine can be
# several times slower, and 2 s still leaves that margin without hiding a page that got slow.
check "Chromium renders the 100-task page in under 2 s" python3 -c "import sys; sys.exit(not float('${render_ms:-1e9}') < 2000)"
if [[ -n "$shot" ]]; then
  timeout 60 "$chromium" "${flags[@]}" --window-size=1280,1500 --screenshot="$tmp/page.png" \
    "file://$tmp/level1/report.html" >/dev/null 2>>"$tmp/chromium.log"
  check "a screenshot is taken" test "$(stat -c %s "$tmp/page.png" 2>/dev/null || echo 0)" -gt 20000
  cp "$tmp/page.png" "$shot" && echo "screenshot: $shot"
fi
exit $((fails > 0))
