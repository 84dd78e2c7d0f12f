#include "report/kernelbench_export.h"

#include <fmt/format.h>

#include "common/version.h"
#include "report/python_source.h"
#include "report/torch_export.h"

namespace cutegen {
namespace {

// The header is comments, not a docstring: a problem file may start with `from __future__ import ...`,
// which only a docstring may precede, and the problem's code comes first.
constexpr const char* kKernelBenchTemplate = R"PY(# {{OP}}: a CuTe kernel made by cutegen {{VERSION}}, as a KernelBench submission (ModelNew).
# {{VERIFIED_BY}}
#
# One self-contained file. First the problem's own code -- its Model without forward(), get_inputs()
# and get_init_inputs() -- then the kernel's CUDA/CuTe source, the kernel contract header and a torch
# binding as text, built on import by torch.utils.cpp_extension.load for {{ARCH}} against the CUTLASS
# headers of the nvidia-cutlass wheel ($CUTLASS_DIR instead, when set). ModelNew subclasses Model: its
# constructor, parameters and state_dict are the problem's, and its forward() runs the kernel, for the
# calls in VERIFIED_CALLS only; any other call is refused with the reason.
#
# KernelBench:  eval_kernel_against_ref(open(problem).read(), open("model_new.py").read(), backend="cute",
#                                       measure_performance=True)
# Trust: importing this file runs the kernel's host code (machine-written) in your process.

{{PROBLEM_SOURCE}}

# ------------------------------------------------------------------------------------------------
# The cutegen kernel.
import hashlib as _hashlib
import importlib.util as _importlib_util
import inspect as _inspect
import os as _os
import re as _re
import warnings as _warnings

import torch as _torch
import torch.utils.cpp_extension as _cpp_extension

_OP = "{{OP}}"
_ARCH = "{{ARCH}}"
_CAPABILITY = {{CAPABILITY}}
_CUTLASS_VERIFIED = "{{CUTLASS_VERSION}}"
_NVCC_FLAGS = {{NVCC_FLAGS}}
# Every call the kernel was verified for: forward()'s arguments, then Model's named_parameters() and
# named_buffers(), and the outputs it writes.
VERIFIED_CALLS = {{VERIFIED_CALLS}}

_KERNEL_SOURCE = {{KERNEL_SOURCE}}

_CONTRACT_HEADER = {{CONTRACT_HEADER}}

_BINDING_SOURCE = {{BINDING_SOURCE}}


{{HELPERS}}

def _write_if_changed(path, text):
    if _os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return  # unchanged: ninja keeps the build
    _os.makedirs(_os.path.dirname(path), exist_ok=True)
    partial = f"{path}.{_os.getpid()}.tmp"
    with open(partial, "w", encoding="utf-8") as f:
        f.write(text)
    _os.replace(partial, path)


def _build():
    """The kernel and the binding, compiled by torch's extension loader (built once per content)."""
    cutlass = _cutlass_include()
    parts = [_KERNEL_SOURCE, _CONTRACT_HEADER, _BINDING_SOURCE, cutlass] + _NVCC_FLAGS
    name = f"cutegen_{_OP}_" + _hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]
    root = _os.environ.get("TORCH_EXTENSIONS_DIR") or _cpp_extension.get_default_build_root()
    src = _os.path.join(root, name + "_src")
    _write_if_changed(_os.path.join(src, "kernel.cu"), _KERNEL_SOURCE)
    _write_if_changed(_os.path.join(src, "binding.cpp"), _BINDING_SOURCE)
    _write_if_changed(_os.path.join(src, "include", "cutegen", "kernel.h"), _CONTRACT_HEADER)
    ldflags = ["-lcuda"]  # CuTe's TMA descriptors call the driver
    stubs = _os.path.join(_cpp_extension.CUDA_HOME or "", "lib64", "stubs")
    if _os.path.isdir(stubs):
        ldflags.insert(0, f"-L{stubs}")  # links where only the toolkit is installed; the driver's libcuda runs it
    return _cpp_extension.load(
        name=name,
        sources=[_os.path.join(src, "binding.cpp"), _os.path.join(src, "kernel.cu")],
        extra_include_paths=[_os.path.join(src, "include"), cutlass] + _cutlass_util_include(cutlass),
        extra_cflags=["-O2"],
        extra_cuda_cflags=_NVCC_FLAGS,
        extra_ldflags=ldflags,
        verbose=_os.environ.get("CUTEGEN_BUILD_VERBOSE") == "1",
    )


_EXTENSION = _build()


class ModelNew(Model):
    """The problem's Model with the cutegen kernel as forward()."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not _verified_init(args, kwargs):
            raise ValueError(f"cutegen.{_OP}: the kernel was made for Model(*get_init_inputs()), whose values it "
                             f"builds in; got ModelNew(*{args!r}, **{kwargs!r})")

    def forward(self, *inputs):
        args = list(inputs) + [p for _, p in self.named_parameters()] + [b for _, b in self.named_buffers()]
        call = _verified_call(args)
        if call is None:
            raise ValueError(f"cutegen.{_OP}: {_calls_text(args)}")
        why = _device_problem(args)
        if why:
            raise ValueError(f"cutegen.{_OP}: {why}")
        return _run_kernel(args, call)
)PY";

constexpr const char* kForwardStub =
    "{0}def forward(self, *args):\n"
    "{0}    raise NotImplementedError(\"cutegen: this file leaves the PyTorch forward() out; ModelNew.forward \"\n"
    "{0}                              \"runs the CuTe kernel\")\n";

}  // namespace

Result<KernelBenchFile> make_kernelbench_file(const ExportSource& source) {
  KernelBenchFile out;
  out.op_name = op_identifier(source.problem.name.empty() ? "kernel" : source.problem.name);
  std::string problem = source.problem_source;
  if (auto forward = find_method_lines(problem, "Model", "forward"))
    problem = replace_lines(problem, *forward, fmt::format(kForwardStub, forward->indent));
  else
    out.note = "Model.forward() is not in the problem's text (a Model built by assignment or a forward() inherited): "
               "model_new.py keeps the reference computation, and KernelBench's static checker may warn about it";
  if (!problem.empty() && problem.back() != '\n') problem += '\n';

  auto calls = python_verified_calls(source);
  if (!calls) return calls.error();
  auto capability = python_capability(source.build.arch);
  if (!capability) return capability.error();
  auto kernel = python_raw_string(source.kernel_source);
  if (!kernel) return Error{"the kernel source: " + kernel.error().message};
  auto header = python_raw_string(source.build.contract_header);
  if (!header) return Error{"the contract header: " + header.error().message};
  auto binding = python_raw_string(kTorchBindingSource);
  if (!binding) return binding.error();
  auto text = fill_template(kKernelBenchTemplate, {{"OP", out.op_name},
                                                   {"VERSION", CUTEGEN_VERSION},
                                                   {"VERIFIED_BY", source.verified_by},
                                                   {"ARCH", source.build.arch},
                                                   {"PROBLEM_SOURCE", problem},
                                                   {"CAPABILITY", *capability},
                                                   {"CUTLASS_VERSION", source.build.cutlass_version},
                                                   {"NVCC_FLAGS", python_nvcc_flags(source.build)},
                                                   {"VERIFIED_CALLS", *calls},
                                                   {"KERNEL_SOURCE", *kernel},
                                                   {"CONTRACT_HEADER", *header},
                                                   {"BINDING_SOURCE", *binding},
                                                   {"HELPERS", kExportPythonHelpers}});
  if (!text) return text.error();
  out.text = std::move(*text);
  return out;
}

}  // namespace cutegen
