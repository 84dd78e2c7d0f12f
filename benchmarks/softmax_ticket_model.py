#!/usr/bin/env python3
"""A model of the ticket softmax's protocol (library/softmax_ticket.cu, and the experiment before it):
does every chunk get normalised exactly once, and when can it deadlock?

`run` is session 17's form: each CTA takes chunk tickets in order into a ring of stages, folds the oldest
unfolded chunk once its load lands (arriving on its row's counter), and normalises the oldest chunk once its
row's count is complete, taking the next ticket into that stage.

`run_roles` is the warp-specialised form (session 18) with its roles acting independently: a producer refills
emptied stages in ring order, taking one ticket for every stage it finds empty in a single step (tickets are
only ever taken into empty stages); compute threads fold landed chunks in ring order (publishing the chunk's
slot) and normalise the oldest chunk once the poller has marked it ready, then empty its stage -- at once, or
with `deferred` (TKS_BULK_STORE) only at their next normalise or idle step; a poller marks stages ready in
ring order once every slot of the stage's row is published. A ticket past the end marks its stage as the
end, which stops the poller and, once it is the oldest, the compute threads. Loads land and roles act in
random order.

`run_roles(..., warps=W)` is the per-warp form (session 19): the compute threads are W warps that no longer
meet at a barrier (four CTA-wide barriers a chunk kept them busy 96-97% of the time), so each may lag or run
ahead of the others. Each warp keeps its own oldest chunk and folded chunks, folds its slice of each landed
stage in ring order publishing its own slot (a row is ready once all chunks-per-row x W slots are), normalises
its slice of the oldest chunk once the stage is ready and hands the stage back on its own (with `deferred`, at
its own next normalise or idle step); the producer refills a stage only once all W warps have. W = 1 is
session 18's form, step for step. A run also fails when a warp normalises a chunk before every slot of its row is
published (a poller counting chunks instead of slots would).

Run: python3 benchmarks/softmax_ticket_model.py   (prints each configuration that fails, then a summary)
Recorded: session 17, 307 configurations of `run` with CTAs x stages >= chunks per row, none failed; below
that, deadlocks (the kernels refuse such launches). Session 18: the same for `run_roles`, with and without
deferred emptying. Session 19: the same for W = 2 and 4, each with and without deferred emptying; W = 1 gave
session 18's outcome for each of the 600 configurations, with and without `deferred` and `hold_ahead`.
python/tests/test_softmax_ticket_protocol.py runs every form on every test run.
"""
import random
import sys
from functools import partial


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


def compute_warp(stages):
    """A compute warp's own state: its oldest chunk's stage, the chunks from there it folded but has not
    stored, the stage its last bulk store reads (deferred), and per stage the fill it folded and stored."""
    return {"head": 0, "unstored": 0, "storing": None, "done": False,
            "folded": [0] * stages, "stored": [0] * stages}


def run_roles(ctas, stages, rows, per_row, seed, deferred=False, hold_ahead=False, warps=1):
    rnd = random.Random(seed)
    total = rows * per_row
    next_ticket = 0
    # Per row: the slots published, (chunk, warp) pairs -- the poller waits for each slot, so a slot published
    # twice must not stand in for one never published.
    published = [set() for _ in range(rows)]
    normalised = [[0] * warps for _ in range(total)]  # per chunk: each warp's stores of its slice
    early = []  # chunks normalised before every slot of their row was published
    in_flight = set()  # (cta, stage, fill) loads not landed yet
    # Per stage: `fill` counts its fills (the kernels' barrier phases); `landed`, `ready` and, per warp,
    # `folded` and `stored` name the fill each has reached, so a role never acts on a stage's previous chunk.
    # `emptied` counts the warps that handed the stage's fill back (its `empty` barrier counts `warps`
    # arrivals); every stage starts empty.
    cta = [{"chunk": [None] * stages, "fill": [0] * stages, "landed": [0] * stages, "ready": [0] * stages,
            "emptied": [warps] * stages, "next_fill": 0, "producing": True, "poll": 0, "polling": True,
            "held": None, "warps": [compute_warp(stages) for _ in range(warps)]} for _ in range(ctas)]

    def produce(g):
        nonlocal next_ticket
        st = cta[g]
        n = 0
        while n < stages and st["emptied"][(st["next_fill"] + n) % stages] == warps:
            n += 1
        if n == 0:
            return False
        first, next_ticket = next_ticket, next_ticket + n
        tickets = list(range(first, first + n))
        if hold_ahead:  # what the kernels must not do: keep one ticket taken ahead of a stage for it
            if st["held"] is None:
                st["held"], next_ticket = next_ticket, next_ticket + 1
            tickets = [st["held"]] + tickets
            st["held"] = tickets.pop()
        for i in range(n):
            s = (st["next_fill"] + i) % stages
            st["emptied"][s] = 0
            st["fill"][s] += 1
            c = tickets[i]
            st["chunk"][s] = c if c < total else -1
            if c >= total:  # the end: the stage "lands" with no chunk
                st["landed"][s], st["producing"] = st["fill"][s], False
                return True
            in_flight.add((g, s, st["fill"][s]))
        st["next_fill"] += n
        return True

    def poll(g):
        st = cta[g]
        s, lap = st["poll"] % stages, st["poll"] // stages + 1
        if st["landed"][s] != lap:
            return False
        if st["chunk"][s] < 0:
            st["polling"] = False
            return True
        if len(published[st["chunk"][s] // per_row]) < per_row * warps:
            return False
        st["ready"][s], st["poll"] = lap, st["poll"] + 1
        return True

    def compute(g, w):
        st, me = cta[g], cta[g]["warps"][w]
        h = me["head"]
        f = (h + me["unstored"]) % stages
        if me["unstored"] > 0 and st["ready"][h] == st["fill"][h] > me["stored"][h]:
            if len(published[st["chunk"][h] // per_row]) < per_row * warps:
                early.append(st["chunk"][h])  # normalised with part of its row's statistics
            normalised[st["chunk"][h]][w] += 1
            me["stored"][h] = st["fill"][h]
            if deferred:
                if me["storing"] is not None:
                    st["emptied"][me["storing"]] += 1
                me["storing"] = h
            else:
                st["emptied"][h] += 1
            me["head"], me["unstored"] = (h + 1) % stages, me["unstored"] - 1
            return True
        if me["unstored"] < stages and st["landed"][f] == st["fill"][f] > me["folded"][f]:
            if st["chunk"][f] >= 0:
                published[st["chunk"][f] // per_row].add((st["chunk"][f], w))
                me["folded"][f] = st["fill"][f]
                me["unstored"] += 1
                return True
            if me["unstored"] == 0:
                me["done"] = True
                return True
        if me["storing"] is not None:  # idle: hand back the stage the warp's last store read
            st["emptied"][me["storing"]] += 1
            me["storing"] = None
            return True
        return False

    while True:
        if in_flight and rnd.random() < 0.5:
            g, s, fill = rnd.choice(sorted(in_flight))
            in_flight.discard((g, s, fill))
            cta[g]["landed"][s] = fill
            continue
        actors = []
        for g, st in enumerate(cta):
            if st["producing"]:
                actors.append(partial(produce, g))
            if st["polling"]:
                actors.append(partial(poll, g))
            actors += [partial(compute, g, w) for w, me in enumerate(st["warps"]) if not me["done"]]
        if not actors and not in_flight:
            break
        rnd.shuffle(actors)
        if not any(act() for act in actors) and not in_flight:
            stored = sum(all(n) for n in normalised)  # chunks every warp stored its slice of
            return f"deadlock after {next_ticket} tickets, {stored}/{total} chunks stored"
    if early:
        return f"chunk {early[0]} was normalised before its row's statistics were complete"
    if any(n != [1] * warps for n in normalised):
        return "a chunk was not stored exactly once"
    return None


def configurations(count):
    """(ctas, stages, rows, chunks per row, seed) drawn as the recorded runs drew them, every one of them."""
    for seed in range(count):
        pick = random.Random(seed)
        ctas, stages = pick.choice([1, 2, 3, 5, 8]), pick.choice([1, 2, 3, 6])
        per_row, rows = pick.choice([1, 3, 7, 16, 48]), pick.choice([1, 4, 9])
        yield ctas, stages, rows, per_row, seed


def forms():
    """(name, model) for every form: `run`, then `run_roles` with 1, 2 and 4 compute warps, each with and
    without deferred emptying."""
    yield "run", run
    for warps in (1, 2, 4):
        for deferred in (False, True):
            name = "run_roles" + (f" warps={warps}" if warps > 1 else "") + (" deferred" if deferred else "")
            yield name, partial(run_roles, deferred=deferred, warps=warps)


def main():
    failed = 0
    for name, model in forms():
        tried = 0
        for ctas, stages, rows, per_row, seed in configurations(600):
            if ctas * stages < per_row:
                continue  # the kernels refuse these launches
            tried += 1
            why = model(ctas, stages, rows, per_row, seed)
            if why:
                failed += 1
                print(f"{name}: ctas={ctas} stages={stages} rows={rows} chunks/row={per_row} seed={seed}: {why}")
        print(f"{name}: {tried} configurations with ctas x stages >= chunks per row")
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
