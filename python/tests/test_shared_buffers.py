"""The shared-buffer arena on the CPU path (the CUDA path, with IPC handles, is in test_gpu.py)."""
import pytest
import torch

from cutegen_worker.errors import WorkerError
from cutegen_worker.shared_buffers import SharedArena, span_bytes

CPU = torch.device("cpu")


def test_every_buffer_is_its_own_allocation_at_offset_zero():
    arena = SharedArena(CPU)
    tensors = [arena.empty((3, 5), torch.float32), arena.copy_of(torch.rand(7)), arena.empty((2,), torch.int64)]
    spans = []
    for t in tensors:
        ref = arena.ref(t)
        assert ref["offset"] == 0 and ref["ipc_handle"] is None and ref["data_ptr"] == t.data_ptr()
        assert t.untyped_storage().nbytes() == ref["nbytes"]  # nothing else lives in the allocation
        spans.append((ref["data_ptr"], ref["data_ptr"] + ref["nbytes"]))
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    assert arena.bytes == (15 + 7) * 4 + 2 * 8


def test_a_tensor_from_elsewhere_cannot_be_described():
    arena = SharedArena(CPU)
    t = arena.empty((4,), torch.float32)
    with pytest.raises(WorkerError, match="not a shared buffer"):
        arena.ref(torch.rand(4))
    with pytest.raises(WorkerError, match="not a shared buffer"):
        arena.ref(t[1:])  # a view into a shared buffer at an offset is not a buffer of its own


def test_copies_keep_dense_strides_and_values():
    arena = SharedArena(CPU)
    x = torch.rand(6, 4).t()
    c = arena.copy_of(x)
    assert c.stride() == x.stride() and torch.equal(c, x)
    assert arena.ref(c)["stride"] == [1, 4]


def test_expanded_inputs_become_contiguous_copies():
    arena = SharedArena(CPU)
    x = torch.rand(1, 4).expand(3, 4)
    c = arena.copy_of(x)
    assert c.stride() == (4, 1) and torch.equal(c, x)


def test_all_contract_dtypes():
    arena = SharedArena(CPU)
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.int64, torch.bool,
                  torch.int8, torch.uint8, torch.int16):
        t = arena.empty((2, 3), dtype)
        assert t.dtype == dtype and t.shape == (2, 3)
        assert arena.ref(t)["nbytes"] == 6 * t.element_size()


def test_release_drops_the_buffers():
    arena = SharedArena(CPU)
    arena.empty((4,), torch.float32)
    assert arena.release() == 0 and arena.bytes == 0


def test_span_bytes():
    assert span_bytes((3, 4), (4, 1), 4) == 48
    assert span_bytes((4, 3), (1, 4), 2) == 24
    assert span_bytes((0, 3), (3, 1), 4) == 0
    assert span_bytes((), (), 8) == 8
