"""Engine protocol framing: one JSON object per line between the client and the engine (TVM-free).

The messages themselves — their fields, kinds, events and error codes — are described once, in
:mod:`pipeline_model.engine.messages`. This module only turns them into UTF-8 lines and back:
:func:`encode` (a message dataclass or dict -> one line), :func:`decode` (a line -> dict),
:func:`decode_client` / :func:`decode_engine` (a line -> a validated message dataclass). Lines are
capped at :data:`MAX_LINE_BYTES` by the readers.

The names ``CMD_*`` and ``EV_*`` are re-exported from :mod:`pipeline_model.engine.messages` for
callers that imported them from here.
"""

from __future__ import annotations

import json
from typing import Any, Union

from pipeline_model.engine import messages
from pipeline_model.engine.messages import (  # noqa: F401 - re-exported names
    CMD_CANCEL,
    CMD_CATALOGUE,
    CMD_PING,
    CMD_RUN,
    CMD_SHUTDOWN,
    CMD_SNAPSHOT,
    CMD_STOP_TUNING,
    EV_BUILD_PROGRESS,
    EV_FATAL,
    EV_MODEL_LOADED,
    EV_NESTED,
    EV_READY,
    EV_STEP_FINISHED,
    EV_STEP_STARTED,
    EV_TUNING_PROGRESS,
    EV_WARNING,
)

#: Longest protocol line a reader accepts (scripts of big modules travel in one line).
MAX_LINE_BYTES = 1 << 30

Message = Union[messages.Request, messages.Control, messages.Reply, messages.ErrorReply, messages.Notification]


class ProtocolError(ValueError):
    """A line that is not a protocol message."""


def encode(message: Union[Message, dict[str, Any]]) -> bytes:
    """One message as a UTF-8 line (JSON never contains a raw newline, so one object is one line)."""
    data = message if isinstance(message, dict) else message.to_json()
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "surrogatepass")


def decode(line: bytes | str) -> dict[str, Any]:
    """Parse one line into a JSON object; :class:`ProtocolError` for anything else."""
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
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ProtocolError(f"protocol line is not JSON ({exc}): {text[:200]!r}") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"protocol message is not an object: {text[:200]!r}")
    return message


def decode_client(line: bytes | str) -> messages.ClientMessage:
    """A client -> engine line as a validated :class:`~messages.Request` / :class:`~messages.Control`."""
    try:
        return messages.parse_client_message(decode(line))
    except messages.MessageError as exc:
        raise ProtocolError(f"bad client message: {exc}") from None


def decode_engine(line: bytes | str) -> messages.EngineMessage:
    """An engine -> client line as a validated reply, error reply or notification."""
    try:
        return messages.parse_engine_message(decode(line))
    except messages.MessageError as exc:
        raise ProtocolError(f"bad engine message: {exc}") from None
