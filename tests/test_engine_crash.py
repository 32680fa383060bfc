"""Engine robustness: a custom pass that really segfaults, one that hangs past the watchdog, and a crash
outside a step. Each test uses its own EngineClient (the engine gets killed)."""

from __future__ import annotations

import pytest

from pipeline_model.consent import Consent
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.engine.client import EngineClient, EngineCrashed
from pipeline_model.engine.results import CHANGED, FAILED, NOT_RUN

SEGFAULT = """
import ctypes
import tvm

def transform(mod: tvm.IRModule) -> tvm.IRModule:
    ctypes.string_at(0)  # reads address 0: SIGSEGV
    return mod
"""

HANG = """
import time
import tvm

def transform(mod: tvm.IRModule) -> tvm.IRModule:
    time.sleep(120)
    return mod
"""


def _doc(custom_source: str) -> PipelineDocument:
    return PipelineDocument(
        model="builtin:mlp",
        steps=[Step("relax.LegalizeOps"), Step("custom.python", {"source": custom_source}), Step("relax.FuseOps")],
    )


@pytest.fixture(scope="module")
def own_client():
    """One client for this module: every test kills its engine, the client restarts it."""
    client = EngineClient(step_timeout_s=300.0, consent=Consent.everything())  # the tests' custom code runs
    yield client
    client.close()


def test_segfaulting_pass_fails_its_step_and_engine_restarts(own_client):
    pid_before = own_client.ping()["pid"]
    seen = []
    result = own_client.run(_doc(SEGFAULT), on_event=lambda n, d: seen.append(n))
    assert result.failed_index == 1 and not result.ok
    step = result.steps[1]
    assert step.state == FAILED
    assert step.error.startswith("the engine crashed (signal SIGSEGV) while running step 2 (custom.python)")
    assert result.steps[0].state == CHANGED and result.steps[2].state == NOT_RUN
    assert result.last_good_script == result.steps[0].script and "T.prim_func" in result.last_good_script
    assert seen[-1] == "step_finished"
    # A fresh engine serves the next requests.
    info = own_client.ping()
    assert info["pid"] != pid_before
    again = own_client.run(PipelineDocument(model="builtin:mlp", steps=[Step("relax.LegalizeOps")]))
    assert again.ok and again.steps[0].state == CHANGED


def test_hanging_pass_hits_the_watchdog(own_client):
    pid_before = own_client.ping()["pid"]
    result = own_client.run(_doc(HANG), step_timeout_s=2.0)
    step = result.steps[1]
    assert step.state == FAILED and result.failed_index == 1
    assert step.error == "step 2 (custom.python) did not finish within 2 s; the engine was restarted"
    assert result.steps[0].state == CHANGED
    assert own_client.ping()["pid"] != pid_before
    assert own_client.run(PipelineDocument(model="builtin:mlp", steps=[Step("relax.FuseOps")])).ok


def test_crash_outside_a_step(own_client, tmp_path):
    model = tmp_path / "crashing_model.py"
    model.write_text(
        "import ctypes\nfrom tvm.relax.frontend import nn\nctypes.string_at(0)\nmodel = None\nspec = {}\n"
    )
    doc = PipelineDocument(model=str(model), steps=[Step("relax.LegalizeOps")])
    # Through request(): EngineCrashed with no step.
    with pytest.raises(EngineCrashed) as info:
        own_client.request("run", EngineClient.run_args(doc))
    assert info.value.exit_code == -11 and info.value.last_step is None
    assert "SIGSEGV" in info.value.message and "'run' request" in info.value.message
    # Through run(): a run-level error, no failed step.
    result = own_client.run(doc)
    assert result.failed_index is None and "SIGSEGV" in result.error
    assert [s.state for s in result.steps] == [NOT_RUN]
    assert own_client.ping()["tvm_ffi"] == "0.1.14.post1"


def test_engine_killed_while_idle_restarts_silently(own_client):
    import os
    import signal

    pid = own_client.ping()["pid"]
    os.kill(pid, signal.SIGKILL)
    import time

    time.sleep(0.3)
    assert own_client.ping()["pid"] != pid
