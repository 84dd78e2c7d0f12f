"""PyTorch's CUDA allocator as the judge needs it: expandable segments, unless the user chose.

A judge session keeps large tensors alive across steps (the private copies of timed outputs, a call's
staged inputs) while others of different sizes come and go (the float64 reference's cast inputs and
outputs, PyTorch's own result). With the default allocator a long-lived 6 GiB tensor carved out of a freed
12 GiB block leaves a 6 GiB hole no 12 GiB request can use, so the next reference takes another 12 GiB
from the device: KernelBench's softmax ran an 80 GB H100 out of memory with ~12 GiB to spare by
memory.py's count. Expandable segments map physical pages into one growing virtual range, so freed memory
is reusable for any size. The shared buffers are the driver's own allocations (shared_buffers.py) and
torch's IPC is not used, so nothing here depends on the allocator's segment layout.

PYTORCH_CUDA_ALLOC_CONF reaches the worker (src/common/child_env.cpp): a setting of expandable_segments
there, either way, is kept as the user wrote it."""
import os

ENV = "PYTORCH_CUDA_ALLOC_CONF"
SETTING = "expandable_segments"


def with_expandable_segments(conf: str) -> str:
    """`conf` with expandable segments on, unless it already says either way."""
    keys = [part.split(":", 1)[0].strip() for part in conf.split(",") if part.strip()]
    if SETTING in keys:
        return conf
    return f"{conf},{SETTING}:True" if conf.strip() else f"{SETTING}:True"


def configure() -> None:
    """Before torch is imported (the allocator reads its settings once, at its first use)."""
    os.environ[ENV] = with_expandable_segments(os.environ.get(ENV, ""))
