"""Workload classes and FLOP counts from the aten ops a forward pass runs, on direct torch calls."""
import torch
import torch.nn.functional as F

from cutegen_worker import metadata


def record(fn, *args):
    with torch.no_grad(), metadata.OpRecorder() as recorder:
        fn(*args)
    return recorder.ops


def test_matmuls_count_two_m_n_k():
    a, b = torch.rand(8, 16), torch.rand(16, 4)
    assert metadata.total_flops(record(torch.matmul, a, b)) == 2 * 8 * 4 * 16
    x, y = torch.rand(3, 8, 16), torch.rand(3, 16, 4)
    ops = record(torch.bmm, x, y)
    assert metadata.workload_class(ops) == "gemm" and metadata.total_flops(ops) == 2 * 3 * 8 * 4 * 16
    lin = torch.nn.Linear(16, 4)
    ops = record(lin, a)
    assert metadata.aten_ops(ops) == ["aten::t", "aten::addmm"] and metadata.total_flops(ops) == 2 * 8 * 4 * 16


def test_convolution_counts_every_weight_at_every_output_position():
    x, w = torch.rand(2, 3, 10, 10), torch.rand(5, 3, 3, 3)
    ops = record(F.conv2d, x, w)
    assert metadata.workload_class(ops) == "conv"
    assert metadata.total_flops(ops) == 2 * 2 * 8 * 8 * w.numel()


def test_attention():
    q = k = v = torch.rand(2, 4, 16, 8)
    ops = record(F.scaled_dot_product_attention, q, k, v)
    assert metadata.workload_class(ops) == "attention"
    assert metadata.total_flops(ops) >= 2 * 2 * (2 * 4) * 16 * 16 * 8


def test_reductions_and_elementwise():
    x = torch.rand(6, 7)
    assert metadata.workload_class(record(torch.argmax, x, 1)) == "reduction"
    assert metadata.total_flops(record(torch.sum, x)) == 42
    ops = record(lambda t: torch.sigmoid(t) * 2 + 1, x)
    assert metadata.workload_class(ops) == "elementwise" and metadata.total_flops(ops) == 3 * 42
    # A class wins over the ones below it: gemm over reduction over elementwise.
    ops = record(lambda t: torch.softmax(t @ t.T, dim=-1).relu(), x)
    assert metadata.workload_class(ops) == "gemm"


def test_data_movement_alone_is_elementwise_and_costs_no_flops():
    ops = record(lambda t: t.transpose(0, 1).contiguous(), torch.rand(4, 5))
    assert metadata.workload_class(ops) == "elementwise" and metadata.total_flops(ops) == 0


def test_unknown_ops_make_other():
    ops = record(lambda t: torch.sort(t).values, torch.rand(10))
    assert metadata.workload_class(ops) == "other"


def test_min_bytes_ignores_scalars():
    t = torch.rand(10)
    assert metadata.min_bytes([t, 3.0], [torch.rand(2, dtype=torch.float64)], [t]) == 40 + 16 + 40
