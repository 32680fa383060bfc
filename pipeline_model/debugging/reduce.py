"""Delta-debugging driver of ``main.py reduce`` (TVM-free).

The module is reduced by greedy steps: candidates (see :func:`halving_order` and the engine's
``reduce_candidates``) are tried in order from the current best module; the first one that still fails the
same way (the engine's ``reduce_check``) becomes the new best and the candidates are made again. It ends when
no candidate is interesting any more, when :attr:`Reducer.max_checks` checks were made, or when stopped
(the best module so far is kept either way).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional


def halving_order(n: int, limit: int = 24) -> list[int]:
    """Positions ``0..n-1`` coarse to fine: ``n/2``, then ``n/4, 3n/4``, then eighths ... (at most ``limit``;
    all of them when ``n <= limit``)."""
    out: list[int] = []
    denominator = 2
    while len(out) < min(n, limit) and denominator <= 2 * max(1, n):
        for j in range(1, denominator, 2):
            p = (n * j) // denominator
            if 0 <= p < n and p not in out:
                out.append(p)
        denominator *= 2
    out += [p for p in range(n) if p not in out]
    return out[:limit] if n > limit else out


@dataclass
class Module:
    """A module the reducer holds: its engine handle (``key``), its ``save_json`` text and its size
    (``bindings``, then ``elements``: the static tensor elements its Relax functions bind and take)."""

    key: str
    json: str
    bindings: int
    elements: int = 0

    def size(self) -> tuple[int, int, int]:
        """What a reduction makes smaller, in order: bindings, tensor elements, JSON length."""
        return self.bindings, self.elements, len(self.json)


@dataclass
class ReduceStats:
    """What happened: checks made, candidates accepted, why it stopped."""

    checks: int = 0
    accepted: list[str] = field(default_factory=list)
    stopped: str = ""
    seconds: float = 0.0


class Reducer:
    """The greedy loop; ``candidates(best)``, ``apply(best, candidate)`` and ``check(module)`` do the work."""

    def __init__(self, candidates: Callable[[Module], list[dict[str, Any]]],
                 apply: Callable[[Module, dict[str, Any]], Optional[Module]],
                 check: Callable[[Module], bool], *, max_checks: int = 400,
                 on_progress: Optional[Callable[[str, Module, ReduceStats], None]] = None,
                 should_stop: Optional[Callable[[], bool]] = None) -> None:
        self.candidates, self.apply, self.check = candidates, apply, check
        self.max_checks = max_checks
        self.on_progress = on_progress or (lambda _m, _b, _s: None)
        self.should_stop = should_stop or (lambda: False)
        self.stats = ReduceStats()

    def run(self, start: Module) -> Module:
        """Reduce ``start`` (assumed to fail); the smallest failing module found."""
        t0 = time.perf_counter()
        best = start
        try:
            best = self._loop(best)
        except KeyboardInterrupt:
            self.stats.stopped = "interrupted"
        self.stats.seconds = time.perf_counter() - t0
        return best

    def _loop(self, best: Module) -> Module:
        while True:
            improved = False
            for candidate in self.candidates(best):
                if self.should_stop():
                    self.stats.stopped = "stopped"
                    return best
                if self.stats.checks >= self.max_checks:
                    self.stats.stopped = f"{self.max_checks} checks made"
                    return best
                smaller = self.apply(best, candidate)
                if smaller is None or smaller.size() >= best.size():
                    continue
                self.stats.checks += 1
                if self.check(smaller):
                    what = describe(candidate)
                    self.stats.accepted.append(what)
                    best = smaller
                    self.on_progress(f"{what}: {best.bindings} binding(s) left", best, self.stats)
                    improved = True
                    break
            if not improved:
                self.stats.stopped = self.stats.stopped or "no smaller module fails the same way"
                return best


def describe(candidate: dict[str, Any]) -> str:
    """Words for a candidate of the engine's ``reduce_candidates``."""
    op = candidate.get("op")
    if op == "dce":
        return "dropped unreachable functions and unused bindings"
    if op == "cut":
        return f"cut {candidate.get('function')} after binding {candidate.get('at')} (returns it)"
    if op == "params":
        return f"bindings before {candidate.get('at')} of {candidate.get('function')} became parameters"
    if op == "shrink":
        return f"dimension {candidate.get('from')} became {candidate.get('to')}"
    if op == "unused_params":
        return f"dropped the unused parameters of {candidate.get('function')}"
    return str(op)
