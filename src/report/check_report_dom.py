"""Checks the DOM headless Chromium built from the fixture run's page (report_page_test.sh): both
charts with the fixture's points, and the step table with the logged values. Exit 1 naming what is
wrong. Usage: check_report_dom.py DOM.html"""
import sys
from html.parser import HTMLParser


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.svgs = {}          # svg id -> list of (class, data-x, data-y) of its points
        self.lines = {}         # svg id -> list of (class, data) of its reference lines
        self.svg = None
        self.tables = {}        # table id -> rows of cell texts
        self.table = None
        self.cell = None
        self.row = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "")
        if tag == "svg":
            self.svg = a.get("id")
            self.svgs[self.svg] = []
            self.lines[self.svg] = []
        elif self.svg and "pt" in cls.split():
            self.svgs[self.svg].append((cls, a.get("data-x"), a.get("data-y")))
        elif self.svg and tag == "line" and ("hline" in cls.split() or "vline" in cls.split()):
            self.lines[self.svg].append((cls, a.get("data-y") or a.get("data-x")))
        elif tag == "table":
            self.table = a.get("id")
            self.tables[self.table] = []
        elif tag == "tr" and self.table and "detail" not in cls:
            self.row = []
        elif tag == "td" and self.row is not None:
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "svg":
            self.svg = None
        elif tag == "td" and self.cell is not None:
            self.row.append(self.cell.strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.row:
                self.tables[self.table].append(self.row)
            self.row = None
        elif tag == "table":
            self.table = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def main():
    dom = Dom()
    dom.feed(open(sys.argv[1], encoding="utf-8").read())
    errors = []

    def expect(what, got, want):
        if got != want:
            errors.append(f"{what}: got {got!r}, want {want!r}")

    traj = dom.svgs.get("trajectory")
    if traj is None:
        errors.append("no <svg id=trajectory>")
    else:
        by = lambda c: [(x, y) for cls, x, y in traj if c in cls.split()]
        expect("trajectory points", len(traj), 6)
        expect("accepted attempts", by("accepted"), [("2", "1.8412"), ("3", "0.5427"), ("6", "0.5262")])
        expect("rolled-back attempts", by("rolled-back"), [("4", "1.1196")])
        expect("failed attempts (on the band, no time)", by("failed"), [("1", ""), ("5", "")])
        expect("reference lines", sorted(c.split()[1] for c, _ in dom.lines["trajectory"]),
               ["compile", "eager", "floor", "profiling"])
    roof = dom.svgs.get("roofline")
    if roof is None:
        errors.append("no <svg id=roofline>")
    else:
        expect("roofline points (3 accepted kernels, 2 baselines)", len(roof), 5)
        expect("roofline intensity", sorted({x for _, x, _ in roof}), ["0.125"])
    steps = dom.tables.get("steps")
    if steps is None:
        errors.append("no <table id=steps>")
    else:
        expect("step rows", [r[0] for r in steps], ["synthesis", "1", "2", "3", "4"])
        expect("step outcomes", [r[2] for r in steps], ["accepted", "accepted", "slower", "undone", "accepted"])
        expect("step times", [r[4] for r in steps], ["1.8412 ms", "0.5427 ms", "1.1196 ms", "-", "0.5262 ms"])
        expect("speedups over the best before", [r[5] for r in steps], ["-", "3.39x", "0.48x", "-", "1.03x"])
        expect("step 3's verdict", steps[3][3], "mismatch")
    cost = dom.tables.get("cost")
    if cost is None or cost[-1][0] != "total":
        errors.append("no cost table ending in a total row")
    for e in errors:
        print("DOM:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
