#!/usr/bin/env python3
"""What the judge's per-call staging costs at a problem's size, part by part (docs/judge.md, "Fresh inputs").

Every call of a session stages a fresh set into the slot (python/cutegen_worker/staging.py): get_inputs()
under the call's seed, the kind's transform (signed / scaled), a parameter draw, both output sets poisoned,
the workspace filled, the inputs copied into the shared buffers, L2 flushed. At KernelBench sizes (a 6.4 GB
input) that is tens of milliseconds a call, ~60-80 calls a session. This times each part alone, CUDA-synchronised,
and the slot's own set-up and release, so a change to any of them can be measured:

    python3 benchmarks/staging_cost.py problems/relu_large.py [--reps 8] [--json FILE]

Needs a GPU and the worker's Python environment (PYTHONPATH=python).
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from cutegen_worker import allocator  # noqa: E402

allocator.configure()

import torch  # noqa: E402

from cutegen_worker import inputs as inputs_mod, params as params_mod  # noqa: E402
from cutegen_worker.candidate_session import _Clock  # noqa: E402
from cutegen_worker.session import Session  # noqa: E402
from cutegen_worker.shared_buffers import SharedArena  # noqa: E402
from cutegen_worker.staging import CallSpec, Slot  # noqa: E402


def timed_ms(device, fn, reps: int) -> list:
    out = []
    for _ in range(reps):
        torch.cuda.synchronize(device)
        t0 = time.perf_counter_ns()
        fn()
        torch.cuda.synchronize(device)
        out.append((time.perf_counter_ns() - t0) / 1e6)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("problem")
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--json", help="also write the table here")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("staging_cost.py: no CUDA device; this measures GPU staging", file=sys.stderr)
        return 2
    session = Session()
    session.op_load({"problem": args.problem, "device": "cuda"})
    problem = session.need_problem()
    device = problem.device
    rows = {}

    def row(name, samples):
        rows[name] = {"median_ms": statistics.median(samples), "min_ms": min(samples), "n": len(samples)}

    seeds = iter(range(1, 1 << 30))
    for kind in ("problem", "signed"):
        row(f"get_inputs + transform ({kind})",
            timed_ms(device, lambda k=kind: problem.source.generate(next(seeds), k), args.reps))
    row("get_inputs alone", timed_ms(device, lambda: problem.source._raw(next(seeds)), args.reps))
    raw = problem.source._raw(1)
    row("signed transform alone", timed_ms(device, lambda: inputs_mod.transform(raw, "signed", next(seeds)), args.reps))
    del raw
    row("parameter draw", timed_ms(device, lambda: params_mod.values_for(problem.params, params_mod.RANDOM, next(seeds)),
                                   args.reps))

    t0 = time.perf_counter_ns()
    arena = SharedArena(device)
    slot = Slot(arena, problem)
    torch.cuda.synchronize(device)
    row("slot set-up (shared buffers, example set, poison)", [(time.perf_counter_ns() - t0) / 1e6])
    clock = _Clock(device)
    row("poison both output sets", timed_ms(device, lambda: [slot.poison_outputs(i) for i in range(len(slot.outputs))],
                                            args.reps))
    values = problem.source.generate(2)
    row("copy inputs into the slot",
        timed_ms(device, lambda: [s.copy_(v) for s, v in zip(slot.inputs, values) if s is not None], args.reps))
    del values
    row("L2 flush", timed_ms(device, clock.flush, args.reps))
    for kind in ("problem", "signed"):
        row(f"Slot.stage ({kind}), all of it",
            timed_ms(device, lambda k=kind: slot.stage(problem, CallSpec(seed=next(seeds), kind=k), flush=clock.flush),
                     args.reps))
    t0 = time.perf_counter_ns()
    slot = None
    arena.release()
    row("slot release", [(time.perf_counter_ns() - t0) / 1e6])

    gb = sum(t.numel() * t.element_size() for t in problem.source.generate(3) if isinstance(t, torch.Tensor)) / 1e9
    print(f"{args.problem} on {torch.cuda.get_device_name(device)}: inputs {gb:.2f} GB")
    for name, r in rows.items():
        print(f"  {name:52s} {r['median_ms']:9.2f} ms (min {r['min_ms']:.2f}, n={r['n']})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"problem": args.problem, "gpu": torch.cuda.get_device_name(device), "input_gb": gb, "rows": rows},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
