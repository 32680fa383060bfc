"""Delta-debugging driver of ``main.py reduce`` (TVM-free).

The module is reduced by greedy steps: candidates (see :func:`halving_order` and the engine's
``reduce_candidates``) are tried in order from the current best module; the first one that still fails the
same way (the engine's ``reduce_check``) becomes the new best and the candidates are made again. It ends when
no candidate is interesting any more, when :attr:`Reducer.max_checks` checks were made, or when stopped
(the best module so far is kept either way).

:func:`reduce_folder` is the whole reduction of a reproducer folder through an engine client (prepare, check
that it reproduces, the loop, write the best module), shared by ``main.py reduce`` and the GUI's Reduce
Reproducer: callbacks report each check and ask whether to stop. Running ``repro.py`` is running code: the
client's consent must cover it (``--trust``, or the content hash of the folder's ``repro.py`` that the GUI
asked about: :func:`pipeline_model.consent.reproducer_item`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from pipeline_model.i18n import translate


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
    #: The last candidate accepted (the engine's dict: ``op``, ``function``, ``at``, ``from``, ``to``).
    last: dict[str, Any] = field(default_factory=dict)
    stopped: str = ""
    seconds: float = 0.0


class Reducer:
    """The greedy loop; ``candidates(best)``, ``apply(best, candidate)`` and ``check(module)`` do the work."""

    def __init__(self, candidates: Callable[[Module], list[dict[str, Any]]],
                 apply: Callable[[Module, dict[str, Any]], Optional[Module]],
                 check: Callable[[Module], bool], *, max_checks: int = 400,
                 on_progress: Optional[Callable[[str, Module, ReduceStats], None]] = None,
                 should_stop: Optional[Callable[[], bool]] = None,
                 on_check: Optional[Callable[[Module, ReduceStats], None]] = None) -> None:
        self.candidates, self.apply, self.check = candidates, apply, check
        self.max_checks = max_checks
        self.on_progress = on_progress or (lambda _m, _b, _s: None)
        self.should_stop = should_stop or (lambda: False)
        #: Called after every check with the best module so far (the GUI's progress).
        self.on_check = on_check or (lambda _b, _s: None)
        self.stats = ReduceStats()
        #: The smallest failing module so far (kept when the loop is interrupted or stopped mid-request).
        self.best: Optional[Module] = None
        #: Modules checked and found not to fail the same way (a candidate that makes one again is not checked).
        self.uninteresting: set[str] = set()

    def run(self, start: Module) -> Module:
        """Reduce ``start`` (assumed to fail); the smallest failing module found. Ctrl+C, and an error of a
        request that a stop cut short, end the loop with the best module so far."""
        t0 = time.perf_counter()
        self.best = start
        try:
            self._loop(start)
        except KeyboardInterrupt:
            self.stats.stopped = "interrupted"
        except Exception:
            if not self.should_stop():
                raise
            self.stats.stopped = "stopped"
        self.stats.seconds = time.perf_counter() - t0
        return self.best

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
                if smaller is None or smaller.size() >= best.size() or smaller.json in self.uninteresting:
                    continue
                self.stats.checks += 1
                interesting = self.check(smaller)
                if not interesting:
                    self.uninteresting.add(smaller.json)
                if interesting:
                    what = describe(candidate)
                    self.stats.accepted.append(what)
                    self.stats.last = dict(candidate)
                    best = self.best = smaller
                    self.on_progress(f"{what}: {best.bindings} binding(s) left", best, self.stats)
                self.on_check(best, self.stats)
                if interesting:
                    improved = True
                    break
            if not improved:
                self.stats.stopped = self.stats.stopped or "no smaller module fails the same way"
                return best


def describe(candidate: dict[str, Any]) -> str:
    """Words for a candidate of the engine's ``reduce_candidates``, in the interface's language where a
    translator is installed (the GUI; the CLI prints them in English)."""
    op, function, at = candidate.get("op"), candidate.get("function"), candidate.get("at")
    if op == "dce":
        return translate("Reduce", "dropped unreachable functions and unused bindings")
    if op == "cut":
        return translate("Reduce", "cut {0} after binding {1} (returns it)").format(function, at)
    if op == "params":
        return translate("Reduce", "bindings before {0} of {1} became parameters").format(at, function)
    if op == "shrink":
        return translate("Reduce", "dimension {0} became {1}").format(candidate.get("from"), candidate.get("to"))
    if op == "unused_params":
        return translate("Reduce", "dropped the unused parameters of {0}").format(function)
    if op == "param":
        return translate("Reduce", "binding {0} of {1} became a parameter").format(at, function)
    if op == "bypass":
        return translate("Reduce", "binding {0} of {1} left out (its argument used instead)").format(at, function)
    if op == "drop":
        return translate("Reduce", "dropped the function {0}").format(function)
    if op == "inline":
        return translate("Reduce", "inlined the function {0}").format(function)
    return str(op)


#: Seconds a candidate's check may take when the reproducer names no hang timeout.
DEFAULT_TIMEOUT_S = 120.0


class NotReproduced(Exception):
    """The reproducer folder does not reproduce its failure (nothing to reduce)."""


class EngineSide:
    """The engine calls of a reduction through an ``EngineClient`` (its consent goes with each request). A module is
    sent by key while the engine holds it, else with its JSON (after an engine restart: a crashing or hanging
    candidate ends the engine and its cache). Only a check runs under ``check_timeout_s`` (a candidate that takes
    longer is a hang); the other requests, and starting a fresh engine, under the client's own limits."""

    def __init__(self, client: Any, folder: str, spec: Any, check_timeout_s: Optional[float] = None) -> None:
        self.client, self.folder, self.spec = client, folder, spec
        self.check_timeout_s = check_timeout_s
        self.pid: Optional[int] = None
        self._held: set[str] = set()

    def _call(self, cmd: str, args: dict[str, Any], module: Optional[Module] = None,
              timeout_s: Optional[float] = None) -> dict[str, Any]:
        if module is not None:
            args = {**args, "key": module.key, "function": self.spec.function}
            if self.client.pid != self.pid or module.key not in self._held:
                args["module_json"] = module.json
        saved = getattr(self.client, "step_timeout_s", None)
        if timeout_s and saved is not None:
            self.client.step_timeout_s = float(timeout_s)
        try:
            reply = dict(self.client.request(cmd, args))
        finally:
            if timeout_s and saved is not None:
                self.client.step_timeout_s = saved
        if self.client.pid != self.pid:
            self.pid, self._held = self.client.pid, set()
        if module is not None:
            self._held.add(module.key)
        if reply.get("key"):
            self._held.add(str(reply["key"]))
        return reply

    def prepare(self) -> Module:
        """The reproducer's module."""
        reply = self._call("reduce_prepare", {"folder": self.folder})
        return Module(str(reply["key"]), str(reply["module_json"]), int(reply["bindings"]), int(reply["elements"]))

    def candidates(self, module: Module) -> list[dict[str, Any]]:
        """The engine's candidate reductions of ``module``."""
        return list(self._call("reduce_candidates", {}, module)["candidates"])

    def apply(self, module: Module, candidate: dict[str, Any]) -> Optional[Module]:
        """``module`` reduced by ``candidate`` (``None``: not possible)."""
        reply = self._call("reduce_apply", {"candidate": candidate}, module)
        if not reply.get("key"):
            return None
        return Module(str(reply["key"]), str(reply["module_json"]), int(reply["bindings"]), int(reply["elements"]))

    def check(self, module: Module) -> bool:
        """Does ``module`` still fail as expected? A crash or hang of the engine (the client's watchdog restarts
        it) counts as what it is; one that a stop (cancel) caused is uninteresting."""
        from pipeline_model.debugging import reproducer
        from pipeline_model.engine.client import EngineCrashed

        try:
            if self.client.pid != self.pid or self.pid is None:
                self.client.ping()  # a fresh engine starts (imports TVM) under the client's limit, not the check's
            reply = self._call("reduce_check", {"folder": self.folder}, module, self.check_timeout_s)
            return bool(reply["interesting"])
        except EngineCrashed as exc:
            self.pid = None
            if getattr(exc, "cancelled", False):
                return False
            if getattr(exc, "timed_out", False):
                return bool(self.spec.kind == reproducer.KIND_HANG)
            code = getattr(exc, "exit_code", None)
            return (self.spec.kind == reproducer.KIND_CRASH and code is not None
                    and -int(code) == int(self.spec.expected.get("signal", 11)))

    def write(self, module: Module, out_dir: str, original: int, checks: int,
              overwrite: bool = False) -> dict[str, Any]:
        """Write the reduced reproducer into ``out_dir`` (an existing file there is replaced only with
        ``overwrite``: the user asked, ``--force`` or a prompt)."""
        return self._call("reduce_write", {"folder": self.folder, "out_dir": out_dir, "original": original,
                                           "checks": checks, "overwrite": bool(overwrite)}, module)


@dataclass
class ReduceOutcome:
    """A finished reduction: the module at the start, the best one (written to ``folder``), the stats."""

    start: Module
    best: Module
    stats: ReduceStats
    folder: str

    def to_json(self) -> dict[str, Any]:
        """The JSON of ``main.py reduce --json`` (without ``ok`` / ``exit_code``)."""
        return {"folder": self.folder, "bindings_before": self.start.bindings, "bindings_after": self.best.bindings,
                "checks": self.stats.checks, "accepted": list(self.stats.accepted), "stopped": self.stats.stopped,
                "seconds": round(self.stats.seconds, 3)}


def reduce_folder(client: Any, folder: str, out_dir: str, *, max_checks: int = 400, timeout_s: Optional[float] = None,
                  on_progress: Optional[Callable[[str, Module, ReduceStats], None]] = None,
                  on_check: Optional[Callable[[Module, ReduceStats], None]] = None,
                  on_start: Optional[Callable[[Module], None]] = None,
                  should_stop: Optional[Callable[[], bool]] = None, overwrite: bool = False) -> ReduceOutcome:
    """Reduce the reproducer ``folder`` into ``out_dir`` through ``client`` (an ``EngineClient``, whose consent
    must cover the folder's ``repro.py``). ``on_start(module)`` once the folder reproduces, ``on_check`` after
    each check, ``on_progress`` for each accepted reduction; ``should_stop()`` ends the loop between checks
    (the best module so far is written either way). ``timeout_s`` is the watchdog limit of each check (default: the
    reproducer's hang timeout, else 120 s): a candidate that takes longer counts as a hang; ``overwrite`` lets the
    result replace existing files in ``out_dir``. Raises :class:`NotReproduced` when the folder does not
    fail as it says, ``EngineError`` (``ConsentRequired`` without consent) when the engine cannot do it."""
    from pipeline_model.debugging import reproducer

    spec = reproducer.read_spec(folder)
    timeout = float(timeout_s or spec.expected.get("timeout") or DEFAULT_TIMEOUT_S)
    return _reduce(EngineSide(client, folder, spec, timeout), out_dir, max_checks, on_progress, on_check, on_start,
                   should_stop, overwrite)


def _reduce(side: EngineSide, out_dir: str, max_checks: int,
            on_progress: Optional[Callable[[str, Module, ReduceStats], None]],
            on_check: Optional[Callable[[Module, ReduceStats], None]], on_start: Optional[Callable[[Module], None]],
            should_stop: Optional[Callable[[], bool]], overwrite: bool = False) -> ReduceOutcome:
    start = side.prepare()
    if not side.check(start):
        if should_stop is not None and should_stop():
            raise NotReproduced("stopped before the reproducer's own check ended: nothing reduced")
        raise NotReproduced("the reproducer does not reproduce its failure: nothing to reduce")
    if on_start is not None:
        on_start(start)
    reducer = Reducer(side.candidates, side.apply, side.check, max_checks=max_checks, on_progress=on_progress,
                      should_stop=should_stop, on_check=on_check)
    best = reducer.run(start)
    written = side.write(best, out_dir, start.bindings, reducer.stats.checks, overwrite)
    return ReduceOutcome(start, best, reducer.stats, str(written["folder"]))
