"""Plain messages (issue 12): SystemExit/KeyboardInterrupt in a custom step, a user pattern file with
annotate_codegen, a bad target in a pipeline file."""

from __future__ import annotations

import os

import pytest

from pipeline_model.consent import Consent
from pipeline_model.document import PipelineDocument, Step

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATTERN_FILE = os.path.join(ROOT, "resources", "patterns", "matmul_add_relu.py")


@pytest.mark.parametrize("source, expected", [
    ("def transform(mod):\n    raise SystemExit(4)\n", "line 2: raise SystemExit(4): the code raised SystemExit(4)"),
    ("def transform(mod):\n    raise KeyboardInterrupt\n", "line 2: raise KeyboardInterrupt: the code raised KeyboardInterrupt"),
    ("import sys\nsys.exit(3)\n", "line 2: sys.exit(3): the code raised SystemExit(3)"),
])
def test_exit_in_custom_step_is_a_plain_failure(engine, source, expected):
    doc = PipelineDocument(steps=[Step("relax.LegalizeOps"), Step("custom.python", {"source": source})])
    with engine.consented(Consent.everything()):
        result = engine.run(doc)
    failed = result.steps[1]
    assert failed.state == "failed" and result.error is None  # the engine survived: a step failure
    assert failed.error.startswith("step 2 (custom.python) failed: <custom step 2>: ")
    assert expected in failed.error and "must return an IRModule" in failed.error
    assert engine.run(PipelineDocument(steps=[Step("relax.LegalizeOps")])).ok  # same engine, still fine


def test_user_pattern_with_annotate_codegen_warns_before_the_run(engine):
    params = {"pattern_source": "file", "pattern_file": PATTERN_FILE, "annotate_codegen": True}
    doc = PipelineDocument(steps=[Step("relax.LegalizeOps", enabled=False), Step("relax.FuseOpsByPattern", params)])
    events = []
    with engine.consented(Consent.everything()):
        engine.run(doc, on_event=lambda name, data: events.append((name, data)))
    warnings = [d for n, d in events if n == "warning"]
    assert len(warnings) == 1 and warnings[0]["index"] == 1 and warnings[0].get("preflight")
    message = warnings[0]["message"]
    assert message.startswith("step 2 (relax.FuseOpsByPattern): annotate_codegen is on for a user pattern file")
    assert "VMShapeLower do not work for local functions" in message and "annotate_codegen off" in message
    first_step = [i for i, (n, _d) in enumerate(events) if n in ("step_started", "step_finished")][0]
    assert events.index(("warning", warnings[0])) < first_step  # before any step
    params["annotate_codegen"] = False
    events.clear()
    with engine.consented(Consent.everything()):
        engine.run(doc, on_event=lambda name, data: events.append((name, data)))
    assert not [d for n, d in events if n == "warning"]


def test_bad_target_in_a_pipeline_file_names_the_file(engine, tmp_path):
    from pipeline_model.fileformat import load_pipeline, save_pipeline

    path = tmp_path / "gpu.json"
    save_pipeline(PipelineDocument(target={"kind": "tpu-v9"}, steps=[Step("relax.LegalizeOps")]), path)
    result = engine.run(load_pipeline(path))
    assert result.error.startswith(f"{path}: bad target {{'kind': 'tpu-v9'}}")
