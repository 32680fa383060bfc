"""The engine client's parts without TVM (issue 17): the one :class:`Deadline` of a request and the events
that switch or restart it, and the client's consent attached to every request that may run code. The
client talks to a scripted stand-in engine (a few lines of Python speaking the protocol), so what is
checked is what really goes over the pipe."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest

from pipeline_model.consent import Consent
from pipeline_model.engine import messages
from pipeline_model.engine.client import EngineClient, EngineCrashed
from pipeline_model.engine.request_loop import Deadline, Limits

LIMITS = Limits(model_s=30.0, step_s=60.0, silence_s=5.0)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _event(name: str, **data):
    return messages.make_event(name, data)


def test_deadline_phases_follow_the_events():
    clock = Clock()
    run = Deadline("run", {"model": "m.py"}, LIMITS, clock)
    assert run.phase == Deadline.LOADING and run.remaining() == 30.0
    clock.now += 31
    assert run.expired() and run.overrun_message() == "model 'm.py' did not finish loading within 30 s"
    assert run.subject() == "loading model 'm.py' in the 'run' request"
    warning = _event("warning", message="slow")
    run.observe(warning, warning.to_data())  # a warning while loading does not extend the model's limit
    assert run.expired()

    loaded = _event("model_loaded", input_key="k")
    run.observe(loaded, loaded.to_data())
    assert run.phase == Deadline.WAITING and run.remaining() == 5.0
    started = _event("step_started", index=2, pass_id="relax.FuseOps", timeout_s=7)
    run.observe(started, started.to_data())
    assert run.phase == Deadline.STEP and run.remaining() == 7.0 and run.step["index"] == 2
    clock.now += 6
    run.observe(warning, warning.to_data())  # only tuning progress keeps a step alive
    assert run.remaining() == 1.0
    progress = _event("tuning_progress", index=2)
    run.observe(progress, progress.to_data())
    assert run.remaining() == 7.0
    clock.now += 8
    assert run.overrun_message() == "step 3 (relax.FuseOps) did not finish within 7 s"
    assert run.subject() == "step 3 (relax.FuseOps)"
    finished = _event("step_finished", step={"index": 2})
    run.observe(finished, finished.to_data())
    assert run.phase == Deadline.WAITING and run.step is None and run.remaining() == 5.0

    other = Deadline("build_run", {}, LIMITS, clock)
    assert other.phase == Deadline.WAITING and other.remaining() == 5.0
    clock.now += 4
    other.observe(warning, warning.to_data())  # any sign of life restarts a request's silence limit
    assert other.remaining() == 5.0
    started = _event("step_started", index=0, pass_id="p")
    other.observe(started, started.to_data())
    assert other.remaining() == 60.0  # the run's step limit when the event names none
    assert other.overrun_message() == "step 1 (p) did not finish within 60 s"


ENGINE = textwrap.dedent("""
    import json, sys, time

    def send(obj):
        sys.stdout.write(json.dumps(obj) + "\\n")
        sys.stdout.flush()

    for line in sys.stdin:
        msg = json.loads(line)
        method, req_id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method == "shutdown":
            break
        if method in ("cancel", "stop_tuning"):
            continue
        if method == "silent":
            time.sleep(60)
        if method == "step":
            send({"id": req_id, "event": "step_started",
                  "data": {"index": 0, "pass_id": "p", "timeout_s": params["timeout_s"]}})
            for _ in range(params["beats"]):
                time.sleep(params["beat_s"])
                send({"id": req_id, "event": "tuning_progress", "data": {"index": 0}})
            time.sleep(60)
        send({"id": req_id, "result": {"params": params}})
""")


@pytest.fixture
def scripted(tmp_path):
    """An EngineClient whose engine is the scripted stand-in above."""
    script = tmp_path / "engine.py"
    script.write_text(ENGINE)
    launcher = tmp_path / "python"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {script}\n")
    os.chmod(launcher, 0o755)
    client = EngineClient(python=str(launcher), memory_limit=0, step_timeout_s=30.0, request_timeout_s=60.0)
    yield client
    client.close()


CODE_COMMANDS = ["run", "build_run", "compare", "profile", "export_library", "tune", "a_plugin_command"]


def test_consent_goes_with_every_request_that_may_run_code(scripted):
    def sent(cmd: str) -> dict:
        return scripted.request(cmd, {"x": 1, "trust_all": True})["params"]

    for cmd in CODE_COMMANDS:  # nothing consented: the client's (empty) consent wins over a hand-set field
        assert sent(cmd) == {"x": 1, "trust_all": False}, cmd
    with scripted.consented(Consent.everything()):
        assert all(sent(cmd)["trust_all"] is True for cmd in CODE_COMMANDS)
        with scripted.consented(Consent(hashes=["b", "a"])):
            assert all(sent(cmd)["trusted_hashes"] == ["a", "b"] and not sent(cmd)["trust_all"]
                       for cmd in CODE_COMMANDS)
        assert scripted.consent.trust_all
    assert not scripted.consent.trust_all  # the block's consent ended with it
    scripted.consent.grant(["c"])  # what the GUI's consent service does when the user consents
    assert sent("build_run")["trusted_hashes"] == ["c"]
    for cmd in sorted(messages.CODE_FREE_METHODS):
        assert sent(cmd) == {"x": 1, "trust_all": True}, f"{cmd} carries consent fields"


def test_one_deadline_bounds_silence_and_steps(scripted):
    scripted.ping()
    pid = scripted.pid
    scripted.request_timeout_s = 0.6  # short only for the request that must time out
    try:
        with pytest.raises(EngineCrashed) as silent:
            scripted.request("silent", {})
    finally:
        scripted.request_timeout_s = 60.0  # what follows runs under a normal limit (a loaded machine)
    assert silent.value.timed_out
    assert silent.value.message == "the 'silent' request did not answer within 0.6 s; the engine was restarted"
    assert scripted.pid != pid and scripted.restarts == 1

    # A step's limit comes with its step_started event; tuning progress restarts it: 5 beats of 0.5 s outlive
    # a 2 s limit (each gap leaves 1.5 s to spare on a loaded machine), then silence ends the step.
    beats: list[int] = []
    with pytest.raises(EngineCrashed) as step:
        scripted.request("step", {"timeout_s": 2.0, "beats": 5, "beat_s": 0.5},
                         on_event=lambda name, data: beats.append(1) if name == "tuning_progress" else None)
    assert len(beats) == 5  # every beat arrived: each restarted the limit (2.5 s of beats outlived 2 s)
    assert step.value.message == "step 1 (p) did not finish within 2 s; the engine was restarted"
    assert step.value.last_step["pass_id"] == "p"
    assert scripted.request("run", {})["params"]["trust_all"] is False  # the fresh engine answers
