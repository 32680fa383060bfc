"""Interleaved timing in one process: each repeat times every system once, in a rotating order, so a change of
machine load falls on all of them alike; every sample is preceded by at least 100 ms of untimed calls of that
system (at least one call), so it is measured warm, and the other systems' thread pools, which spin for a while
after their work, have gone quiet.

A sample is the mean of ``number`` calls, ``number`` chosen per system from its warm-up so a sample lasts about
``sample_ms`` (at least one call). Ratios between two systems are read per round (paired) and over the minimums.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable


def loadavg() -> str:
    """The 1/5/15-minute load average (``/proc/loadavg``), or ``n/a``."""
    try:
        with open("/proc/loadavg", encoding="utf-8") as fh:
            return " ".join(fh.read().split()[:3])
    except OSError:
        return "n/a"


def warm_up(fn: Callable[[], Any], min_s: float = 0.1, min_calls: int = 1) -> float:
    """Call ``fn`` for at least ``min_s`` seconds and ``min_calls`` calls; the mean seconds per call."""
    start, done = time.perf_counter(), 0
    while done < min_calls or time.perf_counter() - start < min_s:
        fn()
        done += 1
    return (time.perf_counter() - start) / done


def interleaved(systems: dict[str, Callable[[], Any]], repeat: int, sample_ms: float = 50.0,
                warmup_s: float = 0.1) -> dict[str, list[float]]:
    """``{name: [µs per call of each round]}``: ``repeat`` rounds, each timing every system once (the order
    rotates by one per round), each sample after a warm-up of ``warmup_s`` (at least one call) of that system."""
    names = list(systems)
    number = {}
    for name in names:  # the first warm-up also sizes the samples
        per_call = warm_up(systems[name], warmup_s)
        number[name] = max(1, int(sample_ms / 1000.0 / max(per_call, 1e-9)))
    samples: dict[str, list[float]] = {n: [] for n in names}
    for r in range(repeat):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            fn, n = systems[name], number[name]
            warm_up(fn, warmup_s)
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            samples[name].append((time.perf_counter() - t0) / n * 1e6)
    return samples


def summary(samples: list[float]) -> dict[str, float]:
    """``min`` and ``median`` (µs) of one system's samples."""
    return {"min": min(samples), "median": statistics.median(samples)}


def ratios(a: list[float], b: list[float]) -> dict[str, float]:
    """``a`` ÷ ``b``: ``median`` of the per-round ratios (paired: same round, same load) and ``min`` the ratio
    of the minimums."""
    return {"median": statistics.median(x / y for x, y in zip(a, b)), "min": min(a) / min(b)}
