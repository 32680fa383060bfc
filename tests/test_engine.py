"""Engine tests: protocol framing, module cache, runs of the bundled pipelines, step cache, nested
passes, cancel, failures with the last good IR (shared session engine)."""

from __future__ import annotations

import json
import os
import threading

import pytest

from pipeline_model.consent import Consent
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.engine import protocol
from pipeline_model.engine.client import EngineClient, EngineUnavailable
from pipeline_model.engine.results import CANCELLED, CHANGED, FAILED, NOT_RUN, SKIPPED, UNCHANGED
from pipeline_model.engine.context import ModuleCache
from pipeline_model.engine.worker import ffi_version_problem
from pipeline_model.fileformat import load_pipeline

FUSION = [Step("relax.LegalizeOps"), Step("relax.AnnotateTIROpPattern"), Step("relax.FuseOps"), Step("relax.FuseTIR")]


def _doc(steps, model="builtin:mlp", target=None) -> PipelineDocument:
    return PipelineDocument(model=model, target=target or {"kind": "llvm"}, steps=[s.clone() for s in steps])


# ----------------------------------------------------------------------------------------- protocol


def test_protocol_round_trip_is_one_line():
    from pipeline_model.engine import messages

    msg = messages.Notification(3, messages.StepFinished(step={"script": "line1\nline2\n\"quoted\" é"}))
    data = protocol.encode(msg)
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert protocol.decode_engine(data) == msg
    assert protocol.decode(data) == {"id": 3, "event": "step_finished", "data": {"step": msg.event.step}}
    assert protocol.encode(messages.Request(1, "run", {"a": 1})) == b'{"id":1,"method":"run","params":{"a":1}}\n'


@pytest.mark.parametrize("line", [b"", b"not json", b"[1, 2]", b"\xff\xfe"])
def test_protocol_rejects_bad_lines(line):
    with pytest.raises(protocol.ProtocolError):
        protocol.decode(line)


# ----------------------------------------------------------------------------------------- cache


class _FakeMod:
    def __init__(self, n: int) -> None:
        self.n = n

    def script(self) -> str:
        return f"module {self.n}"


def test_module_cache_is_lru_bounded_by_count_and_bytes():
    cache = ModuleCache(max_entries=3, max_bytes=10**9)
    for i in range(4):
        cache.put(f"k{i}", _FakeMod(i))
    assert "k0" not in cache and len(cache) == 3
    cache.get("k1")  # now most recent
    cache.put("k4", _FakeMod(4))
    assert "k1" in cache and "k2" not in cache
    assert cache.script("k4") == "module 4"

    small = ModuleCache(max_entries=100, max_bytes=ModuleCache.MODULE_COST * 2 + 50)
    small.put("a", _FakeMod(0), "x" * 10)
    small.put("b", _FakeMod(1), "y" * 10)
    small.put("c", _FakeMod(2), "z" * 10)
    assert "a" not in small and "c" in small and small.nbytes <= small.max_bytes


def test_ffi_version_check():
    assert ffi_version_problem("0.1.14.post1") is None
    message = ffi_version_problem("0.1.15.post2")
    assert message and "0.1.15.post2" in message and "0.1.14.post1" in message
    assert ffi_version_problem("0.1.15") is not None


def test_engine_refuses_known_bad_ffi_version():
    client = EngineClient(env={"RPS_ENGINE_FAKE_FFI_VERSION": "0.1.15.post1"})
    try:
        with pytest.raises(EngineUnavailable, match="0.1.15.post1"):
            client.ping()
    finally:
        client.close()


# ----------------------------------------------------------------------------------------- runs


def test_ping_reports_versions(engine):
    info = engine.ping()
    assert info["tvm"].startswith("0.27") and info["tvm_ffi"] == "0.1.14.post1"
    assert info["pid"] > 0 and info["pid"] != os.getpid()
    assert {"ping", "run", "snapshot", "catalogue"} <= set(info["handlers"])


def test_catalogue_command(engine):
    data = engine.catalogue()
    text = json.dumps(data)
    for pass_id in ("relax.FuseOps", "pipeline.zero", "dlight.ApplyDefaultSchedule", "custom.python"):
        assert pass_id in text


def test_bundled_pipelines_run(engine, quick_bundled_pipelines):
    names = {os.path.basename(p) for p in quick_bundled_pipelines}
    assert {"dlight_cuda.json", "fusion_walkthrough.json", "cpu_build.json"} <= names
    for path in quick_bundled_pipelines:
        doc = load_pipeline(path)
        assert doc.name and doc.description
        result = engine.run(doc)
        assert result.ok, (path, result.error, [s.error for s in result.steps])
        assert all(s.state in (CHANGED, UNCHANGED) for s in result.steps), path
        assert all(s.script for s in result.steps)
        name = os.path.basename(path)
        if name == "dlight_cuda.json":
            final = result.final_script
            assert "threadIdx.x" in final and "blockIdx.x" in final
            assert result.steps[1].state == CHANGED  # DLight scheduled the PrimFuncs
            assert "threadIdx" not in result.steps[0].script
        if name == "fusion_walkthrough.json":
            assert "fused_" not in result.steps[1].script and "fused_" in result.steps[3].script
            assert "R.call_tir" in result.steps[0].script and "R.matmul" in result.input_script


def test_events_and_snapshot(engine):
    events = []
    result = engine.run(_doc(FUSION), on_event=lambda name, data: events.append((name, data)))
    assert result.ok
    names = [n for n, _ in events]
    assert names[0] == "model_loaded"
    finished = [d["step"]["index"] for n, d in events if n == "step_finished"]
    assert finished == [0, 1, 2, 3]
    for step in result.steps:
        assert step.snapshot_key and engine.snapshot(step.snapshot_key) == step.script
    assert engine.snapshot(result.input_key) == result.input_script


def test_cache_reuses_earlier_steps_after_edit_of_last(engine):
    steps = FUSION + [Step("relax.DeadCodeElimination")]
    first = engine.run(_doc(steps, model="builtin:transformer"))
    assert first.ok
    edited = _doc(steps, model="builtin:transformer")
    edited.steps[-1] = Step("relax.FoldConstant")
    second = engine.run(edited)
    assert second.ok
    assert [s.cached for s in second.steps] == [True, True, True, True, False]
    for a, b in zip(first.steps[:4], second.steps[:4]):
        assert a.script == b.script and a.state == b.state and a.snapshot_key == b.snapshot_key
    # Editing a parameter in the middle re-runs from that step on.
    edited.steps[2].params = {"fuse_opt_level": 0}
    third = engine.run(edited)
    assert [s.cached for s in third.steps] == [True, True, False, False, False]


def test_disabled_placeholder_and_until(engine):
    doc = _doc(FUSION)
    doc.steps[1].enabled = False
    doc.steps[2].placeholder = "unknown pass relax.Nope"
    result = engine.run(doc, until=2)
    states = [s.state for s in result.steps]
    assert states == [CHANGED, SKIPPED, SKIPPED, NOT_RUN]
    assert result.steps[1].script == result.steps[0].script == result.steps[2].script
    assert result.ok and result.final_script == result.steps[0].script


def test_nested_passes_of_a_composite_step(engine):
    result = engine.run(_doc([Step("pipeline.zero")]))
    assert result.ok
    nested = result.steps[0].nested
    names = [n.name for n in nested]
    for name in ("LegalizeOps", "AnnotateTIROpPattern", "FuseOps", "FuseTIR"):
        assert name in names
    assert nested[0].depth == 0 and max(n.depth for n in nested) >= 2
    legal = nested[names.index("LegalizeOps")]
    assert legal.changed and legal.script and "T.prim_func" in legal.script
    assert all((n.script is not None) == n.changed for n in nested)
    assert engine.snapshot(legal.snapshot_key) == legal.script
    # Plain passes do not report themselves as nested.
    assert engine.run(_doc([Step("relax.LegalizeOps")])).steps[0].nested == []


RAISING = """
import tvm

def transform(mod: tvm.IRModule) -> tvm.IRModule:
    raise ValueError("custom pass says no")
"""

SLEEPING = """
import time
import tvm

def transform(mod: tvm.IRModule) -> tvm.IRModule:
    time.sleep(%s)
    return mod
"""


def test_failing_step_reports_error_and_last_good_ir(engine):
    doc = _doc([FUSION[0], Step("custom.python", {"source": RAISING}), FUSION[1]])
    with engine.consented(Consent.everything()):
        result = engine.run(doc)
    assert not result.ok and result.failed_index == 1
    step = result.steps[1]
    assert step.state == FAILED and "step 2 (custom.python)" in step.error and "custom pass says no" in step.error
    assert step.traceback and "ValueError" in step.traceback
    assert result.last_good_script == result.steps[0].script
    assert result.steps[2].state == NOT_RUN


def test_untrusted_custom_code_fails_clearly(engine):
    doc = _doc([Step("custom.python", {"source": SLEEPING % 0})])
    result = engine.run(doc)
    assert result.failed_index == 0 and "trust" in result.steps[0].error
    assert result.last_good_script == result.input_script


def test_model_errors_are_run_errors(engine, tmp_path):
    result = engine.run(_doc(FUSION, model="builtin:nope"))
    assert not result.ok and "builtin:nope" in result.error and result.failed_index is None
    bad = tmp_path / "bad_script.py"
    bad.write_text("# from tvm.script import ir as I\n\n@I.ir_module\nclass Module:\n    def main(x:\n")
    result = engine.run(_doc(FUSION, model=str(bad)))  # without consent: refused, nothing ran
    assert str(bad) in result.error and "not trusted" in result.error
    with engine.consented(Consent.everything()):
        result = engine.run(_doc(FUSION, model=str(bad)))
    assert str(bad) in result.error and ":5" in result.error


def test_cancel_between_passes(engine):
    doc = _doc([Step("custom.python", {"source": SLEEPING % 1.5}), Step("pipeline.zero"), Step("relax.FuseTIR")])
    doc.steps[0].params["source"] += "\n# cancel test\n"
    timer = threading.Timer(0.7, engine.cancel)  # from another thread, like the GUI
    started = []

    def on_event(name, data):
        if name == "step_started" and not started:
            started.append(data)
            timer.start()

    with engine.consented(Consent.everything()):
        result = engine.run(doc, on_event=on_event)
    timer.join()
    assert result.cancelled and not result.ok and result.failed_index is None
    assert result.steps[0].state in (CHANGED, UNCHANGED, CANCELLED)
    assert result.steps[1].state == CANCELLED and result.steps[2].state == NOT_RUN
    # The engine is fine afterwards, and a new run is not cancelled.
    assert engine.run(_doc(FUSION[:1])).ok


def test_known_scripts_are_not_sent_again(engine):
    doc = _doc(FUSION)
    first = engine.run(doc)
    args = EngineClient.run_args(doc)
    args["known_keys"] = [first.input_key, first.steps[0].snapshot_key]
    raw = engine.request("run", args)
    assert raw["input_script"] is None and raw["steps"][0]["script"] is None
    assert raw["steps"][1]["script"] == first.steps[1].script
    # The client fills what it left out, so callers always see full scripts.
    again = engine.run(doc)
    assert [s.script for s in again.steps] == [s.script for s in first.steps]
    assert again.input_script == first.input_script


def test_scripts_on_demand_keep_keys_states_and_texts(engine):
    """``scripts=False``: nothing is printed or sent for the steps, change detection stays structural
    (same states and keys as a run with texts), and ``snapshot`` prints a step's text on demand."""
    doc = _doc(FUSION + [Step("relax.DeadCodeElimination")], model="builtin:transformer")
    engine.request("cache_clear", {})
    engine.forget_scripts()
    events = []
    lazy = engine.run(doc, scripts=False, on_event=lambda name, data: events.append((name, data)))
    assert lazy.ok and lazy.input_script is None and lazy.input_key
    assert all(s.script is None and s.snapshot_key for s in lazy.steps)
    assert [d["input_script"] for n, d in events if n == "model_loaded"] == [None]
    assert all(d["step"]["script"] is None for n, d in events if n == "step_finished")
    texts = {key: engine.snapshot(key) for key in [lazy.input_key] + [s.snapshot_key for s in lazy.steps]}
    full = engine.run(doc)  # every step from the cache, texts printed now
    assert all(s.cached for s in full.steps)
    assert [(s.state, s.snapshot_key) for s in full.steps] == [(s.state, s.snapshot_key) for s in lazy.steps]
    assert [s.state for s in lazy.steps] == [CHANGED, CHANGED, CHANGED, CHANGED, UNCHANGED]
    assert texts[lazy.input_key] == full.input_script and "R.matmul" in full.input_script
    for step in full.steps:
        assert texts[step.snapshot_key] == step.script
    # A composite step: changed nested passes carry keys whose texts come on demand.
    nested = engine.run(_doc([Step("pipeline.zero")], model="builtin:mlp"), scripts=False).steps[0].nested
    legal = next(n for n in nested if n.name == "LegalizeOps")
    assert legal.changed and legal.script is None and "T.prim_func" in engine.snapshot(legal.snapshot_key)
    # A failed step still brings its last good IR (the error view shows it).
    failing = _doc([FUSION[0], Step("custom.python", {"source": RAISING})])
    with engine.consented(Consent.everything()):
        result = engine.run(failing, scripts=False)
    assert result.failed_index == 1 and "T.prim_func" in (result.last_good_script or "")


def test_cache_clear(engine):
    engine.run(_doc(FUSION[:1]))
    assert engine.request("cache_clear", {})["dropped"] >= 1
    assert engine.ping()["cache_entries"] == 0
    result = engine.run(_doc(FUSION[:1]))
    assert result.ok and not result.steps[0].cached


def test_module_cache_charges_modules_without_text_by_their_size():
    """Runs print texts on demand: a cached module without text is still charged about what its text
    would weigh (the byte bound keeps holding), and printing it replaces the estimate."""
    from pipeline_model.engine.context import estimated_text_size
    from pipeline_model.importers.load_tvm import load_model

    mod = load_model("builtin:transformer").mod
    text = mod.script()
    estimate = estimated_text_size(mod)
    assert 0.5 * len(text) <= estimate <= 2 * len(text)
    cache = ModuleCache(max_entries=None, max_bytes=ModuleCache.MODULE_COST * 2 + 3 * estimate)
    cache.put("a", mod)
    assert cache.nbytes == ModuleCache.MODULE_COST + 2 * estimate
    cache.put("b", mod)  # two modules' estimates exceed the bound: the oldest goes
    assert "a" not in cache and "b" in cache
    assert cache.script("b") == text and cache.nbytes == ModuleCache.MODULE_COST + 2 * len(text)
