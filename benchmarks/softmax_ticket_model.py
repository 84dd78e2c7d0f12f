#!/usr/bin/env python3
"""A model of benchmarks/softmax_ticket.cu's protocol: does every chunk get normalised exactly once, and when
can it deadlock? CTAs take chunk tickets in order into a ring of stages, fold the oldest unfolded chunk once
its load lands (arriving on its row's counter), and normalise the oldest chunk once its row's count is
complete, taking the next ticket into that stage. Loads land and CTAs act in random order.

Run: python3 benchmarks/softmax_ticket_model.py   (prints each configuration that fails, then a summary)
Recorded (session 17): 307 configurations with CTAs x stages >= chunks per row, none failed; below that,
deadlocks (the kernel refuses such launches).
"""
import random
import sys


def run(ctas, stages, rows, per_row, seed):
    rnd = random.Random(seed)
    total = rows * per_row
    next_ticket = 0
    arrived = [0] * rows
    normalised = [0] * total
    in_flight = set()  # (cta, stage) loads not landed yet
    state = [{"chunk": [-1] * stages, "landed": [False] * stages, "head": 0, "folded": 0, "done": False}
             for _ in range(ctas)]

    def take(g, s):
        nonlocal next_ticket
        c, next_ticket = next_ticket, next_ticket + 1
        state[g]["chunk"][s] = c if c < total else -1
        state[g]["landed"][s] = False
        if c < total:
            in_flight.add((g, s))

    for g in rnd.sample(range(ctas), ctas):
        for s in range(stages):
            take(g, s)
    while True:
        running = [g for g in range(ctas) if not state[g]["done"]]
        if not running and not in_flight:
            break
        if in_flight and rnd.random() < 0.5:
            g, s = rnd.choice(sorted(in_flight))
            in_flight.discard((g, s))
            state[g]["landed"][s] = True
            continue
        acted = False
        for g in rnd.sample(running, len(running)):
            st, h = state[g], state[g]["head"]
            if st["chunk"][h] < 0:
                st["done"] = acted = True
            elif st["folded"] > 0 and arrived[st["chunk"][h] // per_row] == per_row:
                normalised[st["chunk"][h]] += 1
                take(g, h)
                st["head"], st["folded"], acted = (h + 1) % stages, st["folded"] - 1, True
            else:
                s = (h + st["folded"]) % stages
                if st["folded"] < stages and st["chunk"][s] >= 0 and st["landed"][s]:
                    arrived[st["chunk"][s] // per_row] += 1
                    st["folded"], acted = st["folded"] + 1, True
            if acted:
                break
        if not acted and not in_flight:
            return f"deadlock after {next_ticket} tickets, {sum(normalised)}/{total} chunks stored"
    if any(n != 1 for n in normalised):
        return "a chunk was not stored exactly once"
    return None


def main():
    tried = failed = 0
    for seed in range(600):
        pick = random.Random(seed)
        ctas, stages = pick.choice([1, 2, 3, 5, 8]), pick.choice([1, 2, 3, 6])
        per_row, rows = pick.choice([1, 3, 7, 16, 48]), pick.choice([1, 4, 9])
        if ctas * stages < per_row:
            continue  # the kernel refuses these launches
        tried += 1
        why = run(ctas, stages, rows, per_row, seed)
        if why:
            failed += 1
            print(f"ctas={ctas} stages={stages} rows={rows} chunks/row={per_row} seed={seed}: {why}")
    print(f"{tried} configurations with ctas x stages >= chunks per row, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
