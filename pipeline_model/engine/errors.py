"""The errors of the engine client (TVM-free): what a request can end with besides its reply.

:class:`EngineError` (a handler raised), :class:`EngineCrashed` (the process died, or the client killed it:
deadline, memory limit, cancel, restart), :class:`EngineUnavailable` (it would not start, or the client
was closed) and :class:`ConsentRequired` (the request would run code without consent). Importable from
:mod:`pipeline_model.engine.client`, the client's public face.
"""

from __future__ import annotations

import signal
from typing import Optional


class EngineError(Exception):
    """A request failed inside the engine (a handler raised); ``traceback`` is the engine's."""

    def __init__(self, message: str, traceback: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.traceback = traceback


class EngineCrashed(EngineError):
    """The engine process died (e.g. a segfault) or the watchdog killed it.

    ``exit_code`` is the process's exit status (negative: killed by that signal), ``last_step`` the
    ``step_started`` data of the step that was running (``None`` outside a step), ``timed_out`` true
    when the watchdog killed it.
    """

    def __init__(self, message: str, exit_code: Optional[int] = None, last_step: Optional[dict] = None,
                 stderr_tail: str = "", timed_out: bool = False, cancelled: bool = False,
                 out_of_memory: bool = False) -> None:
        super().__init__(message, stderr_tail)
        self.exit_code = exit_code
        self.last_step = last_step
        self.stderr_tail = stderr_tail
        self.timed_out = timed_out
        self.cancelled = cancelled
        self.out_of_memory = out_of_memory


class EngineUnavailable(EngineError):
    """The engine refused to start (e.g. a tvm_ffi version known to crash), could not be started, or
    the client was closed while a request was waiting."""


class ConsentRequired(EngineError):
    """The request would execute code the user has not consented to (nothing ran); ``files`` lists
    ``{"path", "sha256", "kind", "reason"}`` of each such file (see :mod:`pipeline_model.consent`)."""

    def __init__(self, message: str, files: Optional[list] = None) -> None:
        super().__init__(message)
        self.files = list(files or [])


def signal_name(exit_code: Optional[int]) -> str:
    """``SIGSEGV`` for exit code -11, ``exit code 3`` for 3, ``unknown`` for None."""
    if exit_code is None:
        return "unknown"
    if exit_code < 0:
        try:
            return signal.Signals(-exit_code).name
        except ValueError:
            return f"signal {-exit_code}"
    return f"exit code {exit_code}"
