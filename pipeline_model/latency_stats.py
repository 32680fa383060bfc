"""Honest latency numbers: medians with a spread, and whether two latencies really differ (TVM-free).

A latency measurement is a list of repeats (``runs_us``: each the mean time of ``number`` calls). On a loaded
machine single runs vary a lot (a 313 µs kernel can take 2 ms once), so a difference of two medians means
nothing until it is larger than the spread. This module gives:

- :func:`summarize`: median, quartiles (IQR), min and max of the repeats;
- :func:`compare_runs`: the ratio (``b / a``: below 1 ``b`` is faster; the median of the per-round ratios when
  the two were timed in turn, else the ratio of the medians), a bootstrap confidence interval of that ratio
  over the repeats, and a verdict: :data:`FASTER`, :data:`SLOWER`,
  :data:`NO_DIFFERENCE` (the interval reaches the band of ±``min_effect`` around 1, i.e. the spread is as large as
  the difference), :data:`SAME_BUILD` (both sides are the same compiled module: nothing to compare) or
  :data:`TOO_FEW` (under :data:`MIN_REPEATS` repeats on a side);
- :func:`verdict_text`: the one line to show ("1.31× slower (95 % CI 1.27–1.35×)", "no significant
  difference (±4 %)", "same build").

Used by the engine's ``compare`` replies, :mod:`pipeline_model.build_api`, the CLI and the GUI.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Optional, Sequence

# numpy is imported by the functions that use it: the GUI imports this module for its constants and
# verdict texts before its first window is painted, and numpy's import costs ~0.1-0.3 s there.

FASTER = "faster"
SLOWER = "slower"
NO_DIFFERENCE = "no_difference"
SAME_BUILD = "same_build"
TOO_FEW = "too_few"
VERDICTS = (FASTER, SLOWER, NO_DIFFERENCE, SAME_BUILD, TOO_FEW)

#: Below this many repeats on a side no verdict is given (a bootstrap over 2 values says nothing).
MIN_REPEATS = 3
#: Differences smaller than this fraction are never called significant: on a shared CPU the clock, the
#: caches and the other tenants move a median by a few per cent between two measurements of the same module.
MIN_EFFECT = 0.03
#: Confidence level of the interval.
LEVEL = 0.95
#: Bootstrap resamples (seeded: the same repeats always give the same interval).
RESAMPLES = 4000


@dataclass
class Summary:
    """Median, quartiles, IQR, min and max of the repeats (µs); ``n`` repeats."""

    n: int
    median_us: float
    q1_us: float
    q3_us: float
    iqr_us: float
    min_us: float
    max_us: float


def summarize(runs_us: Sequence[float]) -> Summary:
    """Median and spread of ``runs_us`` (at least one value)."""
    import numpy as np

    data = np.asarray([float(x) for x in runs_us], dtype=np.float64)
    if data.size == 0:
        raise ValueError("summarize: no repeats")
    q1, med, q3 = (float(v) for v in np.percentile(data, [25.0, 50.0, 75.0]))
    return Summary(n=int(data.size), median_us=med, q1_us=q1, q3_us=q3, iqr_us=q3 - q1,
                   min_us=float(data.min()), max_us=float(data.max()))


@dataclass
class Comparison:
    """``b`` against ``a``: ``ratio`` = median(b) / median(a) (latency; below 1 ``b`` is faster), its
    bootstrap interval ``[low, high]`` at ``level``, ``verdict`` (one of :data:`VERDICTS`),
    ``significant`` (verdict is faster or slower), ``noise_pct`` (how far from 1 the interval reaches, in
    per cent: differences inside ±noise_pct cannot be told apart), ``min_effect``, the repeats used and
    ``measured``: the verdict of the numbers alone (for a same build: what the timing says, which should be
    no difference)."""

    ratio: float
    low: float
    high: float
    level: float
    verdict: str
    significant: bool
    noise_pct: float
    min_effect: float
    n_a: int
    n_b: int
    measured: str = ""
    paired: bool = False

    @property
    def speedup(self) -> float:
        """median(a) / median(b): above 1 ``b`` is faster."""
        return 1.0 / self.ratio if self.ratio > 0 else float("inf")

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Optional[dict[str, Any]]) -> Optional["Comparison"]:
        """From :meth:`to_json` (``None`` stays ``None``; unknown keys are ignored)."""
        if not data:
            return None
        names = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in names})


def bootstrap_ratio_interval(a_us: Sequence[float], b_us: Sequence[float], level: float = LEVEL,
                             resamples: int = RESAMPLES, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of median(b) / median(a): both samples resampled independently."""
    import numpy as np

    a = np.asarray(a_us, dtype=np.float64)
    b = np.asarray(b_us, dtype=np.float64)
    rng = np.random.default_rng(seed)
    ma = np.median(a[rng.integers(0, a.size, size=(resamples, a.size))], axis=1)
    mb = np.median(b[rng.integers(0, b.size, size=(resamples, b.size))], axis=1)
    ratios = mb / np.where(ma > 0, ma, np.nan)
    ratios = ratios[np.isfinite(ratios)]
    if ratios.size == 0:
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(ratios, [tail, 100.0 - tail])
    return float(low), float(high)


def bootstrap_paired_interval(a_us: Sequence[float], b_us: Sequence[float], level: float = LEVEL,
                              resamples: int = RESAMPLES, seed: int = 0) -> tuple[float, float, float]:
    """Median of the per-round ratios ``b[i] / a[i]`` (repeats measured in the same round, one right after the
    other) and its percentile bootstrap interval over the rounds: (median, low, high). Pairing cancels what
    changes between rounds (load, clock), so it needs far fewer repeats than comparing two medians."""
    import numpy as np

    a = np.asarray(a_us, dtype=np.float64)
    b = np.asarray(b_us, dtype=np.float64)
    ratios = b / np.where(a > 0, a, np.nan)
    ratios = ratios[np.isfinite(ratios)]
    if ratios.size == 0:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    meds = np.median(ratios[rng.integers(0, ratios.size, size=(resamples, ratios.size))], axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(meds, [tail, 100.0 - tail])
    return float(np.median(ratios)), float(low), float(high)


def compare_runs(a_us: Sequence[float], b_us: Sequence[float], *, same_build: bool = False,
                 paired: bool = False, level: float = LEVEL, min_effect: float = MIN_EFFECT,
                 resamples: int = RESAMPLES, seed: int = 0) -> Comparison:
    """``b`` against ``a`` (each a list of repeats in µs).

    ``paired``: repeat ``i`` of both was measured in the same round (:func:`benchmark_interleaved`), so the
    ratio is the median of the per-round ratios with its interval (:func:`bootstrap_paired_interval`);
    otherwise the ratio of the two medians with an interval from resampling each side independently
    (:func:`bootstrap_ratio_interval`). Significant only when the whole bootstrap interval of the median ratio lies outside the band
    ``[1 / (1 + min_effect), 1 + min_effect]``: a difference the spread could explain, or one smaller than
    ``min_effect``, is :data:`NO_DIFFERENCE`. ``same_build``: both sides are the same compiled module
    (:data:`SAME_BUILD`, never significant).
    """
    sa, sb = summarize(a_us), summarize(b_us)
    ratio = sb.median_us / sa.median_us if sa.median_us > 0 else float("inf")
    if min(sa.n, sb.n) < MIN_REPEATS:
        # No interval from so few repeats: the widest ratio the values allow.
        low = sb.min_us / sa.max_us if sa.max_us > 0 else float("nan")
        high = sb.max_us / sa.min_us if sa.min_us > 0 else float("inf")
        verdict = TOO_FEW
    else:
        if paired and sa.n == sb.n:
            ratio, low, high = bootstrap_paired_interval(a_us, b_us, level, resamples, seed)
        else:
            low, high = bootstrap_ratio_interval(a_us, b_us, level, resamples, seed)
        if low > 1.0 + min_effect:
            verdict = SLOWER
        elif high < 1.0 / (1.0 + min_effect):
            verdict = FASTER
        else:
            verdict = NO_DIFFERENCE
    measured = verdict
    if same_build:
        verdict = SAME_BUILD
    noise = max(abs(1.0 - low), abs(high - 1.0)) * 100.0 if math.isfinite(low) and math.isfinite(high) else float("inf")
    return Comparison(ratio=float(ratio), low=float(low), high=float(high), level=level, verdict=verdict,
                      significant=verdict in (FASTER, SLOWER), noise_pct=float(noise), min_effect=min_effect,
                      n_a=sa.n, n_b=sb.n, measured=measured,
                      paired=bool(paired and sa.n == sb.n and verdict != TOO_FEW))


def ranges_overlap(a_low: float, a_high: float, b_low: float, b_high: float) -> bool:
    """True when ``[a_low, a_high]`` and ``[b_low, b_high]`` overlap (the spread covers the difference)."""
    return a_low <= b_high and b_low <= a_high


def verdict_text(cmp: Comparison, tr: Any = None) -> str:
    """One line: "1.31× slower (95 % CI 1.27–1.35×)", "2.10× faster (…)", "no significant difference (±4 %)",
    "same build (no difference to measure)" or "too few repeats to tell (3 needed)". ``tr``: a
    ``(text) -> text`` translation of the English templates (placeholders ``{…}`` kept)."""
    t = tr or (lambda s: s)
    if cmp.verdict == SAME_BUILD:
        return t("same build (no difference to measure)")
    if cmp.verdict == TOO_FEW:
        return t("too few repeats to tell ({n} needed)").format(n=MIN_REPEATS)
    if cmp.verdict == NO_DIFFERENCE:
        return t("no significant difference (±{pct} %)").format(pct=_pct(cmp.noise_pct))
    pct = int(round(cmp.level * 100))
    if cmp.verdict == FASTER:
        return t("{factor}× faster ({level} % CI {low}–{high}×)").format(
            factor=f"{1.0 / cmp.ratio:.2f}", level=pct, low=f"{1.0 / cmp.high:.2f}", high=f"{1.0 / cmp.low:.2f}")
    return t("{factor}× slower ({level} % CI {low}–{high}×)").format(
        factor=f"{cmp.ratio:.2f}", level=pct, low=f"{cmp.low:.2f}", high=f"{cmp.high:.2f}")


def _pct(value: float) -> str:
    """A percentage with sensible digits (``0.4``, ``4``, ``12``)."""
    if not math.isfinite(value):
        return "?"
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"
