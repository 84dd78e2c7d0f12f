"""The two computations a candidate is judged against, on the same inputs and parameters:

* the **reference**: the problem's model in a higher precision than the problem's own (float64 for
  fp32 problems, float32 for half/bfloat16 problems), TF32 off -- far more accurate than any
  honest kernel, so what is measured is the kernel's error, not torch's;
* the **native** result: the model as written, in the problem's own dtype, TF32 off -- PyTorch's
  own error against the reference is the yardstick of the strict precision policy
  (compare.tolerance_for: a kernel may be a bounded factor less accurate than PyTorch itself).

The upcast is a deep copy of the model cast with Module.to(dtype). A model that cannot run upcast
(an op without a float64 kernel, say) is used as it is: then `dtype` is None, `note` says why, and
the load answer shows it (`reference_dtype`, `reference_note`) -- never a silent change.
"""
import copy

import torch

from . import problem_loader

_UPCAST = {torch.float32: torch.float64, torch.float64: torch.float64,
           torch.float16: torch.float32, torch.bfloat16: torch.float32}


def disable_tf32() -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def cast_inputs(values: list, dtype) -> list:
    if dtype is None:
        return list(values)
    return [v.to(dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in values]


def model_state(model: torch.nn.Module) -> list:
    """Parameters then buffers, in the kernel contract's order (named_parameters, named_buffers)."""
    return [t for _, t in model.named_parameters()] + [t for _, t in model.named_buffers()]


class _StatefulModel:
    """A model whose parameters and buffers can be set for one forward pass and are put back after.

    Putting them back also undoes what a forward pass itself changes (BatchNorm's running statistics
    in training mode), so results never depend on the order of calls."""

    def __init__(self, model: torch.nn.Module, path: str, dtype):
        self.model, self.path, self.dtype = model, path, dtype
        self.state = model_state(model)
        self.saved = [t.detach().clone() for t in self.state]

    def run(self, inputs: list, params=None) -> list:
        with torch.no_grad():
            if params is not None:
                for t, value in zip(self.state, params):
                    t.copy_(value.to(device=t.device, dtype=t.dtype))
            try:
                return problem_loader.run_forward(self.model, cast_inputs(inputs, self.dtype), self.path)
            finally:
                for t, saved in zip(self.state, self.saved):
                    t.copy_(saved)


class Reference:
    """Reference and native outputs for one loaded problem."""

    def __init__(self, model, path: str, problem_dtype: torch.dtype, example_inputs: list):
        self.path = path
        self.note = ""
        upcast, self.dtype = self._upcast_model(model, problem_dtype, example_inputs)
        self._reference = _StatefulModel(upcast, path, self.dtype)
        self._native = _StatefulModel(model, path, None)

    def _upcast_model(self, model, problem_dtype, example_inputs):
        target = _UPCAST.get(problem_dtype)
        if target is None or target == problem_dtype:
            return model, None
        try:
            upcast = copy.deepcopy(model).to(target)
            problem_loader.run_forward(upcast, cast_inputs(example_inputs, target), self.path)
            return upcast, target
        except Exception as exc:  # a ProblemError from forward, or deepcopy failing in arbitrary ways
            self.note = (f"the model does not run in {str(target).replace('torch.', '')} "
                         f"({type(exc).__name__}: {' '.join(str(exc).split())[:300]}); the reference is computed in "
                         f"the problem's own precision, so a kernel is held to PyTorch's own result")
            return model, None

    def dtype_name(self, problem_dtype: torch.dtype) -> str:
        return str(self.dtype or problem_dtype).replace("torch.", "")

    def compute(self, inputs: list, params=None) -> list:
        """The reference outputs for `inputs` with `params` (None: the problem's own)."""
        return self._reference.run(inputs, params)

    def native(self, inputs: list, params=None) -> list:
        """What PyTorch computes in the problem's own precision, TF32 off."""
        disable_tf32()
        return self._native.run(inputs, params)
