#!/usr/bin/env python3
"""One line per `cutegen eval --json` report: verdict, reported time, the runner's own event time, eager and
torch.compile, floor, SOL% and the calibration's ping — to see what the judge's clock adds over the kernel's
events (scripts/gpu-check records; docs/judge.md, "Calibration")."""
import json
import pathlib
import sys


def line(path: pathlib.Path) -> str:
    e = json.loads(path.read_text())
    t = e.get("time") or {}
    b = e.get("baselines") or {}
    cal = (e.get("session") or {}).get("calibration") or {}
    calls = (e.get("session") or {}).get("calls", [])
    overrun = sum(c.get("overrun_ms", 0) for c in calls)

    def median_of(key):
        values = sorted(c[key] for c in calls if isinstance(c.get(key), (int, float)))
        return values[len(values) // 2] if values else None

    def ms(v):
        return f"{v:.4f}" if isinstance(v, (int, float)) else "-"
    return (f"{path.stem}: {e.get('verdict')} time {ms(t.get('median_ms'))} ms (events {ms(t.get('event_median_ms'))}, "
            f"GPU span {ms(t.get('span_median_ms'))}, "
            f"iqr {ms(t.get('iqr_ms'))}) eager {ms((b.get('eager') or {}).get('median_ms'))} "
            f"compile {ms((b.get('compile') or {}).get('median_ms'))} floor {ms((e.get('roofline') or {}).get('floor_ms'))} "
            f"SOL {ms(e.get('sol_pct'))}% ping {ms(cal.get('ping_ms'))} (median {ms(cal.get('ping_median_ms'))}, "
            f"span overhead {ms(cal.get('span_overhead_ms'))}) "
            f"gather p90 {ms(cal.get('gather_p90_ms'))} sweep {cal.get('sweep', 'own')} "
            f"check {cal.get('overrun_check', 'gather')} overrun total {overrun:.3f} ms "
            f"(per call median: probe {ms(median_of('probe_excess_ms'))}, gather {ms(median_of('gather_excess_ms'))}, "
            f"post-call probe {ms(median_of('post_probe_excess_ms'))}; disturbed {t.get('disturbed_calls', '-')})")


for arg in sys.argv[1:]:
    p = pathlib.Path(arg)
    for f in sorted(p.glob("*.json")) if p.is_dir() else [p]:
        print(line(f))
