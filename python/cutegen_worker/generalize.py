"""Generalization trials: a kernel that passed at the problem's own shape, run at other shapes of the same
problem (docs/judge.md, guarantee 9).

Agents hard-code the benchmark's shapes; a kernel that is right only there is useless in a user's model.
After the main session passed, the worker builds the problem again at a few other configurations
(shape_configs.py says which globals vary and how: smaller odd sizes, a larger batch, batch 1), each
drawn from the OS generator after the main session's runner has exited, so nothing the candidate saw
predicts them. Each configuration is loaded as `load` loads the problem (Model(*get_init_inputs()) again,
the reference, PyTorch's own result) and judged by a CandidateSession of its own: a new runner process,
sandboxed like the first, new shared buffers of the new shapes, two correctness trials (the problem's
inputs with its own parameters, signed inputs with random parameters) with the same poison, two runs per
trial and full checks. No timing: nothing at another shape is reported as a time.

Per trial an outcome:
* `pass`: both trials right -- the shape is added to the verified list;
* `refused`: the kernel declined the shapes as the contract lets it (CUTEGEN_ERROR_UNSUPPORTED or
  _BAD_ARGUMENTS, a workspace size of 0 or over the cap) -- not wrong, and not verified;
* `mismatch`: a check failed (wrong, unwritten, nondeterministic, inputs written) -- verdict `shape_specific`;
* `crash`: the call failed otherwise (a crash, a CUDA error, a timeout, another return code) -- verdict
  `shape_specific` too: the contract's way to decline a shape is a return code, and an illegal access in a
  user's process is worse than a refusal. Printing, a trapped system call and tampering keep their own
  verdicts, as at the problem's shape.
The first failing trial ends them. The record's `verified` list -- the problem's own shapes first, then
those of each passing trial -- is what an export may call the kernel on.
"""
import dataclasses
import gc
import secrets
import sys
import time

import torch

from . import memory, params as params_mod, shape_configs
from .candidate_session import CALL_SEED_BITS, CandidateSession
from .errors import ProblemError, WorkerError
from .staging import CallSpec

CHECK_FAILURES = ("mismatch", "unwritten", "nondeterministic", "input_mutated", "result_reuse")
HOSTILE = ("printed_output", "forbidden_call", "tampering")  # judged at any shape as at the problem's own
DRAWS_PER_TRIAL = 4  # draws of one kind before the trial is given up (a draw the problem cannot build)
LOAD_SEED_BITS = 31  # what `load` seeds with (the model's own parameters come from it)


def signature(config: dict, inputs: list, output_shapes: list) -> dict:
    """One verified shape: the globals' values, every forward input's shape (None for a Python scalar), every
    output's shape."""
    return {"config": dict(config),
            "inputs": [list(d["shape"]) if d.get("kind") == "tensor" else None for d in inputs],
            "outputs": [list(s) for s in output_shapes]}


def describe_config(config: dict, originals: dict) -> str:
    """`batch_size=13, dim=9001`: the globals a configuration changes."""
    changed = [f"{name}={value}" for name, value in config.items() if originals.get(name) != value]
    return ", ".join(changed) or "the problem's own sizes"


def wanted(plan, record: dict) -> bool:
    """Whether a passing kernel's record calls for the trials: always, unless the loop gave a bar
    (`keep_bar_ms`) that its time does not beat. Such a kernel is rolled back whatever its other
    shapes do, so trying them would only cost the loop's turnaround (seconds on a KernelBench-size problem)."""
    bar = plan.keep_bar_ms
    return not (plan.generalize and bar is not None and not record["time"]["median_ms"] < bar)


def skipped(problem, plan, record: dict) -> dict:
    """The `generalization` record of a kernel `wanted` left untried: only its own shape verified, the bar and
    its time in the note, `skipped_bar_ms` set (docs/worker-protocol.md)."""
    module = problem.module
    names = shape_configs.shape_globals(module)
    own = signature({name: module.__dict__[name] for name in names}, problem.metadata["inputs"], problem.output_shapes)
    median, bar = record["time"]["median_ms"], plan.keep_bar_ms
    return {"asked": plan.generalize, "varied": names, "trials": [], "verified": [own], "seconds": 0.0,
            "skipped_bar_ms": bar,
            "notes": [f"not tried at other shapes: its {median:.4g} ms is not below {bar:.4g} ms, the time it had "
                      "to beat to be kept"]}


def run(session, problem, plan, make_link, record: dict) -> dict:
    """The generalization trials of a candidate that passed at `problem`'s own shape; sets `record`'s verdict
    when one fails. Returns the `generalization` record (docs/worker-protocol.md)."""
    t0 = time.perf_counter()
    module = problem.module
    names = shape_configs.shape_globals(module)
    originals = {name: module.__dict__[name] for name in names}
    own = signature(originals, problem.metadata["inputs"], problem.output_shapes)
    result = {"asked": plan.generalize, "varied": names, "trials": [], "verified": [own], "notes": []}
    if plan.generalize and not names:
        result["notes"].append("get_inputs() reads no integer global that get_init_inputs() and Model.__init__ do "
                               "not: the problem has no other shape to try (only its own is verified)")
    rng = secrets.SystemRandom()  # drawn now, after the main session's runner exited: nothing predicts them
    kinds = shape_configs.kinds_for(plan.generalize) if names else []
    if kinds:
        # The main session's shared buffers are held for later (Session.held_arenas) and its private tensors went
        # back to torch's cache; a new slot's buffers come from cuMemAlloc, so both are freed now. Only then: with
        # no trial to run (a screening asks none) the collection alone cost 0.22 s on an H100 at KernelBench 19's
        # size, on every screened candidate.
        session.release_prepared()
    base = shape_configs.meta_inputs(module, problem.path, originals) if kinds else None
    seen = [own["inputs"]]
    for kind in kinds:
        instance, config, why = _instantiate(session, problem, kind, originals, base, seen, rng)
        if instance is None:
            result["notes"].append(f"no {kind} configuration: {why}")
            continue
        try:
            trial = _judge(instance, plan, make_link, kind, config, originals, rng)
        except ProblemError as exc:  # the reference itself fails at these sizes (on signed inputs, say)
            result["notes"].append(f"no {kind} trial: the problem failed with {describe_config(config, originals)}: "
                                   f"{str(exc)[:300]}")
            continue
        finally:
            _drop(instance)
        seen.append(trial["inputs"])
        check = trial.pop("check")
        result["trials"].append(trial)
        if trial["outcome"] == "pass":
            result["verified"].append(signature(config, instance.metadata["inputs"], instance.output_shapes))
        elif trial["outcome"] != "refused":
            _fail(record, trial, check, len(result["trials"]) - 1)
            break
    result["seconds"] = time.perf_counter() - t0
    return result


def _instantiate(session, problem, kind: str, originals: dict, base, seen: list, rng):
    """(the problem loaded at a fresh `kind` configuration, its globals, "") or (None, None, why not)."""
    why = "no draw gave a shape the problem can be built at"
    for _ in range(DRAWS_PER_TRIAL):
        config = shape_configs.draw(kind, originals, rng)
        if config is None:
            return None, None, "every global it would change is 1 already"
        drawn = shape_configs.meta_inputs(problem.module, problem.path, config) if base is not None else None
        if drawn is not None:
            # On the meta device first: no memory, whatever the sizes.
            if why_not := shape_configs.check_draw(base, drawn):
                why = why_not
                continue
            if [d.get("shape") for d in drawn] in seen:
                why = "every draw repeated a shape already tried"
                continue
            if not _fits(problem, base, drawn):
                why = "it would not fit in the device memory free beside the loaded problem"
                continue
        try:
            instance = session.instantiate(problem.path, problem.device, rng.getrandbits(LOAD_SEED_BITS), config)
        except WorkerError as exc:  # the problem's code fails at these sizes: not the kernel's business
            why = f"the problem cannot be built with {describe_config(config, originals)}: {str(exc)[:300]}"
            continue
        why = _same_problem(problem, instance) or shape_configs.check_draw(problem.metadata["inputs"],
                                                                          instance.metadata["inputs"])
        if not why and [d.get("shape") for d in instance.metadata["inputs"]] in seen:
            why = "every draw repeated a shape already tried"
        if not why:
            try:
                memory.check_fits(problem.path, instance.metadata["memory"], problem.device, copies="none")
                return instance, config, ""
            except WorkerError as exc:
                why = str(exc)
        _drop(instance)
    return None, None, why


def _fits(problem, base: list, drawn: list) -> bool:
    """Whether a session at the drawn inputs' size (the problem's own session scaled by the inputs' bytes)
    fits in what is free now."""
    ratio = shape_configs.input_bytes(drawn) / max(1, shape_configs.input_bytes(base))
    estimate = problem.metadata["memory"]
    need = ratio * (estimate["slot_bytes"] + estimate["staged_bytes"] + estimate["check_workspace_bytes"])
    free, _ = memory.device_memory(problem.device)
    return need <= free


def _same_problem(problem, instance) -> str:
    """Why `instance` is not the same model at another size ("" when it is): its parameters and buffers must
    keep their names, shapes and dtypes, its outputs their number, dtypes and ranks, none of them empty."""
    if instance.param_names != problem.param_names or \
            [(tuple(p.shape), p.dtype) for p in instance.params] != [(tuple(p.shape), p.dtype) for p in problem.params]:
        return "the model's parameters change with it (the global sizes the model, not only its inputs)"
    if instance.output_dtypes != problem.output_dtypes or \
            [len(s) for s in instance.output_shapes] != [len(s) for s in problem.output_shapes]:
        return "forward() returns outputs of other ranks or dtypes"
    if any(0 in s for s in instance.output_shapes):
        return f"an output would be empty ({instance.output_shapes})"
    return ""


def _drop(instance) -> None:
    sys.modules.pop(instance.module.__name__, None)
    gc.collect()
    if torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def _judge(instance, plan, make_link, kind: str, config: dict, originals: dict, rng) -> dict:
    """One configuration's session: correctness trials only, through the same runner, buffers and checks."""
    trials = [CallSpec(seed=rng.getrandbits(CALL_SEED_BITS), kind="problem", params=params_mod.OWN),
              CallSpec(seed=rng.getrandbits(CALL_SEED_BITS), kind="signed", params=params_mod.RANDOM)]
    rng.shuffle(trials)
    # The workspace size asked before (Plan.workspace_bytes) or guessed was the problem's shape's: this one asks its own.
    sub = dataclasses.replace(plan, trials=trials, warmup=0, runs=0, generalize=0, workspace_bytes=None,
                              workspace_guess_bytes=None)
    t0 = time.perf_counter()
    rec = CandidateSession(instance, sub, make_link, timed=False).run()
    verdict = rec["verdict"]
    if verdict == "pass":
        outcome = "pass"
    elif rec.get("refused"):
        outcome = "refused"
    elif verdict in CHECK_FAILURES:
        outcome = "mismatch"
    else:
        outcome = "crash"
    failed = rec["failed_check"]
    return {"kind": kind, "config": dict(config), "changed": describe_config(config, originals),
            "inputs": [d.get("shape") for d in instance.metadata["inputs"]],
            "outputs": [list(s) for s in instance.output_shapes], "outcome": outcome, "verdict": verdict,
            "reason": rec["reason"], "seconds": time.perf_counter() - t0,
            "check": rec["checks"][failed] if failed is not None else None,
            "runner": {"end": rec["runner"].get("end", "")}}


def _fail(record: dict, trial: dict, check, index: int) -> None:
    """The main record's verdict for a failing trial: `shape_specific`, or the hostile behaviour's own."""
    where = f"with {trial['changed']} (inputs {trial['inputs']})"
    if trial["verdict"] in HOSTILE:
        record["verdict"], record["reason"] = trial["verdict"], f"at another shape of the problem, {where}: {trial['reason']}"
    else:
        what = "gives wrong results" if trial["outcome"] == "mismatch" else f"fails ({trial['verdict']})"
        record["verdict"] = "shape_specific"
        record["reason"] = (f"the kernel is right at the problem's shape but {what} at another, {where}: {trial['reason']}; "
                            "a kernel must compute every shape it accepts and refuse the others with "
                            "CUTEGEN_ERROR_UNSUPPORTED")
    record["failed_check"] = None
    if check is not None:
        record["checks"].append(dict(check, shape_trial=index, config=trial["config"]))
        record["failed_check"] = len(record["checks"]) - 1
