"""Engine messages: one typed dataclass per message kind and per event (TVM-free).

This module is the single description of what travels between :class:`pipeline_model.engine.client.
EngineClient` and the engine process (:mod:`pipeline_model.engine.worker` and its handlers);
:mod:`pipeline_model.engine.protocol` only frames them (one JSON object per line). Field names follow
JSON-RPC 2.0 (without its ``"jsonrpc"`` member):

Client -> engine::

    {"id": 7, "method": "run", "params": {...}}      Request: run a command (one at a time)
    {"id": 7, "method": "cancel"}                   Control: stop request 7 (between passes; the client
                                                    kills and restarts an engine that does not stop)
    {"id": 7, "method": "stop_tuning"}              Control: end the tuning in flight in request 7 early;
                                                    the tuning step succeeds with what was measured
    {"id": null, "method": "shutdown"}              Control: exit after the request in flight

Engine -> client, for each request: zero or more notifications, then exactly one reply or error::

    {"id": 7, "event": "step_started", "data": {...}}                          Notification
    {"id": 7, "result": {...}}                                                 Reply
    {"id": 7, "error": {"code": -32000, "message": "...", "data": {"traceback": "..."}}}   ErrorReply

Notifications that belong to no request carry ``"id": null``: ``ready`` at start-up and ``fatal`` (the
engine refuses to start, e.g. a tvm_ffi version known to crash) just before it exits.

Events (``data`` of a notification; every one is a dataclass below, unknown fields are kept in
``extra`` and sent back unchanged, unknown event names travel as :class:`GenericEvent`):

============================  ===================================================================
``ready``                     ``pid, tvm, tvm_ffi, handler_modules, startup_ms``
``fatal``                     ``message``
``model_loaded``              ``input_key, input_script (None: the client has it or did not ask), source``
``step_started``              ``index, uid, pass_id, timeout_s?`` (starts the client's watchdog)
``nested``                    ``index, nested`` (a ``NestedPassResult`` JSON)
``step_finished``             ``step`` (a ``StepResult`` JSON)
``tuning_progress``           ``index?`` + ``TuningProgress`` fields (restarts the watchdog)
``warning``                   ``message, index?, pass_id?, preflight?``
``build_progress``            ``phase, message``
============================  ===================================================================

Consent: every request that may execute code that came with a file (all but :data:`CODE_FREE_METHODS`)
carries ``trust_all`` and ``trusted_hashes`` in its params, set by the client from its
:class:`pipeline_model.consent.Consent`.

Texts on demand: a ``run`` request with ``"scripts": false`` gets no TVMScript in ``model_loaded``,
``nested`` or ``step_finished`` (``script``/``input_script`` are ``None``; change detection is
structural); ``{"method": "snapshot", "params": {"key": K}}`` -> ``{"key": K, "script": ...}`` prints
the module under a snapshot key when a view, diff or export needs it.

Error codes: :data:`PARSE_ERROR`, :data:`INVALID_REQUEST`, :data:`METHOD_NOT_FOUND`,
:data:`INVALID_PARAMS` (JSON-RPC's), :data:`HANDLER_ERROR` (a handler raised),
:data:`CONSENT_REQUIRED` (the request would execute code the user has not consented to).

Every ``from_json`` validates and raises :class:`MessageError` (a ``ValueError``) naming the field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional, Union

# Methods (commands).
CMD_PING = "ping"
CMD_CATALOGUE = "catalogue"
CMD_RUN = "run"
CMD_SNAPSHOT = "snapshot"
CMD_CANCEL = "cancel"
CMD_STOP_TUNING = "stop_tuning"
CMD_SHUTDOWN = "shutdown"
CONTROL_METHODS = frozenset({CMD_CANCEL, CMD_STOP_TUNING, CMD_SHUTDOWN})
#: Commands that never load a model nor run steps, so never execute code that came with a file. Every
#: other request (``run``, ``build_run``, ``compare``, ``profile``, ``export_library``, ``tune``, a plug-in's
#: command) carries the client's consent fields (``trust_all``, ``trusted_hashes``; see
#: :class:`pipeline_model.consent.Consent`).
CODE_FREE_METHODS = frozenset({CMD_PING, CMD_CATALOGUE, CMD_SNAPSHOT, "cache_clear", "env", "graph", "prim_func",
                               "profile_get", "devices", "rpc_devices", "validate_target"})

# Events.
EV_READY = "ready"
EV_FATAL = "fatal"
EV_MODEL_LOADED = "model_loaded"
EV_STEP_STARTED = "step_started"
EV_NESTED = "nested"
EV_STEP_FINISHED = "step_finished"
EV_TUNING_PROGRESS = "tuning_progress"
EV_WARNING = "warning"
EV_BUILD_PROGRESS = "build_progress"

# Error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
HANDLER_ERROR = -32000
CONSENT_REQUIRED = -32001

MessageId = Optional[int]


class MessageError(ValueError):
    """A JSON object that is not a valid engine message; the text names the field."""


def _check_id(data: dict[str, Any], allow_none: bool = True) -> MessageId:
    if "id" not in data:
        raise MessageError("message has no 'id'")
    value = data["id"]
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise MessageError(f"'id' must be an integer{' or null' if allow_none else ''}, not {value!r}")
    return value


def _check_type(where: str, value: Any, types: Any, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise MessageError(f"{where} must be {_type_names(types)}, not {value!r}")
    if not isinstance(value, types):
        raise MessageError(f"{where} must be {_type_names(types)}, not {type(value).__name__}")
    return value


def _type_names(types: Any) -> str:
    items = types if isinstance(types, tuple) else (types,)
    return " or ".join(t.__name__ for t in items)


# ------------------------------------------------------------------------------------- client -> engine


@dataclass
class Request:
    """Run command ``method`` with ``params``; answered by a :class:`Reply` or :class:`ErrorReply`."""

    id: int
    method: str
    params: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The wire form."""
        return {"id": self.id, "method": self.method, "params": dict(self.params)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Request":
        """Validate and build; :class:`MessageError` when malformed."""
        req_id = _check_id(data, allow_none=False)
        method = _check_type("'method'", data.get("method"), str)
        if not method or method in CONTROL_METHODS:
            raise MessageError(f"'method' {method!r} is not a request method")
        params = data.get("params", {})
        params = {} if params is None else _check_type("'params'", params, dict)
        assert req_id is not None
        return cls(req_id, method, dict(params))


@dataclass
class Control:
    """``cancel`` / ``stop_tuning`` request ``id``, or ``shutdown`` the engine (no reply)."""

    id: MessageId
    method: str

    def to_json(self) -> dict[str, Any]:
        """The wire form."""
        return {"id": self.id, "method": self.method}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Control":
        """Validate and build; :class:`MessageError` when malformed."""
        req_id = _check_id(data)
        method = data.get("method")
        if method not in CONTROL_METHODS:
            raise MessageError(f"'method' {method!r} is not a control method ({', '.join(sorted(CONTROL_METHODS))})")
        if method != CMD_SHUTDOWN and req_id is None:
            raise MessageError(f"{method!r} needs the id of the request it is about")
        return cls(req_id, str(method))


# ------------------------------------------------------------------------------------- engine -> client


@dataclass
class Reply:
    """The result of request ``id`` (ends it)."""

    id: MessageId
    result: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The wire form."""
        return {"id": self.id, "result": dict(self.result)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Reply":
        """Validate and build; :class:`MessageError` when malformed."""
        req_id = _check_id(data)
        result = _check_type("'result'", data.get("result"), dict)
        return cls(req_id, dict(result))


@dataclass
class ErrorInfo:
    """``code`` (see the module docstring), a plain ``message`` and ``data`` (``traceback``, ...)."""

    code: int
    message: str
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def traceback(self) -> str:
        """The engine's traceback text ('' when none)."""
        return str(self.data.get("traceback") or "")

    def to_json(self) -> dict[str, Any]:
        """The wire form."""
        return {"code": self.code, "message": self.message, "data": dict(self.data)}

    @classmethod
    def from_json(cls, data: Any) -> "ErrorInfo":
        """Validate and build; :class:`MessageError` when malformed."""
        _check_type("'error'", data, dict)
        code = _check_type("'error.code'", data.get("code"), int)
        message = _check_type("'error.message'", data.get("message"), str)
        extra = data.get("data", {})
        extra = {} if extra is None else _check_type("'error.data'", extra, dict)
        return cls(code, message, dict(extra))


@dataclass
class ErrorReply:
    """Request ``id`` failed (ends it)."""

    id: MessageId
    error: ErrorInfo

    def to_json(self) -> dict[str, Any]:
        """The wire form."""
        return {"id": self.id, "error": self.error.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ErrorReply":
        """Validate and build; :class:`MessageError` when malformed."""
        return cls(_check_id(data), ErrorInfo.from_json(data.get("error")))

    @classmethod
    def make(cls, req_id: MessageId, message: str, traceback: str = "", code: int = HANDLER_ERROR) -> "ErrorReply":
        """Shorthand: an error reply with a traceback in ``data``."""
        return cls(req_id, ErrorInfo(code, message, {"traceback": traceback} if traceback else {}))


# ------------------------------------------------------------------------------------------- events


@dataclass
class Event:
    """Base of the event payloads: declared fields plus ``extra`` (unknown fields, kept as they are).

    Subclasses set :attr:`NAME` and list required fields with their types in :attr:`REQUIRED`
    (optional ones in :attr:`OPTIONAL`).
    """

    NAME: ClassVar[str] = ""
    REQUIRED: ClassVar[dict[str, Any]] = {}
    OPTIONAL: ClassVar[dict[str, Any]] = {}

    @property
    def name(self) -> str:
        """The event name."""
        return self.NAME

    def to_data(self) -> dict[str, Any]:
        """The ``data`` dict of the notification (what ``on_event(name, data)`` callbacks get)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "extra":
                continue
            value = getattr(self, f.name)
            if value is None and f.name in self.OPTIONAL:
                continue
            out[f.name] = value
        out.update(getattr(self, "extra", {}) or {})
        return out

    @classmethod
    def from_data(cls, data: Any) -> "Event":
        """Validate a ``data`` dict and build the event; :class:`MessageError` when malformed."""
        if not isinstance(data, dict):
            raise MessageError(f"event {cls.NAME!r}: 'data' must be an object, not {type(data).__name__}")
        kwargs: dict[str, Any] = {}
        for name, types in cls.REQUIRED.items():
            if name not in data:
                raise MessageError(f"event {cls.NAME!r}: 'data.{name}' is missing")
            kwargs[name] = _check_type(f"event {cls.NAME!r}: 'data.{name}'", data[name], types)
        for name, types in cls.OPTIONAL.items():
            if name in data:
                kwargs[name] = _check_type(f"event {cls.NAME!r}: 'data.{name}'", data[name], types, optional=True)
        extra = {k: v for k, v in data.items() if k not in cls.REQUIRED and k not in cls.OPTIONAL}
        return cls(**kwargs, extra=extra)  # type: ignore[call-arg]


_NUM = (int, float)


@dataclass
class Ready(Event):
    """The engine started and imported TVM."""

    NAME: ClassVar[str] = EV_READY
    REQUIRED: ClassVar[dict[str, Any]] = {"pid": int}
    OPTIONAL: ClassVar[dict[str, Any]] = {"tvm": str, "tvm_ffi": str, "handler_modules": list, "startup_ms": _NUM}
    pid: int = 0
    tvm: Optional[str] = None
    tvm_ffi: Optional[str] = None
    handler_modules: Optional[list] = None
    startup_ms: Optional[float] = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Fatal(Event):
    """The engine refuses to start; ``message`` says why and how to fix it."""

    NAME: ClassVar[str] = EV_FATAL
    REQUIRED: ClassVar[dict[str, Any]] = {"message": str}
    message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ModelLoaded(Event):
    """The run's model is loaded; ``input_script`` is ``None`` when the client already has it or ran
    with ``"scripts": false`` (it asks ``snapshot`` with ``input_key`` when it needs the text)."""

    NAME: ClassVar[str] = EV_MODEL_LOADED
    REQUIRED: ClassVar[dict[str, Any]] = {"input_key": str}
    OPTIONAL: ClassVar[dict[str, Any]] = {"input_script": str, "source": str}
    input_key: str = ""
    input_script: Optional[str] = None
    source: Optional[str] = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_data(self) -> dict[str, Any]:
        """``input_script`` is always present (``None`` means "you have it" or "ask ``snapshot``")."""
        data = super().to_data()
        data.setdefault("input_script", None)
        return data


@dataclass
class StepStarted(Event):
    """Step ``index`` starts (the client's watchdog limit, ``timeout_s`` or its own, starts now)."""

    NAME: ClassVar[str] = EV_STEP_STARTED
    REQUIRED: ClassVar[dict[str, Any]] = {"index": int}
    OPTIONAL: ClassVar[dict[str, Any]] = {"uid": str, "pass_id": str, "timeout_s": _NUM}
    index: int = 0
    uid: Optional[str] = None
    pass_id: Optional[str] = None
    timeout_s: Optional[float] = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Nested(Event):
    """A nested pass of step ``index`` finished (``nested``: a ``NestedPassResult`` JSON)."""

    NAME: ClassVar[str] = EV_NESTED
    REQUIRED: ClassVar[dict[str, Any]] = {"index": int, "nested": dict}
    index: int = 0
    nested: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class StepFinished(Event):
    """A step finished in any state (``step``: a ``StepResult`` JSON)."""

    NAME: ClassVar[str] = EV_STEP_FINISHED
    REQUIRED: ClassVar[dict[str, Any]] = {"step": dict}
    step: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class TuningProgressEvent(Event):
    """A MetaSchedule round ended; the ``TuningProgress`` fields travel in ``extra``."""

    NAME: ClassVar[str] = EV_TUNING_PROGRESS
    OPTIONAL: ClassVar[dict[str, Any]] = {"index": int}
    index: Optional[int] = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class WarningEvent(Event):
    """Something the user should know that does not fail the request."""

    NAME: ClassVar[str] = EV_WARNING
    REQUIRED: ClassVar[dict[str, Any]] = {"message": str}
    OPTIONAL: ClassVar[dict[str, Any]] = {"index": int, "pass_id": str, "preflight": bool}
    message: str = ""
    index: Optional[int] = None
    pass_id: Optional[str] = None
    preflight: Optional[bool] = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class BuildProgress(Event):
    """A phase of a ``build_run`` request."""

    NAME: ClassVar[str] = EV_BUILD_PROGRESS
    REQUIRED: ClassVar[dict[str, Any]] = {"phase": str}
    OPTIONAL: ClassVar[dict[str, Any]] = {"message": str}
    phase: str = ""
    message: Optional[str] = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class GenericEvent(Event):
    """An event this module does not know (a handler module's own); its data is kept as it is."""

    event_name: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The event name."""
        return self.event_name

    def to_data(self) -> dict[str, Any]:
        """The data as received."""
        return dict(self.extra)


EVENT_TYPES: dict[str, type[Event]] = {
    cls.NAME: cls
    for cls in (Ready, Fatal, ModelLoaded, StepStarted, Nested, StepFinished, TuningProgressEvent, WarningEvent, BuildProgress)
}


def make_event(name: str, data: Optional[dict[str, Any]] = None) -> Event:
    """The typed event for ``name`` from its ``data`` dict (validated; :class:`MessageError` when bad)."""
    if not isinstance(name, str) or not name:
        raise MessageError(f"'event' must be a non-empty string, not {name!r}")
    cls = EVENT_TYPES.get(name)
    if cls is None:
        if not isinstance(data if data is not None else {}, dict):
            raise MessageError(f"event {name!r}: 'data' must be an object")
        return GenericEvent(event_name=name, extra=dict(data or {}))
    return cls.from_data({} if data is None else data)


@dataclass
class Notification:
    """An event of request ``id`` (``None``: of the engine itself)."""

    id: MessageId
    event: Event

    def to_json(self) -> dict[str, Any]:
        """The wire form."""
        return {"id": self.id, "event": self.event.name, "data": self.event.to_data()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Notification":
        """Validate and build; :class:`MessageError` when malformed."""
        req_id = _check_id(data)
        return cls(req_id, make_event(data.get("event"), data.get("data", {})))  # type: ignore[arg-type]


ClientMessage = Union[Request, Control]
EngineMessage = Union[Reply, ErrorReply, Notification]


def parse_client_message(data: Any) -> ClientMessage:
    """A client -> engine message (engine side); :class:`MessageError` when it is none."""
    if not isinstance(data, dict):
        raise MessageError(f"message must be an object, not {type(data).__name__}")
    if data.get("method") in CONTROL_METHODS:
        return Control.from_json(data)
    return Request.from_json(data)


def parse_engine_message(data: Any) -> EngineMessage:
    """An engine -> client message (client side); :class:`MessageError` when it is none."""
    if not isinstance(data, dict):
        raise MessageError(f"message must be an object, not {type(data).__name__}")
    kinds = [k for k in ("result", "error", "event") if k in data]
    if len(kinds) != 1:
        raise MessageError(f"message must have exactly one of 'result', 'error', 'event' (has {kinds or 'none'})")
    if kinds[0] == "result":
        return Reply.from_json(data)
    if kinds[0] == "error":
        return ErrorReply.from_json(data)
    return Notification.from_json(data)
