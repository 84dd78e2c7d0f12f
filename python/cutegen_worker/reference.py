"""The reference computation: the problem's model run in a higher precision than the problem's own.

fp32 problems are computed in float64 and half/bfloat16 problems in float32, with TF32 off, so the
reference is (much) more accurate than any honest kernel and the tolerances measure the kernel's
error, not torch's. The upcast is a deep copy of the model cast with Module.to(dtype) and floating
inputs cast likewise. A model that does not survive the upcast (it fails, or gives a result that
is not close to its own precision's) is used as it is, said on stderr and in `reference_dtype`.
"""
import copy
import sys

import torch

from . import compare, problem_loader

_UPCAST = {torch.float32: torch.float64, torch.float64: torch.float64,
           torch.float16: torch.float32, torch.bfloat16: torch.float32}
# How far the native result may be from the upcast one before we distrust the upcast: far looser
# than any policy (a bf16 problem's own error is ~1e-2), tight enough to catch changed semantics.
_SANITY = compare.Tolerance(atol=5e-2, rtol=5e-2, rel_l2_limit=5e-2)


def disable_tf32() -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def cast_inputs(values: list, dtype) -> list:
    if dtype is None:
        return list(values)
    return [v.to(dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in values]


class Reference:
    """Computes reference outputs for one loaded problem."""

    def __init__(self, model, path: str, problem_dtype: torch.dtype, example_inputs: list, native_outputs: list):
        self.path = path
        self.model, self.dtype = self._upcast_model(model, problem_dtype, example_inputs, native_outputs)
        # A forward pass may update buffers (BatchNorm running statistics in training mode); every
        # reference starts from the same state, so references do not depend on the order of checks.
        self._buffers = [(b, b.detach().clone()) for b in self.model.buffers()]

    def _upcast_model(self, model, problem_dtype, example_inputs, native_outputs):
        target = _UPCAST.get(problem_dtype)
        if target is None or target == problem_dtype:
            return model, None
        try:
            upcast = copy.deepcopy(model).to(target)
            outputs = problem_loader.run_forward(upcast, cast_inputs(example_inputs, target), self.path)
            trouble = self._disagreement(native_outputs, outputs)
        except Exception as exc:  # a ProblemError from forward, or deepcopy failing in arbitrary ways
            trouble = f"{type(exc).__name__}: {exc}"
        if trouble is None:
            return upcast, target
        print(f"cutegen-worker: {self.path}: the {target} reference is not usable ({trouble}); "
              f"the reference is computed in the problem's own precision", file=sys.stderr)
        return model, None

    @staticmethod
    def _disagreement(native, upcast):
        if len(native) != len(upcast):
            return f"{len(upcast)} outputs instead of {len(native)}"
        for i, (n, u) in enumerate(zip(native, upcast)):
            if n.shape != u.shape:
                return f"output {i} has shape {list(u.shape)} instead of {list(n.shape)}"
            if n.is_floating_point():
                report = compare.compare(n, u, _SANITY, compare.max_abs_finite(u))
                if not report["pass"]:
                    return f"output {i} differs from the native result (rel_l2 {report['rel_l2_err']:.3g})"
        return None

    def dtype_name(self, problem_dtype: torch.dtype) -> str:
        return str(self.dtype or problem_dtype).replace("torch.", "")

    def compute(self, inputs: list) -> list:
        self._reset_buffers()
        try:
            return problem_loader.run_forward(self.model, cast_inputs(inputs, self.dtype), self.path)
        finally:
            # And after: when the reference is the problem's own model (no upcast), its buffers are
            # the pristine values the candidate's shared copies are compared with; a forward pass
            # that updated them would make the next check report them as written by the kernel.
            self._reset_buffers()

    def _reset_buffers(self) -> None:
        with torch.no_grad():
            for buffer, initial in self._buffers:
                buffer.copy_(initial)
