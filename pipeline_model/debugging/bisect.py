"""Bisecting a pipeline to the first step that breaks the model (TVM-free).

Positions: ``0`` is the model as loaded, ``p`` (1..n) the module after the first ``p`` candidate steps
(the enabled steps that changed the module; an unchanged step cannot be the culprit). Position 0 is
good by definition (it is what the reference is built from), position ``n`` is tested first; then
:class:`BisectPlan` halves the range between the last good and the first bad position, so a bisection
without skips takes at most ``1 + ceil(log2 n)`` builds. A position whose module cannot be completed
(it does not build, in a way unlike the failure looked for) is *skipped*: the next test is the untested
position nearest the middle. When skips leave a range of several steps, :func:`leave_one_out_order`
gives the order of the fallback (the whole pipeline with one step left out, XLA's
``--xla_disable_hlo_passes``).

When TVM's own default pipeline fails on the model as loaded (the reference build crashes, or the model as loaded
completed with the stock lowering fails like the pipeline), completed prefixes all carry the failure: the bisection
goes straight to leaving single steps out of the pipeline as written, and the report says so
(:attr:`BisectReport.default_pipeline_fails`, :func:`tvm_bug_line`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

PASS, FAIL, SKIP = "pass", "fail", "skip"


class BisectPlan:
    """Which position to test next, from the outcomes recorded so far (see the module docstring)."""

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError("a bisection needs at least one candidate step")
        self.n = n
        self.good = 0
        self.bad: Optional[int] = None
        self.skipped: set[int] = set()
        self.outcomes: dict[int, str] = {}

    def next_position(self) -> Optional[int]:
        """The next position to test, or ``None`` when the plan is finished."""
        if self.n not in self.outcomes:
            return self.n
        if self.bad is None:
            return None  # the full pipeline passed or could not be completed
        middle = (self.good + self.bad) / 2.0
        open_ = [p for p in range(self.good + 1, self.bad) if p not in self.outcomes]
        if not open_:
            return None
        return min(open_, key=lambda p: (abs(p - middle), p))

    def record(self, position: int, outcome: str) -> None:
        """Record the outcome (:data:`PASS`, :data:`FAIL` or :data:`SKIP`) of testing ``position``."""
        if outcome not in (PASS, FAIL, SKIP):
            raise ValueError(f"unknown outcome {outcome!r}")
        self.outcomes[position] = outcome
        if outcome == PASS:
            self.good = max(self.good, position)
        elif outcome == FAIL:
            self.bad = position if self.bad is None else min(self.bad, position)
        else:
            self.skipped.add(position)

    def culprit_range(self) -> Optional[tuple[int, int]]:
        """``(first, last)`` positions (1-based, inclusive) one of which holds the culprit; ``None`` when
        nothing failed. A single step when ``first == last``."""
        if self.bad is None:
            return None
        return self.good + 1, self.bad


def max_builds(n: int) -> int:
    """The build budget of a bisection over ``n`` candidate steps without skips: ``ceil(log2 n) + 2``."""
    return math.ceil(math.log2(max(1, n))) + 2


def leave_one_out_order(first: int, last: int, n: int) -> list[int]:
    """Positions to leave out, one at a time: the suspected range ``first..last`` (last first: the step
    nearest the failure), then the others from the end."""
    inside = list(range(last, first - 1, -1))
    return inside + [p for p in range(n, 0, -1) if p not in inside]


@dataclass
class TestedStep:
    """One tested module: a prefix (``mode="prefix"``: the steps up to ``step``) or the pipeline without
    one step (``mode="without"``)."""

    position: int
    step: int  # 1-based index of the step in the pipeline (0: the model as loaded)
    pass_id: str
    outcome: str
    mode: str = "prefix"
    built: bool = False
    ran: bool = False
    max_abs_over_ref: Optional[float] = None
    error: Optional[str] = None
    ms: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """A JSON-plain dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "TestedStep":
        """Inverse of :meth:`to_json` (unknown keys ignored)."""
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})

    def line(self) -> str:
        """One human line: ``step 5 (relax.FuseOps)  fail  built  0.12 of max|ref|  410 ms``."""
        what = "model as loaded" if self.step == 0 else f"step {self.step} ({self.pass_id})"
        if self.mode == "without":
            what = f"without {what}"
        ratio = f"{self.max_abs_over_ref:.3g} of max|ref|" if self.max_abs_over_ref is not None else "-"
        state = "built" if self.built else "not built"
        text = f"{what:<44} {self.outcome:<5} {state:<9} {ratio:<18} {self.ms:8.0f} ms"
        if self.error:
            text += f"  {self.error.splitlines()[0][:160]}"
        return text


@dataclass
class BisectReport:
    """What a bisection found; ``culprit_step`` is 1-based in the pipeline's step list."""

    ok: bool = False
    culprit_step: Optional[int] = None
    culprit_pass_id: Optional[str] = None
    culprit_range: Optional[list[int]] = None
    builds: int = 0
    max_builds: int = 0
    candidates: list[int] = field(default_factory=list)
    tested: list[TestedStep] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    failure: Optional[dict[str, Any]] = None
    method: str = "bisect"
    message: str = ""
    reference: str = ""
    cancelled: bool = False
    last_good_key: Optional[str] = None
    culprit_key: Optional[str] = None
    total_ms: float = 0.0
    #: Why the default-pipeline reference (the model as loaded, ``tvm.compile``'s default) could not be used.
    reference_failure: Optional[str] = None
    #: How TVM's own default pipeline fails on the model as loaded (``"crash"``, ``"build"``, ``"run"``), or None.
    default_pipeline_fails: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-plain dict (``tested`` as dicts)."""
        data = asdict(self)
        data["tested"] = [t.to_json() for t in self.tested]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "BisectReport":
        """Inverse of :meth:`to_json` (unknown keys ignored)."""
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "tested"}
        report = cls(**fields)
        report.tested = [TestedStep.from_json(t) for t in data.get("tested") or []]
        return report

    def lines(self, reproducer: Optional[str] = None) -> list[str]:
        """The human report: one line per tested module, then the verdict (``reproducer``: where the reproducer
        was saved, named in the TVM-bug line)."""
        out = [t.line() for t in self.tested]
        if self.skipped:
            out.append("skipped (module could not be completed): "
                       + ", ".join(f"step {s}" for s in self.skipped))
        out.append(self.message)
        if self.reference_failure:
            out.append(f"reference unavailable: {self.reference_failure.splitlines()[0][:200]}")
        if self.reference:
            out.append(f"reference used: {self.reference}")
        if self.default_pipeline_fails:
            out.append(tvm_bug_line(self.default_pipeline_fails, reproducer))
        out.append(f"builds: {self.builds} (budget without skips: {self.max_builds})")
        return out


#: What TVM's default pipeline does to the model, by failure kind (:func:`tvm_bug_line`).
_DEFAULT_FAILS = {"crash": "crashes on", "build": "fails to build", "run": "fails at run time on",
                  "numeric": "gives a wrong result on"}


def tvm_bug_line(kind: str, reproducer: Optional[str] = None) -> str:
    """The one line saying TVM's own default pipeline fails on the model (``kind`` as
    :attr:`BisectReport.default_pipeline_fails`); ``reproducer``: the folder it was saved to."""
    verb = _DEFAULT_FAILS.get(kind, "fails on")
    tail = f"reproducer saved to {reproducer}" if reproducer else "save a reproducer with --reproducer DIR"
    return f"TVM's default pipeline {verb} this model too: this is a TVM bug; {tail}"


def request_bisect(client: Any, args: dict[str, Any],
                   on_event: Optional[Callable[[str, dict[str, Any]], None]] = None, max_crashes: int = 16) -> dict[str, Any]:
    """Send the engine's ``bisect`` request through ``client`` (an ``EngineClient``). When a tested module
    crashes the engine (or hangs past the watchdog), the client restarts it and this sends the request again
    with what was found so far (``known``: each tested module's result from the ``bisect_tested`` events, the
    crashed one as ``kind: "crash"``, a failing module), so a crash is a result and nothing is built twice. A crash
    while the reference is built or run (``build_progress`` phases ``reference`` .. ``reference_done``) is sent as
    the reference's failure (``mode: "reference"``): the engine then checks against a fallback instead of blaming
    the module being tested."""
    from pipeline_model.engine.client import EngineCrashed

    known: list[dict[str, Any]] = list(args.get("known") or [])
    current: dict[str, Any] = {}
    module: dict[str, Any] = {}  # the module being tested while the reference is built

    def listen(name: str, data: dict[str, Any]) -> None:
        if name == "bisect_progress" and "position" in data:  # a module is being tested
            current.clear()
            current.update(data)
            module.clear()
            module.update(data)
        elif name == "build_progress" and data.get("phase") in ("reference", "reference_done"):
            current.clear()
            current.update({"mode": "reference", "position": 0} if data["phase"] == "reference" else module)
        elif name == "bisect_tested":
            known.append({"mode": data.get("mode"), "position": data.get("position"), "result": data.get("result")})
            current.clear()
        if on_event is not None:
            on_event(name, data)

    crashes = 0
    while True:
        current.clear()
        try:
            return dict(client.request("bisect", dict(args, known=list(known)), on_event=listen))
        except EngineCrashed as exc:
            crashes += 1
            if getattr(exc, "cancelled", False) or not current or crashes > max_crashes:
                raise
            what = str(exc.message).split("\n", 1)[0]
            known.append({"mode": current.get("mode", "prefix"), "position": current["position"],
                          "result": {"built": True, "ran": False, "kind": "crash", "error": what,
                                     "max_abs_over_ref": None, "ms": 0.0}})
