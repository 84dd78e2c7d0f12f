"""The slot (the one set of shared buffers a runner session uses) and staging a call into it.

Every call of a session -- correctness trial, warm-up, timed -- uses the same slot: the forward
inputs, a copy of the parameters and buffers, and two output sets, each a dedicated shared
allocation (shared_buffers.py). A pointer therefore tells the candidate nothing about which call it
is in. Before each call the worker *stages* a fresh set into the slot: inputs from get_inputs()
under the call's seed and kind, parameters own or drawn from the seed (params.py), outputs
poisoned (a NaN of fresh random bits per staging, recognised bit for bit: a correct output may be NaN). Staged values are a pure function of the CallSpec, so the worker can make them again
when it checks the call; it keeps them only until then.

The staging order is chosen so that the new inputs are visible to the candidate's process for as
short a time as possible before the call: outputs are poisoned first, then the workspace (a kernel
with one, contract v2) is filled with a fresh NaN pattern, inputs and parameters are written last,
then L2 is flushed (which also evicts what the copy left there).
"""
import secrets
from dataclasses import dataclass

import torch

from . import params as params_mod
from .buffers import output_pattern, poison_, poison_workspace_, scalar_ref
from .shared_buffers import PAGE_BYTES


@dataclass(frozen=True)
class CallSpec:
    seed: int
    kind: str = "problem"       # inputs.TRIAL_KINDS
    scale: float = 1.0
    params: str = params_mod.RANDOM  # params.KINDS


@dataclass
class Staged:
    """What the worker keeps of one staged call until it has checked it."""
    spec: CallSpec
    inputs: list   # pristine forward inputs (private tensors and Python scalars)
    params: list   # pristine parameters and buffers (private, or the problem's own tensors)


class Slot:
    def __init__(self, arena, problem, output_sets: int = 2):
        self.arena = arena
        example = problem.source.generate(problem.example_seed)
        # Input tensors keep the problem's dense strides; scalars have no buffer.
        self.inputs = [arena.copy_of(v) if isinstance(v, torch.Tensor) else None for v in example]
        # What the workspace size is asked with at load (sizes may depend only on shapes and dtypes).
        self.example_scalars = [None if isinstance(v, torch.Tensor) else scalar_ref(v) for v in example]
        del example
        self.params = [arena.copy_of(p) for p in problem.params]
        self.outputs = [[arena.empty(shape, dt) for shape, dt in zip(problem.output_shapes, problem.output_dtypes)]
                        for _ in range(output_sets)]
        self.output_patterns = [None] * output_sets  # each set's poison (buffers.output_pattern), fresh per staging
        for index in range(output_sets):
            self.poison_outputs(index)
        self.workspace = None          # a uint8 buffer once the kernel asked for one (add_workspace)
        self.workspace_pattern = None  # the 32-bit pattern of the last fill

    def add_workspace(self, nbytes: int) -> torch.Tensor:
        """The kernel's workspace: its own shared allocation, the tensor covering all of it (whole GPU
        pages, whole words on the CPU) so that every byte the candidate can reach is poisoned."""
        self.workspace = self.new_workspace(nbytes)
        self.poison_workspace()
        return self.workspace

    def drop_workspace(self):
        """Frees the workspace once no runner maps it (a guessed size the kernel did not ask for)."""
        if self.workspace is not None:
            self.arena.drop(self.workspace)
            self.workspace = self.workspace_pattern = None

    def new_workspace(self, nbytes: int) -> torch.Tensor:
        """A workspace allocation as add_workspace makes it, not yet the slot's: a screening group keeps one per
        candidate and makes each the slot's (`workspace`) for that candidate's calls."""
        unit = PAGE_BYTES if self.arena.device.type == "cuda" else 8
        return self.arena.empty((-(-nbytes // unit) * unit,), torch.uint8)

    def poison_outputs(self, index: int):
        """Output set `index` filled with a fresh poison: a NaN whose bits no kernel computes, drawn anew
        so that nothing learned of an earlier fill helps a kernel forge it."""
        others = {p & 0xFF for i, p in enumerate(self.output_patterns) if i != index and p is not None}
        pattern = output_pattern(secrets.randbits(32))
        while pattern & 0xFF in others:
            # The sets' poisons differ in their low byte, so in every element width: an integer output has
            # no value outside its valid set, so what catches an element neither run wrote is that the two
            # runs of a trial then hold two different values (and at most one can equal the reference).
            pattern = output_pattern(secrets.randbits(32))
        self.output_patterns[index] = pattern
        for o in self.outputs[index]:
            poison_(o, self.output_patterns[index])

    def poison_workspace(self):
        if self.workspace is not None:
            self.workspace_pattern = poison_workspace_(self.workspace, secrets.randbits(32))

    def repoison_workspace(self):
        """Between two calls on one staged set (a trial's two runs): a fresh fill, complete before
        the runner is told to call."""
        if self.workspace is None:
            return
        self.poison_workspace()
        if self.arena.device.type == "cuda":
            torch.cuda.synchronize(self.arena.device)

    def session_refs(self) -> dict:
        """The buffers as the runner's session file names them (tensor refs; scalars are per call)."""
        return {
            "inputs": [self.arena.ref(t) if t is not None else None for t in self.inputs],
            "params": [self.arena.ref(p) for p in self.params],
            "outputs": [[self.arena.ref(o) for o in outs] for outs in self.outputs],
            "workspace": self.arena.ref(self.workspace) if self.workspace is not None else None,
        }

    def stage(self, problem, spec: CallSpec, flush=None, output_sets=None) -> Staged:
        """Writes a fresh set for `spec` into the slot, poisoning `output_sets` (default: all); returns
        the pristine values for the check."""
        values = problem.source.generate(spec.seed, spec.kind, spec.scale)
        params = params_mod.values_for(problem.params, spec.params, spec.seed)
        staged = Staged(spec=spec, inputs=values, params=params)
        self.restore(staged, flush, output_sets)
        return staged

    def restore(self, staged: Staged, flush=None, output_sets=None):
        """The slot as staging `staged` left it: fresh poison in `output_sets` (default: all) and the workspace,
        the inputs and parameters written again from the pristine values, L2 flushed. A screening group
        (screen_group.py) restores before each candidate after the first, so that none sees what another
        left in the slot."""
        with torch.no_grad():
            for index in range(len(self.outputs)):
                if output_sets is None or index in output_sets:
                    self.poison_outputs(index)
            self.poison_workspace()  # before every call: nothing of the last one survives in it
            for shared, value in zip(self.inputs, staged.inputs):
                if shared is not None:
                    shared.copy_(value)
            for shared, value in zip(self.params, staged.params):
                shared.copy_(value)
        if flush is not None:
            flush()
        # The runner is another process: it must find the buffers written before it is told to call.
        # (The worker's copies and poisoning -- the workspace's too -- are asynchronous; without this
        # the candidate raced them.)
        if self.arena.device.type == "cuda":
            torch.cuda.synchronize(self.arena.device)

    def scalars(self, staged: Staged) -> list:
        """The host scalars of a staged call, in input order (null for tensor inputs)."""
        return [None if shared is not None else scalar_ref(v) for shared, v in zip(self.inputs, staged.inputs)]

    def regenerate(self, problem, spec: CallSpec) -> Staged:
        """The pristine values of `spec` again (for a check after the kept copy was dropped)."""
        return Staged(spec=spec, inputs=problem.source.generate(spec.seed, spec.kind, spec.scale),
                      params=params_mod.values_for(problem.params, spec.params, spec.seed))
