"""Honest latency numbers (issue 18): medians with a spread, a bootstrap interval of the ratio, a verdict."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline_model import latency_stats as ls


def _noisy(median: float, n: int, seed: int, outliers: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    data = median * (1.0 + rng.normal(0.0, 0.02, n))
    data[:outliers] *= 6.0  # a preempted repeat: one-sided, large
    return [float(x) for x in rng.permutation(data)]


def test_summary_has_median_and_quartiles():
    s = ls.summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s.median_us == 3.0 and s.q1_us == 2.0 and s.q3_us == 4.0 and s.iqr_us == 2.0
    assert s.min_us == 1.0 and s.max_us == 100.0 and s.n == 5
    with pytest.raises(ValueError):
        ls.summarize([])


def test_identical_distributions_are_no_difference_even_with_outliers():
    a, b = _noisy(300.0, 15, 1, outliers=3), _noisy(300.0, 15, 2, outliers=4)
    cmp = ls.compare_runs(a, b)
    assert cmp.verdict == ls.NO_DIFFERENCE and not cmp.significant
    assert cmp.low <= 1.0 <= cmp.high
    assert ls.verdict_text(cmp).startswith("no significant difference (±")


def test_real_difference_is_significant_both_ways():
    a, b = _noisy(300.0, 15, 3, outliers=2), _noisy(390.0, 15, 4, outliers=2)
    slower = ls.compare_runs(a, b)
    assert slower.verdict == ls.SLOWER and slower.significant and slower.low > 1.03
    assert ls.verdict_text(slower).startswith("1.3") and "slower" in ls.verdict_text(slower)
    faster = ls.compare_runs(b, a)
    assert faster.verdict == ls.FASTER and faster.high < 1.0
    assert "faster" in ls.verdict_text(faster) and faster.speedup > 1.2


def test_difference_inside_the_spread_is_not_significant():
    # The case: medians 1.42x apart but the spread of the repeats covers it.
    a = [313.0, 2190.0, 320.0, 1500.0, 330.0]
    b = [305.0, 900.0, 2000.0, 310.0, 1100.0]
    assert ls.compare_runs(a, b).verdict == ls.NO_DIFFERENCE


def test_tiny_difference_is_below_the_minimum_effect():
    a = [100.0 + 0.01 * i for i in range(20)]
    b = [101.0 + 0.01 * i for i in range(20)]  # 1 % slower, perfectly consistent
    cmp = ls.compare_runs(a, b)
    assert cmp.high < 1.03 and cmp.verdict == ls.NO_DIFFERENCE


def test_same_build_is_never_a_speedup_but_keeps_the_measured_verdict():
    a, b = _noisy(300.0, 15, 5), _noisy(200.0, 15, 6)
    cmp = ls.compare_runs(a, b, same_build=True)
    assert cmp.verdict == ls.SAME_BUILD and not cmp.significant and cmp.measured == ls.FASTER
    assert ls.verdict_text(cmp).startswith("same build")


def test_too_few_repeats_give_no_verdict():
    cmp = ls.compare_runs([1.0, 2.0], [5.0, 6.0])
    assert cmp.verdict == ls.TOO_FEW and not cmp.significant


def test_paired_rounds_cancel_a_change_of_load():
    # The load doubles half-way: unpaired medians cannot tell 10 %, the per-round ratios can.
    load = [1.0] * 8 + [2.0] * 7
    a = [100.0 * f * (1 + 0.01 * (i % 3)) for i, f in enumerate(load)]
    b = [110.0 * f * (1 + 0.01 * ((i + 1) % 3)) for i, f in enumerate(load)]
    assert ls.compare_runs(a, b).verdict == ls.NO_DIFFERENCE
    paired = ls.compare_runs(a, b, paired=True)
    assert paired.verdict == ls.SLOWER and paired.paired and 1.05 < paired.ratio < 1.15


def test_interval_is_deterministic_and_json_round_trips():
    a, b = _noisy(300.0, 15, 7, outliers=2), _noisy(330.0, 15, 8)
    one, two = ls.compare_runs(a, b), ls.compare_runs(a, b)
    assert (one.low, one.high) == (two.low, two.high)
    assert ls.Comparison.from_json(one.to_json()) == one
    assert ls.Comparison.from_json(None) is None
