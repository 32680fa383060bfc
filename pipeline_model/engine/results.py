"""Result types the engine process sends back: per-step snapshots, timings, nested passes, errors.

These are plain dataclasses that travel as JSON between the engine process and its clients (the
CLI and the GUI). They are TVM-free so the GUI can use them without importing TVM.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional

# Step states, shared by the engine and the views.
NOT_RUN = "not_run"
RUNNING = "running"
CHANGED = "changed"
UNCHANGED = "unchanged"
FAILED = "failed"
SKIPPED = "skipped"  # disabled or placeholder step
CANCELLED = "cancelled"

STATES = (NOT_RUN, RUNNING, CHANGED, UNCHANGED, FAILED, SKIPPED, CANCELLED)


@dataclass
class NestedPassResult:
    """A pass that ran inside a step (instrumented), e.g. one stage of ``get_pipeline('zero')``.

    ``script`` is the TVMScript after the nested pass when it changed the module, else ``None``
    (the module is the same as after the previous nested pass). ``depth`` is the nesting level
    (0 = directly inside the step).
    """

    name: str
    elapsed_ms: float
    changed: bool
    depth: int = 0
    script: Optional[str] = None
    snapshot_key: Optional[str] = None


@dataclass
class StepResult:
    """What one step did.

    ``script`` is the module's TVMScript after the step (for a skipped step: the script it was
    given). ``snapshot_key`` names the module in the engine's cache (for graph requests).
    ``cached`` is true when the result came from the cache without running the pass again.
    ``report`` carries pass-specific extra information (DLight rule per PrimFunc, fused groups,
    tuning summary ...), free-form but JSON-serialisable.
    """

    index: int
    uid: str
    pass_id: str
    title: str
    state: str = NOT_RUN
    elapsed_ms: float = 0.0
    script: Optional[str] = None
    snapshot_key: Optional[str] = None
    nested: list[NestedPassResult] = field(default_factory=list)
    error: Optional[str] = None
    traceback: Optional[str] = None
    cached: bool = False
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """True when the step changed the module (structural equality, not text)."""
        return self.state == CHANGED

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "StepResult":
        """Inverse of :meth:`to_json`."""
        data = dict(data)
        data["nested"] = [NestedPassResult(**n) for n in data.get("nested") or []]
        return cls(**data)


@dataclass
class RunResult:
    """The whole run of a pipeline (or of its steps up to ``until``).

    ``input_script``/``input_key``: the model before any step. ``failed_index``: index of the failing
    step, if any; ``last_good_script`` the module before that step. ``error`` holds a run-level
    error that is not a step's (model failed to load, engine crashed outside a step ...).
    """

    input_script: Optional[str] = None
    input_key: Optional[str] = None
    steps: list[StepResult] = field(default_factory=list)
    failed_index: Optional[int] = None
    error: Optional[str] = None
    last_good_script: Optional[str] = None
    cancelled: bool = False
    total_ms: float = 0.0

    @property
    def ok(self) -> bool:
        """True when no step failed and the run was neither cancelled nor broken."""
        return self.failed_index is None and self.error is None and not self.cancelled

    @property
    def final_script(self) -> Optional[str]:
        """TVMScript after the last step that ran (or the input when none did)."""
        for step in reversed(self.steps):
            if step.script is not None and step.state in (CHANGED, UNCHANGED, SKIPPED):
                return step.script
        return self.input_script

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "input_script": self.input_script,
            "input_key": self.input_key,
            "steps": [s.to_json() for s in self.steps],
            "failed_index": self.failed_index,
            "error": self.error,
            "last_good_script": self.last_good_script,
            "cancelled": self.cancelled,
            "total_ms": self.total_ms,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "RunResult":
        """Inverse of :meth:`to_json`."""
        data = dict(data)
        data["steps"] = [StepResult.from_json(s) for s in data.get("steps") or []]
        return cls(**data)
