#include "report/op_package.h"

#include <fmt/format.h>

#include "common/sha256.h"
#include "common/version.h"
#include "report/torch_export.h"

namespace cutegen {
namespace {

constexpr const char* kPackageInit = R"PY("""{{MODULE}}: a CuTe kernel made by cutegen {{VERSION}} for the problem {{PROBLEM}}, as the
PyTorch op torch.ops.cutegen.{{OP}}.

{{VERIFIED_BY}}

    import {{MODULE}}                  # registers torch.ops.cutegen.{{OP}}
    from {{MODULE}} import ModelNew    # the problem's Model with the op as its forward()

The op runs the kernel (compiled by pip install for {{ARCH}}) on the calls in VERIFIED_CALLS, on a GPU of
compute capability {{CAPABILITY}}. Any other call -- another batch size, dtype, scalar value or device --
runs the problem's own PyTorch computation instead, with a warning the first time: never the kernel where it
was not verified. A fake implementation lets torch.compile(model, fullgraph=True) trace through the op. Forward
only: the op has no autograd formula.

Trust: importing this package loads machine-written host code (the launcher in csrc/kernel.cu) into your
process, outside cutegen's sandbox; read it before you ship it.
"""
import importlib.util as _importlib_util
import inspect as _inspect
import os as _os
import re as _re
import warnings as _warnings

import torch as _torch

from .reference import Model, get_init_inputs, get_inputs  # the problem file the kernel was judged against
from . import _C as _EXTENSION  # the kernel and its torch binding, compiled by pip install (setup.py)

_OP = "{{OP}}"
_ARCH = "{{ARCH}}"
_CAPABILITY = {{CAPABILITY}}
_CUTLASS_VERIFIED = "{{CUTLASS_VERSION}}"
# Every call the kernel was verified for: forward()'s arguments, then Model's named_parameters() and
# named_buffers(), and the outputs it writes. Calls beyond these run the reference.
VERIFIED_CALLS = {{VERIFIED_CALLS}}
# The names of those parameters and buffers, the op's last arguments.
_STATE_NAMES = {{STATE_NAMES}}


{{HELPERS}}

_WARNED = set()


def _warn_once(reason, why):
    """One warning per reason ("call", "device", "init"), however many calls it applies to."""
    if reason not in _WARNED:
        _WARNED.add(reason)
        _warnings.warn(f"cutegen.{_OP}: {why}; running the PyTorch reference instead (this warning is shown once)",
                       stacklevel=3)


# The op's computation where the kernel was not verified: the problem's Model, built on the meta device
# (it holds no memory), run with the call's own parameters and buffers.
with _torch.random.fork_rng(devices=[]):
    _INIT_INPUTS = list(get_init_inputs())
with _torch.device("meta"):
    _REFERENCE = Model(*_INIT_INPUTS)


def _reference(args):
    n = len(args) - len(_STATE_NAMES)
    result = _torch.func.functional_call(_REFERENCE, dict(zip(_STATE_NAMES, args[n:])), tuple(args[:n]))
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _forward({{ARG_NAMES}}):
    args = [{{ARG_NAMES}}]
    call = _verified_call(args)
    why = _calls_text(args) if call is None else _device_problem(args)
    if not why:
        return _run_kernel(args, call)
    _warn_once("call" if call is None else "device", why)
    outs = [o.clone(memory_format=_torch.contiguous_format) for o in _reference(args)]  # never an input's alias
    return outs[0] if len(outs) == 1 else tuple(outs)


def _fake({{ARG_NAMES}}):
    args = [{{ARG_NAMES}}]
    call = _verified_call(args)
    if call is not None:
        device = next(a.device for a in args if isinstance(a, _torch.Tensor))
        outs = [_torch.empty(shape, dtype=getattr(_torch, dtype), device=device) for shape, dtype in call["outputs"]]
    else:  # the reference's own shapes, traced on the fake tensors
        outs = [_torch.empty(o.shape, dtype=o.dtype, device=o.device) for o in _reference(args)]
    return outs[0] if len(outs) == 1 else tuple(outs)


_library = _torch.library.Library("cutegen", "FRAGMENT")
_library.define("{{OP}}({{SCHEMA_ARGS}}) -> {{SCHEMA_RETURNS}}")
_library.impl("{{OP}}", _forward, "CompositeExplicitAutograd")
_torch.library.register_fake("cutegen::{{OP}}", _fake, lib=_library)


class ModelNew(Model):
    """The problem's Model (constructor, parameters, state_dict) with torch.ops.cutegen.{{OP}} as forward().
    Built with other constructor arguments than get_init_inputs() gives -- values the kernel builds in --
    its forward() is Model's own, with a warning."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cutegen_kernel = _verified_init(args, kwargs)
        if not self.cutegen_kernel:
            _warn_once("init", f"ModelNew(*{args!r}, **{kwargs!r}) is not Model(*get_init_inputs()), the model the kernel "
                       "was made for")

    def forward(self, *inputs):
        if not self.cutegen_kernel:
            return super().forward(*inputs)
        state = [p for _, p in self.named_parameters()] + [b for _, b in self.named_buffers()]
        return _torch.ops.cutegen.{{OP}}(*inputs, *state)
)PY";

constexpr const char* kPackageSetup = R"PY("""Builds {{MODULE}}: the cutegen kernel ({{MODULE}}/csrc/kernel.cu) and its torch binding, for
{{ARCH}}, with torch's CUDAExtension against the torch installed here and the CUTLASS headers of the
nvidia-cutlass wheel ($CUTLASS_DIR instead, when set).

    pip install nvidia-cutlass=={{CUTLASS_VERSION}}.0
    pip install --no-build-isolation .
"""
import importlib.util
import os
import re

from setuptools import setup

try:
    from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension
except ImportError as exc:
    raise SystemExit(f"{{MODULE}} is compiled against the torch it runs with: install torch, then "
                     f"pip install --no-build-isolation .  ({exc})")

CUTLASS_VERIFIED = "{{CUTLASS_VERSION}}"
CSRC = os.path.join("{{MODULE}}", "csrc")
# The judge's build of the kernel: its target, standard and flags.
NVCC_FLAGS = {{NVCC_FLAGS}}


def cutlass_include():
    root = os.environ.get("CUTLASS_DIR")
    if root:
        include = os.path.join(root, "include")
    else:
        spec = importlib.util.find_spec("cutlass_library")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit(f"no CUTLASS headers: pip install nvidia-cutlass=={CUTLASS_VERIFIED}.0, or set CUTLASS_DIR "
                             "to a CUTLASS checkout")
        include = os.path.join(list(spec.submodule_search_locations)[0], "source", "include")
    if not os.path.isfile(os.path.join(include, "cute", "tensor.hpp")):
        raise SystemExit(f"no cute/tensor.hpp under {include}")
    with open(os.path.join(include, "cutlass", "version.h"), encoding="utf-8") as f:
        text = f.read()
    found = ".".join(re.search(rf"#define CUTLASS_{p}\s+(\d+)", text).group(1) for p in ("MAJOR", "MINOR", "PATCH"))
    if found != CUTLASS_VERIFIED:
        print(f"warning: building against CUTLASS {found}; the kernel was verified with {CUTLASS_VERIFIED}")
    return include


def cutlass_includes():
    """include/ and, where present, the utility headers beside it (tools/util/include: CUTLASS's SM90
    convolution includes them)."""
    include = cutlass_include()
    util = os.path.normpath(os.path.join(include, "..", "tools", "util", "include"))
    return [include] + ([util] if os.path.isdir(os.path.join(util, "cutlass")) else [])


stubs = os.path.join(CUDA_HOME or "", "lib64", "stubs")
setup(
    name="{{DIST}}",
    version="{{PACKAGE_VERSION}}",
    description="torch.ops.cutegen.{{OP}}: a CuTe kernel made and verified by cutegen",
    packages=["{{MODULE}}"],
    package_data={"{{MODULE}}": ["csrc/*.cu", "csrc/*.cpp", "csrc/include/cutegen/*.h"]},
    ext_modules=[
        CUDAExtension(
            name="{{MODULE}}._C",
            sources=[os.path.join(CSRC, "binding.cpp"), os.path.join(CSRC, "kernel.cu")],
            include_dirs=[os.path.join(os.path.dirname(os.path.abspath(__file__)), CSRC, "include")] + cutlass_includes(),
            extra_compile_args={"cxx": ["-O2"], "nvcc": NVCC_FLAGS},
            libraries=["cuda"],  # CuTe's TMA descriptors call the driver
            library_dirs=[stubs] if os.path.isdir(stubs) else [],  # links where only the toolkit is installed
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    install_requires=["torch"],
    python_requires=">=3.9",
)
)PY";

constexpr const char* kPackagePyproject = R"(# The package is built by setup.py (a CUDA extension compiled against the torch installed here):
#   pip install --no-build-isolation .
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"
)";

constexpr const char* kPackageReadme = R"(# {{DIST}}

A CuTe kernel made by cutegen {{VERSION}} for the problem `{{PROBLEM}}`, as the PyTorch op
`torch.ops.cutegen.{{OP}}`. {{VERIFIED_BY}}

```sh
pip install nvidia-cutlass=={{CUTLASS_VERSION}}.0     # the CUTLASS headers (or set CUTLASS_DIR)
pip install --no-build-isolation .                 # compiles csrc/ for {{ARCH}} against your torch
```

```python
import torch
from {{MODULE}} import ModelNew, get_init_inputs, get_inputs

model = ModelNew(*get_init_inputs()).cuda()
fast = torch.compile(model, fullgraph=True)
with torch.no_grad():
    y = fast(*[x.cuda() if isinstance(x, torch.Tensor) else x for x in get_inputs()])
```

The op runs the kernel only for the calls in `{{MODULE}}.VERIFIED_CALLS` on a GPU of compute capability
{{CAPABILITY}}; any other call runs the problem's PyTorch computation (`{{MODULE}}/reference.py`) with one
warning. Forward only. See cutegen's docs/export.md.
)";

struct SchemaArg {
  std::string name;
  std::string type;
};

Result<std::vector<SchemaArg>> schema_args(const ProblemFacts& problem) {
  std::vector<SchemaArg> out;
  std::vector<ValueFacts> values = problem.inputs;
  values.insert(values.end(), problem.params.begin(), problem.params.end());
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& v = values[i];
    // The index makes each name distinct, and never a Python keyword.
    std::string name = fmt::format("{}_{}", op_identifier(v.name.empty() ? "arg" : v.name), i);
    switch (v.kind) {
      case ValueFacts::Kind::tensor: out.push_back({name, "Tensor"}); break;
      case ValueFacts::Kind::scalar:
        out.push_back({name, v.dtype == "float64" ? "float" : v.dtype == "bool" ? "bool" : "int"});
        break;
      case ValueFacts::Kind::other:
        return Error{fmt::format("argument {} ('{}') is neither a tensor nor a number, which the op cannot take", i,
                                 v.name)};
    }
  }
  return out;
}

}  // namespace

Result<OpPackage> make_op_package(const ExportSource& source) {
  OpPackage out;
  out.op_name = op_identifier(source.problem.name.empty() ? "kernel" : source.problem.name);
  out.module_name = "cutegen_" + out.op_name;
  out.dist_name = "cutegen-" + out.op_name;
  for (char& c : out.dist_name)
    if (c == '_') c = '-';

  auto calls = python_verified_calls(source);
  if (!calls) return calls.error();
  auto capability = python_capability(source.build.arch);
  if (!capability) return capability.error();
  auto args = schema_args(source.problem);
  if (!args) return args.error();
  std::string names, schema;
  for (const auto& a : *args) {
    names += (names.empty() ? "" : ", ") + a.name;
    schema += (schema.empty() ? "" : ", ") + a.type + " " + a.name;
  }
  std::string returns = "Tensor";
  if (source.problem.outputs.size() > 1) {
    returns = "(";
    for (size_t i = 0; i < source.problem.outputs.size(); ++i) returns += i ? ", Tensor" : "Tensor";
    returns += ")";
  }

  const std::map<std::string, std::string> common = {
      {"MODULE", out.module_name}, {"OP", out.op_name}, {"VERSION", CUTEGEN_VERSION},
      {"PROBLEM", source.problem.name}, {"VERIFIED_BY", source.verified_by}, {"ARCH", source.build.arch},
      {"CAPABILITY", *capability}, {"CUTLASS_VERSION", source.build.cutlass_version}};
  auto with = [&](std::map<std::string, std::string> extra) {
    for (const auto& [k, v] : common) extra.emplace(k, v);
    return extra;
  };
  auto init = fill_template(kPackageInit, with({{"VERIFIED_CALLS", *calls},
                                                {"STATE_NAMES", python_state_names(source.problem)},
                                                {"HELPERS", kExportPythonHelpers},
                                                {"ARG_NAMES", names},
                                                {"SCHEMA_ARGS", schema},
                                                {"SCHEMA_RETURNS", returns}}));
  if (!init) return init.error();
  std::map<std::string, std::string> setup_values = {
      {"MODULE", out.module_name}, {"OP", out.op_name}, {"ARCH", source.build.arch},
      {"CUTLASS_VERSION", source.build.cutlass_version}, {"NVCC_FLAGS", python_nvcc_flags(source.build)},
      {"DIST", out.dist_name},
      // A local version naming the kernel: pip sees a new kernel as a new version.
      {"PACKAGE_VERSION", "0.1.0+k" + sha256_hex(source.kernel_source).substr(0, 12)}};
  auto setup = fill_template(kPackageSetup, setup_values);
  if (!setup) return setup.error();
  auto readme = fill_template(kPackageReadme, {{"DIST", out.dist_name}, {"VERSION", CUTEGEN_VERSION},
                                               {"PROBLEM", source.problem.name}, {"OP", out.op_name},
                                               {"VERIFIED_BY", source.verified_by}, {"MODULE", out.module_name},
                                               {"CUTLASS_VERSION", source.build.cutlass_version},
                                               {"ARCH", source.build.arch}, {"CAPABILITY", *capability}});
  if (!readme) return readme.error();

  const std::string pkg = out.module_name + "/";
  out.files = {{"pyproject.toml", kPackagePyproject},
               {"setup.py", *setup},
               {"README.md", *readme},
               {pkg + "__init__.py", *init},
               {pkg + "reference.py", source.problem_source},
               {pkg + "csrc/kernel.cu", source.kernel_source},
               {pkg + "csrc/binding.cpp", kTorchBindingSource},
               {pkg + "csrc/include/cutegen/kernel.h", source.build.contract_header}};
  return out;
}

}  // namespace cutegen
