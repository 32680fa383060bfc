"""The request loop of the engine client (TVM-free): wait for one request's reply under one deadline.

Every request is bounded by one :class:`Deadline`: what the request is waiting for now (its model to
load, a step to finish, or any answer) and until when. The loop (:func:`wait_reply`) consults it while it
waits, and the request's events restart it: ``model_loaded`` and ``step_finished`` switch it to the
silence limit of the request, ``step_started`` to the step's limit (the event's ``timeout_s`` or the
run's), ``tuning_progress`` restarts a tuning step's limit, and any other sign of life restarts the
silence limit. When it runs out the engine is killed and restarted and the request ends with
:class:`~pipeline_model.engine.errors.EngineCrashed` (``timed_out``) saying what did not finish in time.
"""

from __future__ import annotations

import queue
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from pipeline_model.engine import messages
from pipeline_model.engine.errors import ConsentRequired, EngineError, EngineUnavailable
from pipeline_model.engine.process import EOF, EngineProcess, EngineSupervisor

EventCallback = Callable[[str, dict], None]


@dataclass(frozen=True)
class Limits:
    """The limits of one request, in seconds: loading a run's model (``model_s``), one step of a run
    (``step_s``) and the longest silence otherwise (``silence_s``)."""

    model_s: float
    step_s: float
    silence_s: float


class Deadline:
    """The one deadline of a request in flight (see the module docstring).

    ``phase`` is :data:`LOADING` (a ``run`` loading its model), :data:`STEP` (``step`` holds the
    ``step_started`` data of the running step) or :data:`WAITING` (any other wait); ``limit_s`` the
    limit of the phase; :meth:`remaining` the seconds left."""

    LOADING, STEP, WAITING = "loading", "step", "waiting"

    def __init__(self, cmd: str, args: dict, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.cmd = cmd
        self.model = args.get("model")
        self.limits = limits
        self.step: Optional[dict] = None
        self._clock = clock
        self.phase = self.WAITING
        self.limit_s = 0.0
        self.expires_at = 0.0
        if cmd == messages.CMD_RUN:
            self._start(self.LOADING, limits.model_s)
        else:
            self._start(self.WAITING, limits.silence_s)

    def _start(self, phase: str, limit_s: float) -> None:
        self.phase, self.limit_s = phase, float(limit_s)
        self.expires_at = self._clock() + self.limit_s

    def restart(self) -> None:
        """Start the current phase's limit again."""
        self.expires_at = self._clock() + self.limit_s

    def remaining(self) -> float:
        """Seconds left (0 when run out)."""
        return max(0.0, self.expires_at - self._clock())

    def expired(self) -> bool:
        """True when the deadline has passed."""
        return self._clock() >= self.expires_at

    def observe(self, event: Any, data: dict) -> None:
        """An event of the request arrived: switch or restart the deadline (see the module docstring)."""
        if isinstance(event, messages.StepStarted):
            self.step = data
            self._start(self.STEP, float(event.timeout_s or self.limits.step_s))
        elif isinstance(event, messages.ModelLoaded):
            self._start(self.WAITING, self.limits.silence_s)
        elif isinstance(event, messages.StepFinished):
            self.step = None
            self._start(self.WAITING, self.limits.silence_s)
        elif self.phase == self.STEP and isinstance(event, messages.TuningProgressEvent):
            self.restart()  # a tuning step that reports progress is alive: each round restarts its limit
        elif self.phase == self.WAITING:
            self.restart()  # any sign of life restarts a request's limit

    def overrun_message(self) -> str:
        """What did not finish in time, e.g. ``step 3 (relax.FuseOps) did not finish within 60 s``."""
        if self.step is not None:
            return f"{self.subject()} did not finish within {self.limit_s:g} s"
        if self.phase == self.LOADING:
            return f"model {self.model!r} did not finish loading within {self.limit_s:g} s"
        return f"the {self.cmd!r} request did not answer within {self.limit_s:g} s"

    def subject(self) -> str:
        """What the request is doing now, for crash messages (``step 3 (relax.FuseOps)``, ...)."""
        if self.step is not None:
            return f"step {int(self.step.get('index', 0)) + 1} ({self.step.get('pass_id')})"
        if self.phase == self.LOADING:
            return f"loading model {self.model!r} in the {self.cmd!r} request"
        return f"the {self.cmd!r} request"


def wait_reply(supervisor: EngineSupervisor, engine: EngineProcess, req_id: int, deadline: Deadline,
               on_event: Optional[EventCallback], heard: Callable[[], None]) -> dict:
    """Wait for the reply of request ``req_id`` on ``engine``; its events go to ``on_event(name, data)``
    (``heard()`` is called for each message of the request). Raises what the request ended with: the
    engine's error, :class:`ConsentRequired`, or the supervisor's crash/overrun/closed error."""
    while True:
        try:
            message = engine.inbox.get(timeout=min(0.25, deadline.remaining()))
        except queue.Empty:
            if supervisor.abandoned(engine):
                raise EngineUnavailable("the engine was closed while the request was running") from None
            if deadline.expired():
                raise supervisor.overrun(engine, deadline.overrun_message(), deadline.step) from None
            continue
        if message is EOF:
            raise supervisor.ended(engine, deadline.subject(), deadline.step)
        if isinstance(message, messages.Notification) and message.id is None:
            _engine_notification(supervisor, engine, message.event)
            continue
        if message.id != req_id:
            continue  # a late message of an earlier, abandoned request
        heard()
        if isinstance(message, messages.Notification):
            event = message.event
            data = event.to_data()
            deadline.observe(event, data)
            if on_event is not None:
                try:
                    on_event(event.name, data)
                except Exception as exc:  # noqa: BLE001 - a listener must not break the request
                    print(f"engine client: event listener failed on {event.name!r}: {exc}", file=sys.stderr)
            continue
        if isinstance(message, messages.Reply):
            return dict(message.result)
        if isinstance(message, messages.ErrorReply):
            err = message.error
            if err.code == messages.CONSENT_REQUIRED:
                raise ConsentRequired(err.message, list(err.data.get("files") or []))
            raise EngineError(err.message or "engine error", err.traceback)


def _engine_notification(supervisor: EngineSupervisor, engine: EngineProcess, event: Any) -> None:
    """``ready`` (remembered) or ``fatal`` (the engine refuses to start: raises :class:`EngineUnavailable`)."""
    if isinstance(event, messages.Ready):
        engine.ready = event.to_data()
    elif isinstance(event, messages.Fatal):
        engine.wait(5.0)
        supervisor.discard(restart=False, engine=engine)
        raise EngineUnavailable(event.message or "the engine refused to start")
