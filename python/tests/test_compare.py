"""The comparison rules and policies, on hand-made tensors."""
import math

import pytest
import torch

from cutegen_worker import compare
from cutegen_worker.compare import Tolerance
from cutegen_worker.errors import RequestError

STRICT = Tolerance(1e-4, 1e-4, 1e-5)


def report(got, ref, tol=STRICT, chunk=compare.CHUNK_ELEMENTS):
    return compare.compare(got, ref, tol, compare.max_abs_finite(ref), chunk)


def test_policies_match_the_protocol_doc():
    f32 = torch.float32
    assert compare.tolerance("strict", f32, f32) == Tolerance(1e-4, 1e-4, 1e-6)
    assert compare.tolerance("tf32", f32, f32) == Tolerance(1e-3, 1e-3, 2e-3)
    assert compare.tolerance("bf16", f32, f32) == Tolerance(1e-2, 1e-2, 2e-2)
    for policy in ("strict", "tf32", "bf16"):
        assert compare.tolerance(policy, torch.float16, torch.float16) == Tolerance(1e-2, 1e-2, 2e-3)
        assert compare.tolerance(policy, torch.bfloat16, torch.bfloat16) == Tolerance(2e-2, 2e-2, 2e-2)
    assert compare.tolerance("strict", f32, torch.int64) == Tolerance(0.0, 0.0, 0.0)
    with pytest.raises(RequestError):
        compare.tolerance("fast", f32, f32)


def test_torchs_own_error_widens_the_limits_by_the_factor():
    floor = compare.tolerance("strict", torch.float32, torch.float32)
    wide = compare.with_torch_error(floor, {"rel_l2_err": 2e-7, "max_abs_err": 3e-6})
    assert wide == Tolerance(1e-4, 1e-4, 5 * 2e-7, 5 * 3e-6)
    # Where torch is exact the floor stays; integer outputs stay exact; torch breaking down widens nothing.
    assert compare.with_torch_error(floor, {"rel_l2_err": 0.0, "max_abs_err": 0.0}) == Tolerance(1e-4, 1e-4, 1e-6)
    exact = compare.tolerance("strict", torch.float32, torch.int64)
    assert compare.with_torch_error(exact, {"rel_l2_err": 0.5, "max_abs_err": 9.0}) == exact
    broken = compare.with_torch_error(floor, {"rel_l2_err": float("nan"), "max_abs_err": float("inf")})
    assert broken == Tolerance(1e-4, 1e-4, 1e-6, 0.0)


def test_abs_slack_widens_every_elements_bound():
    ref = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    got = ref.to(torch.float32) + torch.tensor([0.0, 0.01, 0.0])
    tight = compare.compare(got, ref, Tolerance(1e-4, 1e-4, 1.0), 3.0)
    loose = compare.compare(got, ref, Tolerance(1e-4, 1e-4, 1.0, 0.01), 3.0)
    assert (tight["bad_count"], loose["bad_count"]) == (1, 0) and loose["abs_slack"] == 0.01


def test_exact_output_passes():
    ref = torch.randn(100, dtype=torch.float64)
    r = report(ref.float(), ref)
    assert r["pass"] and r["bad_count"] == 0 and r["total"] == 100 and r["unwritten_count"] == 0


def test_error_near_zero_is_judged_against_the_output_scale():
    ref = torch.tensor([1000.0, 1e-6, -1e-6], dtype=torch.float64)
    got = ref.clone()
    got[1] += 0.05  # 5e4 times its own magnitude, but tiny next to the largest value (atol * scale = 0.1)
    r = report(got, ref, Tolerance(1e-4, 1e-4, 1.0))
    assert r["bad_count"] == 0
    got[1] += 0.1
    assert report(got, ref, Tolerance(1e-4, 1e-4, 1.0))["bad_count"] == 1


def test_rel_l2_fails_an_output_without_bad_elements():
    ref = torch.linspace(1, 2, 1000, dtype=torch.float64)
    got = ref * (1 + 5e-5)  # every element within 1e-4 * scale + 1e-4 * |ref|, but rel_l2 = 5e-5
    r = report(got, ref)
    assert r["bad_count"] == 0 and not r["pass"]
    assert r["rel_l2_err"] == pytest.approx(5e-5, rel=1e-6)


def test_non_finite_values():
    ref = torch.tensor([1.0, math.nan, math.inf, 2.0, 3.0], dtype=torch.float64)
    got = torch.tensor([1.0, math.nan, math.inf, math.inf, math.nan])
    r = report(got, ref)
    assert r["bad_count"] == 2  # the matching NaN and Inf are fine; Inf and NaN for finite values are not
    assert r["unwritten_count"] == 1  # NaN where the reference is not NaN
    assert (r["nan_count"], r["inf_count"]) == (2, 2)
    assert [b["index"] for b in r["first_bad"]] == [[3], [4]]
    assert r["max_abs_err"] == 0.0  # the error statistics cover elements finite on both sides


def test_report_fields_and_first_bad_are_the_same_in_chunks():
    torch.manual_seed(0)
    ref = torch.randn(7, 13, dtype=torch.float64)
    got = ref.float().clone()
    got[2, 5] += 1.0
    got[6, 12] -= 2.0
    got[0, 1] = math.nan
    whole, chunked = report(got, ref), report(got, ref, chunk=5)
    for key in ("bad_count", "unwritten_count", "nan_count", "max_abs_err", "max_rel_err", "total"):
        assert whole[key] == chunked[key], key
    assert chunked["rel_l2_err"] == pytest.approx(whole["rel_l2_err"], rel=1e-12)
    assert [b["index"] for b in chunked["first_bad"]] == [b["index"] for b in whole["first_bad"]]
    assert [b["index"] for b in whole["first_bad"]] == [[0, 1], [2, 5], [6, 12]]
    assert whole["bad_count"] == 3 and whole["bad_fraction"] == 3 / 91
    assert whole["first_bad"][1]["got"] == pytest.approx(float(ref[2, 5]) + 1.0, abs=1e-6)
    assert whole["first_bad"][1]["expected"] == float(ref[2, 5])
    assert whole["max_abs_err"] == pytest.approx(2.0, abs=1e-6)


def test_first_bad_is_capped():
    ref = torch.zeros(100, dtype=torch.float64)
    r = report(torch.ones(100), ref)
    assert r["bad_count"] == 100 and len(r["first_bad"]) == compare.FIRST_BAD_LIMIT


def test_first_bad_found_in_later_chunks_in_order():
    ref = torch.zeros(100, dtype=torch.float64)
    got = torch.zeros(100)
    got[[41, 97, 42, 60, 61, 62, 63, 64, 65, 66]] = 1.0  # none in the first chunks, more than the cap
    r = report(got, ref, chunk=7)
    assert r["bad_count"] == 10
    assert [b["index"][0] for b in r["first_bad"]] == [41, 42, 60, 61, 62, 63, 64, 65]


def test_all_zero_reference():
    ref = torch.zeros(10, dtype=torch.float64)
    assert report(torch.zeros(10), ref)["pass"]
    r = report(torch.full((10,), 1e-3), ref)
    assert not r["pass"] and r["rel_l2_err"] == math.inf


def test_integer_outputs_must_match_exactly():
    ref = torch.tensor([1, 2, 3])
    tol = compare.tolerance("strict", torch.float32, torch.int64)
    assert compare.compare(ref.clone(), ref, tol, 3.0)["pass"]
    r = compare.compare(torch.tensor([1, 2, 4]), ref, tol, 3.0)
    assert not r["pass"] and r["bad_count"] == 1 and r["unwritten_count"] == 0


def test_run_to_run():
    first = torch.randn(50)
    assert compare.run_to_run(first, first.clone(), STRICT, 3.0) == (True, 0.0)
    second = first.clone()
    second[7] += 0.5
    agree, diff = compare.run_to_run(first, second, STRICT, 3.0)
    assert not agree and diff == pytest.approx(0.5, abs=1e-6)
    second[8] = math.nan
    assert compare.run_to_run(first, second, STRICT, 3.0) == (False, math.inf)


def test_mutation_is_bitwise():
    x = torch.tensor([1.0, math.nan, -0.0])
    assert not compare.mutated(x, x.clone())
    y = x.clone()
    y[2] = 0.0  # +0 == -0 numerically, but the bits changed
    assert compare.mutated(y, x)
    assert compare.mutated(torch.arange(10), torch.arange(10).flip(0), chunk=3)


def test_expected_values_saturate_to_the_output_dtypes_range():
    ref = torch.tensor([1.0, 65519.0, 65520.0, -1e6, float("nan")], dtype=torch.float32)
    expected = compare.expected_values(ref, torch.float16)
    assert expected.dtype == torch.float32
    assert expected[:2].tolist() == [1.0, 65519.0]  # still finite in fp16 (rounds to 65504)
    assert expected[2:4].tolist() == [math.inf, -math.inf]
    assert math.isnan(expected[4])
    assert compare.expected_values(ref, torch.float32) is ref
    assert compare.expected_values(ref, torch.int32) is ref


def test_an_honest_fp16_overflow_passes():
    ref = torch.tensor([1.0, 2.0, 1e5], dtype=torch.float32)
    expected = compare.expected_values(ref, torch.float16)
    got = ref.to(torch.float16)
    tol = compare.tolerance("strict", torch.float16, torch.float16)
    assert compare.compare(got, expected, tol, compare.max_abs_finite(expected))["pass"]
    assert not compare.compare(got, ref, tol, compare.max_abs_finite(ref))["pass"]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.int32, torch.bool])
def test_expected_and_scale_is_expected_values_and_its_scale(dtype):
    """The shortcut after every timed call (no rounded copy when nothing can overflow) gives what the two
    steps give, overflowing references included."""
    values = [0.0, 1.0, -2.5, 6.5504e4, 65519.0, 65520.0, 1e5, -3.5e38, 3.4028234e38, float("inf"), float("nan")]
    for cut in range(1, len(values) + 1):
        ref = torch.tensor(values[:cut], dtype=torch.float64)
        want = compare.expected_values(ref, dtype)
        got, scale = compare.expected_and_scale(ref, dtype)
        assert scale == compare.max_abs_finite(want)
        assert torch.equal(torch.nan_to_num(got, nan=7.0), torch.nan_to_num(want, nan=7.0))


# ---- the timed calls' sampled comparison (audit.compare_samples) -------------------------------------------
def _wide_softmax_row(n=100003, seed=0):
    """A softmax over n logits of randn x 30 in float64: a few elements carry the row, most are tiny."""
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(n, generator=g, dtype=torch.float64) * 30.0, dim=0)


def test_a_sample_estimates_the_whole_outputs_rel_l2_where_a_few_elements_carry_it():
    """An honest softmax whose exp is 2e-6 off on its small values (an approximate exp at x - max of -25) and
    right near the max: every element in its bound, the whole output's rel-L2 far under 1.5e-6. The 2048
    positions almost never hold the large values, and their own ratio was the small values' relative error:
    the judge failed one timed call in 25-50 of such a kernel on an H100 (softmax_odd_rows, 2026-12-05)."""
    from cutegen_worker import audit
    ref = _wide_softmax_row()
    got = torch.where(ref < ref.max() * 1e-3, ref * (1 + 2e-6), ref).to(torch.float32)
    tol = compare.Tolerance(atol=1e-4, rtol=1e-4, rel_l2_limit=1e-6)
    full = compare.compare(got, ref, tol, compare.max_abs_finite(ref))
    assert full["pass"] and full["rel_l2_err"] < 1e-7
    positions = torch.randperm(ref.numel(), generator=torch.Generator().manual_seed(1))[:2048]
    sample = got.index_select(0, positions)
    ratio = audit.compare_samples(sample, ref, positions, tol, compare.max_abs_finite(ref))
    assert not ratio["pass"] and ratio["rel_l2_err"] > 1.5e-6  # the old statistic: a false mismatch
    fair = audit.compare_samples(sample, ref, positions, tol, compare.max_abs_finite(ref),
                                 ref_sq_sum=compare.finite_magnitude(ref)[1])
    assert fair["pass"] and fair["rel_l2_err"] < 1.5e-6 and fair["sample_rel_l2_err"] == ratio["rel_l2_err"]


def test_a_sample_still_fails_a_kernel_wrong_everywhere_by_more_than_the_limit():
    """The estimate is the whole output's rel-L2 in expectation: a uniform 1e-5 relative error (ten times the
    limit) on a spread output fails the sampled check as it fails the full one. (On an output a few elements
    carry, an error only the small values have is what the full check forgives too; one on the few large
    values a 2048-position sample rarely sees either way: the trials and the two full audits check every
    element.)"""
    from cutegen_worker import audit
    g = torch.Generator().manual_seed(2)
    ref = torch.randn(1 << 20, generator=g, dtype=torch.float64)
    got = (ref * (1 + 1e-5)).to(torch.float32)
    positions = torch.randperm(ref.numel(), generator=g)[:2048]
    report = audit.compare_samples(got.index_select(0, positions), ref, positions,
                                   compare.Tolerance(atol=1e-4, rtol=1e-4, rel_l2_limit=1e-6),
                                   compare.max_abs_finite(ref), ref_sq_sum=compare.finite_magnitude(ref)[1])
    assert not report["pass"] and 5e-6 < report["rel_l2_err"] < 2e-5, report["rel_l2_err"]


def test_a_kernel_imprecise_only_on_timed_calls_is_still_caught_at_the_first(worker, small):
    """The attack the per-call estimate must still reject: right (the reference) on the correctness trials and
    warm-up, TF32-rounded (~5e-4 relative, hundreds of times strict's limit) on every timed call. The samples'
    estimate of the whole output's rel-L2 catches it at the first timed call, as the positions' own ratio did."""
    from conftest import problem_path
    from test_every_call_checked import ONE_TRIAL, evaluate
    before = 2 * len(ONE_TRIAL) + 1  # the trial's two runs and the warm-up
    result = evaluate(worker, problem_path("relu"), mode="tf32", after=before)
    assert result["verdict"] == "mismatch", (result["verdict"], result["reason"])
    assert result["reason"].startswith("timed call 0 "), result["reason"]
