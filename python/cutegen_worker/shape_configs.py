"""Which other configurations of a problem the generalization trials run (docs/judge.md, guarantee 9).

A KernelBench problem states its sizes as module-level integers that `get_inputs()` and
`get_init_inputs()` read when they are called (`batch_size = 16`, `dim = 16384`). Setting such a global
on the imported module before calling them builds the same problem at another size. Not every one may
vary:

* a global that `get_init_inputs()` or `Model.__init__` reads sizes the model itself -- its channel
  counts, its hidden width, a kernel size -- so varying it changes the parameters or the operation
  (a 5x5 convolution is another problem than a 3x3 one). Those stay as they are;
* what `get_inputs()` alone reads -- the batch, sequence lengths, spatial sizes, the dimensions of a
  parameter-free op -- is what a user's model changes from call to call: those vary (`shape_globals`).

The names are read from the functions' bytecode (following the module's own helper functions they
call), in the order `get_inputs()` first reads them, and only plain `int` globals of at least 1 count.
Whether a draw is a valid configuration is then checked on what the module builds from it
(`check_draw`): the same number of inputs with the same kinds, dtypes and ranks, Python scalars
unchanged, some tensor's shape changed, no empty tensor. Building the model again and its parameters'
shapes are checked where the problem is instantiated (generalize.py).

Kinds of draw, each from the worker's OS generator (nothing the candidate saw predicts them):
* `smaller`: every shape global v > 1 becomes an odd number (where one exists) in [ceil(v/8), ceil(v/2)]
  -- a different size in every dimension, and odd, which no vector width or tile divides;
* `larger`: the batch global grows by 1 to v/8 + 1 (odd where possible), the others stay: a size the
  benchmark's grid does not cover, at most an eighth more memory than the problem itself;
* `batch_one`: the batch global becomes 1 (only when it is not 1 already).
The batch global is the one whose name contains "batch", else the first one `get_inputs()` reads.
"""
import dis
import inspect
import math
import types

import torch

from . import problem_loader
from .buffers import describe

KINDS = ("smaller", "larger", "batch_one")
MAX_TRIALS = 8  # what a request may ask for (the C++ option's range)


def kinds_for(count: int) -> list:
    """The kinds of `count` trials: smaller, larger, batch_one, then smaller and larger in turn."""
    out = list(KINDS[:count])
    while len(out) < count:
        out.append(KINDS[len(out) % 2])
    return out


def _code_globals(code: types.CodeType, names: list) -> None:
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval not in names:
            names.append(ins.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # nested functions, lambdas, comprehensions
            _code_globals(const, names)


def read_globals(fn, module_dict: dict) -> list:
    """Global names `fn` reads, in the order it first reads them, following the functions of the same
    module that it calls (a get_inputs() that calls make_batch())."""
    names, seen = [], set()

    def visit(f):
        code = getattr(f, "__code__", None)
        if code is None or code in seen:
            return
        seen.add(code)
        own = []
        _code_globals(code, own)
        for name in own:
            if name not in names:
                names.append(name)
            target = module_dict.get(name)
            if inspect.isfunction(target) and target.__globals__ is module_dict:
                visit(target)
    visit(fn)
    return names


def shape_globals(module) -> list:
    """The module's integer globals that only get_inputs() reads (see the module docstring), in the order
    it reads them."""
    space = module.__dict__
    structural = set(read_globals(module.get_init_inputs, space))
    init = getattr(module.Model, "__init__", None)
    if inspect.isfunction(init):
        structural |= set(read_globals(init, space))
    return [name for name in read_globals(module.get_inputs, space)
            if name not in structural and type(space.get(name)) is int and space[name] >= 1]


def batch_global(names: list) -> str:
    for name in names:
        if "batch" in name.lower():
            return name
    return names[0]


def _odd_in(lo: int, hi: int, rng) -> int:
    """A number in [lo, hi], odd when the range holds one."""
    value = rng.randint(lo, hi)
    if value % 2 == 0:
        if value - 1 >= lo:
            value -= 1
        elif value + 1 <= hi:
            value += 1
    return value


def draw(kind: str, originals: dict, rng) -> dict:
    """The shape globals' values for one trial of `kind` (every shape global named, changed or not);
    None when the kind changes nothing here (every global already 1)."""
    names = list(originals)
    batch = batch_global(names)
    values = dict(originals)
    if kind == "smaller":
        for name, v in originals.items():
            if v > 1:
                values[name] = _odd_in(max(1, -(-v // 8)), max(1, -(-v // 2)), rng)
    elif kind == "larger":
        v = originals[batch]
        values[batch] = _odd_in(v + 1, v + max(1, v // 8) + 1, rng)
    elif kind == "batch_one":
        values[batch] = 1
    else:
        raise ValueError(f"unknown generalization kind {kind!r}")
    return None if values == originals else values


def overridden(module, values: dict):
    """A context manager that sets the module's globals to `values` and puts the old ones back."""
    class _Override:
        def __enter__(self):
            self.saved = {name: module.__dict__[name] for name in values}
            module.__dict__.update(values)
            return module

        def __exit__(self, *exc):
            module.__dict__.update(self.saved)
            return False
    return _Override()


def meta_inputs(module, path: str, values: dict):
    """What get_inputs() builds with the globals set to `values`, as load's input descriptions, made on
    the meta device (no memory, whatever the sizes); None when get_inputs() cannot run there."""
    meta = torch.device("meta")
    with overridden(module, values):
        try:
            built = problem_loader.call_get_inputs(module, path, 0, meta, on_device=True)
        except Exception:  # a ProblemError, or anything a factory does on meta tensors
            return None
    return [describe(v) for v in built]


def input_bytes(described: list) -> int:
    total = 0
    for d in described:
        if d.get("kind") == "tensor":
            total += math.prod(d["shape"]) * torch.empty((), dtype=getattr(torch, d["dtype"])).element_size()
    return total


def check_draw(original: list, drawn: list) -> str:
    """Why a configuration's inputs are no other shape of the same problem (`original` and `drawn`:
    input descriptions), or "" when they are."""
    if len(original) != len(drawn):
        return f"get_inputs() returns {len(drawn)} values instead of {len(original)}"
    changed = False
    for i, (a, b) in enumerate(zip(original, drawn)):
        if a.get("kind") != b.get("kind") or a.get("dtype") != b.get("dtype"):
            return f"input {i} is a {b.get('dtype')} {b.get('kind')} instead of a {a.get('dtype')} {a.get('kind')}"
        if a.get("kind") != "tensor":
            if a.get("value") != b.get("value"):
                return f"the scalar input {i} changes ({a.get('value')} to {b.get('value')})"
            continue
        if len(a["shape"]) != len(b["shape"]):
            return f"input {i} has rank {len(b['shape'])} instead of {len(a['shape'])}"
        if 0 in b["shape"]:
            return f"input {i} would be empty ({b['shape']})"
        changed = changed or a["shape"] != b["shape"]
    return "" if changed else "no input changes shape"
