"""Engine protocol: one JSON object per line between the client and the engine process (TVM-free).

Client -> engine::

    {"id": 7, "cmd": "run", "args": {...}}
    {"id": 7, "cmd": "cancel"}                 # stops request 7 between passes
    {"id": 7, "cmd": "stop_tuning"}            # ends the tuning in flight in request 7 early; the
                                               # tuning step succeeds with what was measured and
                                               # the run goes on (the apply step uses the records)

Engine -> client, for each request: zero or more events, then exactly one reply or error::

    {"id": 7, "event": "step_started", "data": {...}}
    {"id": 7, "reply": {...}}
    {"id": 7, "error": {"message": "...", "traceback": "..."}}

Messages that belong to no request carry ``"id": null``: the engine's ``ready`` event at start-up and
``fatal`` (the engine refuses to start, e.g. a known-bad tvm_ffi version) just before it exits.
"""

from __future__ import annotations

import json
from typing import Any, Optional

# Commands.
CMD_PING = "ping"
CMD_CATALOGUE = "catalogue"
CMD_RUN = "run"
CMD_SNAPSHOT = "snapshot"
CMD_CANCEL = "cancel"
CMD_STOP_TUNING = "stop_tuning"
CMD_SHUTDOWN = "shutdown"

# Events.
EV_READY = "ready"
EV_FATAL = "fatal"
EV_MODEL_LOADED = "model_loaded"
EV_STEP_STARTED = "step_started"
EV_NESTED = "nested"
EV_STEP_FINISHED = "step_finished"
EV_TUNING_PROGRESS = "tuning_progress"

# Keys of engine -> client messages.
KEY_EVENT = "event"
KEY_REPLY = "reply"
KEY_ERROR = "error"


class ProtocolError(ValueError):
    """A line that is not a protocol message."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as a UTF-8 line (JSON never contains a raw newline, so one object is one line)."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def decode(line: bytes | str) -> dict[str, Any]:
    """Parse one line into a message dict; :class:`ProtocolError` for anything else."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"protocol line is not UTF-8: {exc}") from None
    text = line.strip()
    if not text:
        raise ProtocolError("empty protocol line")
    try:
        message = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"protocol line is not JSON ({exc}): {text[:200]!r}") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"protocol message is not an object: {text[:200]!r}")
    return message


def request(req_id: int, cmd: str, args: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """A client -> engine request message."""
    return {"id": req_id, "cmd": cmd, "args": dict(args or {})}


def cancel(req_id: int) -> dict[str, Any]:
    """A client -> engine cancel message for request ``req_id``."""
    return {"id": req_id, "cmd": CMD_CANCEL}


def stop_tuning(req_id: int) -> dict[str, Any]:
    """A client -> engine message ending the tuning in flight in request ``req_id`` early (not a cancel)."""
    return {"id": req_id, "cmd": CMD_STOP_TUNING}


def event(req_id: Optional[int], name: str, data: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """An engine -> client event message."""
    return {"id": req_id, KEY_EVENT: name, "data": dict(data or {})}


def reply(req_id: Optional[int], value: dict[str, Any]) -> dict[str, Any]:
    """An engine -> client reply message (ends the request)."""
    return {"id": req_id, KEY_REPLY: value}


def error(req_id: Optional[int], message: str, traceback: str = "") -> dict[str, Any]:
    """An engine -> client error message (ends the request)."""
    return {"id": req_id, KEY_ERROR: {"message": message, "traceback": traceback}}


def is_final(message: dict[str, Any]) -> bool:
    """True for a reply or an error (the last message of a request)."""
    return KEY_REPLY in message or KEY_ERROR in message
