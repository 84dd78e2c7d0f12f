"""Checks the DOM headless Chromium built from a suite page (suite_page_test.sh) against the suite's
summary.json (`cutegen bench report DIR --format json`, the same typed summary): every task's row and
numbers, the fast_p marks, the histogram and cost bars, the run-page links, the column sorter and the
charts' layout. Exit 1 naming what is wrong. Usage: check_suite_dom.py DOM.html SUMMARY.json SUITE_DIR"""
import json
import math
import os
import sys
import urllib.parse
from html.parser import HTMLParser


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.root = {}
        self.marks = {}      # svg id -> [(class, data-x, data-y)] of points
        self.bars = {}       # svg id -> [(class, x0, x1, y)]
        self.lines = {}      # svg id -> classes of paths
        self.svg = None
        self.tables = {}     # table id -> {"headers": [...], "rows": [[cell...]]}
        self.table = None
        self.row = None
        self.cell = None
        self.in_th = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "html":
            self.root = a
        elif tag == "svg":
            self.svg = a.get("id")
            self.marks[self.svg], self.bars[self.svg], self.lines[self.svg] = [], [], []
        elif self.svg and "pt" in cls:
            self.marks[self.svg].append((cls[1], float(a["data-x"]), float(a["data-y"])))
        elif self.svg and tag == "rect" and "bar" in cls:
            self.bars[self.svg].append((cls[1], float(a["data-x0"]), float(a["data-x1"]), float(a["data-y"])))
        elif self.svg and tag == "path" and "line" in cls:
            self.lines[self.svg].append(cls[1])
        elif tag == "table":
            self.table = {"headers": [], "rows": []}
            self.tables[a.get("id")] = self.table
        elif tag == "th" and self.table is not None:
            self.in_th = True
            self.table["headers"].append("")
        elif tag == "tr" and self.table is not None:
            self.row = []
        elif tag == "td" and self.row is not None:
            self.cell = {"text": "", "sort": a.get("data-sort"), "href": None, "title": None}
        elif self.cell is not None and tag == "a":
            self.cell["href"] = a.get("href")
        elif self.cell is not None and tag == "span" and "missing-run-page" in cls:
            self.cell["title"] = a.get("title")

    def handle_endtag(self, tag):
        if tag == "svg":
            self.svg = None
        elif tag == "th":
            self.in_th = False
        elif tag == "td" and self.cell is not None:
            self.cell["text"] = self.cell["text"].strip()
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.row:
                self.table["rows"].append(self.row)
            self.row = None
        elif tag == "table":
            self.table = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell["text"] += data
        elif self.in_th:
            self.table["headers"][-1] += data


def main():
    dom = Dom()
    dom.feed(open(sys.argv[1], encoding="utf-8").read())
    summary = json.load(open(sys.argv[2], encoding="utf-8"))
    suite_dir = sys.argv[3]
    tasks = {t["name"]: t for t in summary["tasks"]}
    errors = []

    def expect(what, got, want):
        if got != want:
            errors.append(f"{what}: got {got!r}, want {want!r}")

    # The task table: every task once, its numbers those of the summary (data-sort keys are the values).
    table = dom.tables.get("tasks")
    if table is None:
        errors.append("no <table id=tasks>")
        table = {"headers": [], "rows": []}
    col = {h.strip(): i for i, h in enumerate(table["headers"])}
    names = [r[0]["text"].replace("(no run page)", "").strip() for r in table["rows"]]
    expect("task rows", sorted(names), sorted(tasks))
    numeric = {"best ms": "best_ms", "eager ms": "eager_ms", "compile ms": "compile_ms", "x eager": "speedup_eager",
               "x compile": "speedup_compile", "SOL": "sol_pct", "steps": "steps", "LLM calls": "llm_calls",
               "tokens": "tokens", "$": "cost_usd", "seed ms": "seed_ms"}
    for name, row in zip(names, table["rows"]):
        t = tasks.get(name)
        if t is None:
            continue
        expect(f"{name} verdict", row[col["verdict"]]["text"], t["verdict"])
        expect(f"{name} seed", row[col["seed"]]["text"], t.get("seed") or "\u2014")
        for header, key in numeric.items():
            cell = row[col[header]]
            want = t[key]
            got = float(cell["sort"]) if cell["sort"] is not None else None
            if want is None:
                expect(f"{name} {header} (missing)", cell["text"], "\u2014")
            elif got is None or not math.isclose(got, want, rel_tol=1e-12, abs_tol=0):
                errors.append(f"{name} {header}: got {got!r}, want {want!r}")
        page = os.path.join(suite_dir, "tasks", name, "report.html")
        href = row[0]["href"]
        if os.path.isfile(page):
            expect(f"{name} run page link", href, urllib.parse.quote(f"tasks/{name}/report.html"))
        elif href is not None or not row[0]["title"]:
            errors.append(f"{name}: its run page is missing, yet the row links to {href!r} or does not say why")
    # The sorter ran on "x eager" (the probe clicked it): numbers ascending, missing values last.
    xs = [r[col["x eager"]]["sort"] for r in table["rows"]] if "x eager" in col else []
    nums = [float(x) for x in xs if x is not None]
    expect("rows sorted by x eager", nums, sorted(nums))
    expect("missing speedups sorted last", xs[len(nums):], [None] * (len(xs) - len(nums)))

    # fast_p: the marks at p = 0, 1, 1.5, 2 are the summary's table.
    marks = dom.marks.get("fast-p-curve", [])
    for cls, key in (("fastp-eager", "over_eager"), ("fastp-compile", "over_compile")):
        got = {x: y for c, x, y in marks if c == cls}
        want = {float(k[len("fast_"):]): v for k, v in summary[key]["fast_p"].items()}
        expect(f"fast_p marks {cls}", got, want)
    expect("fast_p curves", sorted(dom.lines.get("fast-p-curve", [])), ["curve-compile", "curve-eager"])

    # Histograms: each bar counts the correct tasks whose speedup lies in [x0, x1).
    for svg_id, key, counted in (("speedup-eager", "speedup_eager", summary["over_eager"]["counted"]),
                                 ("speedup-compile", "speedup_compile", summary["over_compile"]["counted"])):
        bars = dom.bars.get(svg_id)
        if not bars:
            errors.append(f"no bars in <svg id={svg_id}>")
            continue
        values = [t[key] for t in tasks.values() if t["verdict"] == "correct" and t[key] is not None]
        for cls, x0, x1, y in bars:
            expect(f"{svg_id} bar [{x0}, {x1})", y, sum(1 for v in values if x0 <= v < x1))
            expect(f"{svg_id} bar [{x0}, {x1}) class", cls, "slower" if x1 <= 1 else "faster")
        expect(f"{svg_id} bars in all", sum(y for *_, y in bars), counted)
    sols = [t["sol_pct"] for t in tasks.values() if t["verdict"] == "correct" and t["sol_pct"] is not None]
    for _, x0, x1, y in dom.bars.get("sol", []):
        expect(f"SOL bar from {x0}", y, sum(1 for v in sols if x0 <= v and (v < x1 or x0 >= 100)))
    expect("SOL bars in all", sum(y for *_, y in dom.bars.get("sol", [])), len(sols))
    expect("cost bars", len(dom.bars.get("cost", [])), sum(1 for t in tasks.values() if t["cost_usd"] > 0))

    # Every chart was laid out with a width.
    widths = [float(w) for w in dom.root.get("data-chart-widths", "").split(",") if w]
    expect("charts laid out", len(widths), 5)
    if any(w < 100 for w in widths):
        errors.append(f"a chart is laid out narrower than 100 px: {widths}")
    for e in errors[:40]:
        print("DOM:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
