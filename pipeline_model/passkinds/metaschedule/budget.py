"""A wall-clock tuning budget turned into MetaSchedule trials, and the choice of the fastest pipeline (TVM-free).

Targeted tuning (:mod:`pipeline_model.passkinds.metaschedule.focus`) splits a number of *trials* over the PrimFuncs that
hold the time. Users (and ``bench/bench_latency.py``'s "app best" column) think in *minutes*. The
helpers here bridge the two:

* :func:`parse_tune_minutes` reads ``"15"`` or ``"mlp=4,gpt2=15"`` into minutes per model, refusing
  more than the hard ceiling;
* :func:`trials_per_second` measures the pace of a first (calibration) round;
* :func:`trials_for_budget` sizes the next round to the seconds left at that pace (with a safety margin,
  since MetaSchedule re-measures a task from scratch when its budget grows);
* :func:`pick_best` chooses the fastest column whose numerical check passed.
"""

from __future__ import annotations

import math
from typing import Any, Optional

#: Hard ceiling of the tuning budget per model, in minutes (issue 11: ≤ 15 min per model).
MAX_TUNE_MINUTES = 15.0


class BudgetError(ValueError):
    """A bad ``--tune-minutes`` value; the message says which part."""


def parse_tune_minutes(text: str, models: list[str], ceiling: float = MAX_TUNE_MINUTES) -> dict[str, float]:
    """Minutes of tuning per model from ``text``: one number for every model (``"15"``) or
    ``"model=minutes"`` pairs separated by commas (``"mlp=4,cnn=6"``; a bare number among them is the
    default of the others). Raises :class:`BudgetError` for a value that is not a number, not above 0,
    above ``ceiling``, or a model not in ``models``."""
    default: Optional[float] = None
    per: dict[str, float] = {}

    def number(raw: str, where: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            raise BudgetError(f"--tune-minutes: {where}: {raw!r} is not a number of minutes") from None
        if not math.isfinite(value) or value <= 0:
            raise BudgetError(f"--tune-minutes: {where}: must be more than 0 minutes, not {raw}")
        if value > ceiling:
            raise BudgetError(f"--tune-minutes: {where}: {value:g} min is above the ceiling of {ceiling:g} min per model")
        return value

    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts:
        raise BudgetError("--tune-minutes: empty (give minutes, e.g. 15 or mlp=4,gpt2=15)")
    for part in parts:
        if "=" in part:
            name, raw = (s.strip() for s in part.split("=", 1))
            if name not in models:
                raise BudgetError(f"--tune-minutes: unknown model {name!r} (models: {', '.join(models)})")
            per[name] = number(raw, name)
        else:
            default = number(part, "default")
    fallback = ceiling if default is None else default
    return {m: per.get(m, fallback) for m in models}


def trials_per_second(trials: int, seconds: float) -> float:
    """The pace of a round: ``trials`` measured in ``seconds`` of wall time (0 when nothing was measured)."""
    if trials <= 0 or seconds <= 0:
        return 0.0
    return float(trials) / float(seconds)


def trials_for_budget(rate: float, seconds_left: float, *, safety: float = 0.8, minimum: int = 0,
                      maximum: Optional[int] = None) -> int:
    """Trials that fit in ``seconds_left`` at ``rate`` trials per second, times ``safety`` (< 1: the
    pace varies between tasks and the final build and timing take time too); at least ``minimum``
    (0 when no time is left), at most ``maximum`` when given."""
    if seconds_left <= 0 or rate <= 0:
        return 0
    trials = max(int(minimum), int(rate * seconds_left * float(safety)))
    return min(trials, int(maximum)) if maximum is not None else trials


def pick_best(columns: dict[str, dict[str, Any]]) -> Optional[str]:
    """The name of the fastest column (lowest ``median`` µs) among ``columns`` = ``{name: {median, ok}}``
    that ran without ``error`` and passed its check (``ok``); ties go to the earlier column.
    ``None`` when none qualifies."""
    best: Optional[str] = None
    for name, col in columns.items():
        if "error" in col or not col.get("ok") or col.get("median") is None:
            continue
        if best is None or float(col["median"]) < float(columns[best]["median"]):
            best = name
    return best
