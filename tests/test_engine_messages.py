"""Typed engine messages (pipeline_model.engine.messages): round trips and rejection of malformed ones."""

from __future__ import annotations

import pytest

from pipeline_model.engine import messages, protocol
from pipeline_model.engine.messages import MessageError

ROUND_TRIP = [
    messages.Request(1, "run", {"model": "builtin:mlp", "steps": []}),
    messages.Request(2, "ping"),
    messages.Control(7, "cancel"),
    messages.Control(7, "stop_tuning"),
    messages.Control(None, "shutdown"),
    messages.Reply(3, {"steps": [1, 2]}),
    messages.ErrorReply.make(4, "boom", "Traceback ...", code=messages.HANDLER_ERROR),
    messages.ErrorReply(5, messages.ErrorInfo(messages.CONSENT_REQUIRED, "no consent", {"files": [{"path": "m.py"}]})),
    messages.Notification(None, messages.Ready(pid=12, tvm="0.27", tvm_ffi="0.1.14", handler_modules=["x"], startup_ms=3.5)),
    messages.Notification(None, messages.Fatal(message="bad ffi")),
    messages.Notification(6, messages.ModelLoaded(input_key="k", input_script=None, source="s")),
    messages.Notification(6, messages.StepStarted(index=0, uid="u", pass_id="relax.FuseOps")),
    messages.Notification(6, messages.StepStarted(index=1, uid="u", pass_id="p", timeout_s=2.5)),
    messages.Notification(6, messages.Nested(index=0, nested={"name": "x", "changed": True})),
    messages.Notification(6, messages.StepFinished(step={"index": 0, "state": "changed"})),
    messages.Notification(6, messages.TuningProgressEvent(index=4, extra={"done": 3, "total": 8})),
    messages.Notification(6, messages.WarningEvent(message="careful", index=1, pass_id="p", preflight=True)),
    messages.Notification(6, messages.BuildProgress(phase="compile", message="compiling")),
    messages.Notification(6, messages.GenericEvent(event_name="my_event", extra={"a": [1]})),
]


@pytest.mark.parametrize("msg", ROUND_TRIP, ids=lambda m: type(m).__name__)
def test_round_trip_through_a_line(msg):
    line = protocol.encode(msg)
    assert line.count(b"\n") == 1
    if isinstance(msg, (messages.Request, messages.Control)):
        back = protocol.decode_client(line)
    else:
        back = protocol.decode_engine(line)
    assert back == msg
    assert type(back) is type(msg)
    assert protocol.decode(protocol.encode(back)) == msg.to_json()


def test_event_data_keeps_unknown_fields_and_the_callback_shape():
    event = messages.make_event("step_started", {"index": 2, "uid": "a", "pass_id": "p", "future": 1})
    assert isinstance(event, messages.StepStarted) and event.index == 2
    assert event.to_data() == {"index": 2, "uid": "a", "pass_id": "p", "future": 1}
    assert messages.make_event("model_loaded", {"input_key": "k"}).to_data()["input_script"] is None


BAD_ENGINE = [
    {"id": 1},  # no kind
    {"id": 1, "result": {}, "error": {"code": 1, "message": "x"}},  # two kinds
    {"result": {}},  # no id
    {"id": "1", "result": {}},  # id not an int
    {"id": True, "result": {}},  # bool is not an id
    {"id": 1, "result": [1]},
    {"id": 1, "error": "boom"},
    {"id": 1, "error": {"message": "no code"}},
    {"id": 1, "error": {"code": "x", "message": "m"}},
    {"id": 1, "event": "step_started", "data": {}},  # index missing
    {"id": 1, "event": "step_started", "data": {"index": "0"}},
    {"id": 1, "event": "step_started", "data": {"index": 0, "timeout_s": "5"}},
    {"id": 1, "event": "step_finished", "data": {"step": []}},
    {"id": 1, "event": "nested", "data": {"index": 0}},
    {"id": 1, "event": "warning", "data": {"index": 0}},
    {"id": 1, "event": "warning", "data": {"message": "m", "preflight": "yes"}},
    {"id": None, "event": "ready", "data": {}},
    {"id": None, "event": "fatal", "data": {"message": 3}},
    {"id": 1, "event": "", "data": {}},
    {"id": 1, "event": 5, "data": {}},
    {"id": 1, "event": "custom", "data": [1]},
    {"id": 1, "event": "model_loaded", "data": None},
    [1, 2],
]


@pytest.mark.parametrize("data", BAD_ENGINE)
def test_malformed_engine_messages_are_rejected(data):
    with pytest.raises(MessageError):
        messages.parse_engine_message(data)


BAD_CLIENT = [
    {"id": 1, "cmd": "run", "args": {}},  # the old field names
    {"id": 1, "method": "run", "params": [1]},
    {"id": None, "method": "run"},
    {"method": "run"},
    {"id": 1, "method": ""},
    {"id": 1, "method": 3},
    {"id": None, "method": "cancel"},  # cancel needs the request's id
    {"id": "x", "method": "stop_tuning"},
    "run",
]


@pytest.mark.parametrize("data", BAD_CLIENT)
def test_malformed_client_messages_are_rejected(data):
    with pytest.raises(MessageError):
        messages.parse_client_message(data)


@pytest.mark.parametrize("line", [b"", b"not json", b"[1, 2]", b"\xff\xfe", b"[" * 5000 + b"]" * 5000,
                                  b'{"id": 1, "method": "cancel", "params": 1}x'])
def test_bad_lines_are_protocol_errors(line):
    with pytest.raises(protocol.ProtocolError):
        protocol.decode_client(line)
    with pytest.raises(protocol.ProtocolError):
        protocol.decode_engine(line)


def test_worker_dispatch_answers_typed_errors():
    from pipeline_model.engine.context import WorkerContext
    from pipeline_model.engine.worker import dispatch

    ctx = WorkerContext()
    reply = dispatch(messages.Request(9, "no_such_command"), ctx)
    assert isinstance(reply, messages.ErrorReply) and reply.error.code == messages.METHOD_NOT_FOUND
    assert "no_such_command" in reply.error.message
    bad = dispatch({"id": 9, "cmd": "ping"}, ctx)
    assert isinstance(bad, messages.ErrorReply) and bad.error.code == messages.INVALID_REQUEST


def test_request_consent_unions_the_nested_run_arguments_of_build_requests():
    from pipeline_model.engine.worker import request_consent

    assert request_consent({}) == {}
    assert request_consent({"run": {"trusted_hashes": ["a"]}}) == {"trusted_hashes": ["a"]}
    both = request_consent({"a": {"run": {"trusted_hashes": ["a", "b"]}}, "b": {"run": {"trusted_hashes": ["c"]}}})
    assert both == {"trusted_hashes": ["a", "b", "c"]}
    many = request_consent({"modules": [{"run": {"trust_custom_code": True}}, {"run": {}}]})
    assert many == {"trust_all": True}
