"""Session-wide MetaSchedule fixtures (a pytest plugin loaded by ``tests/conftest.py``).

Real tuning costs tens of seconds on the 2-core machine, so the suite tunes the bundled
``tuning_mlp_cpu.json`` pipeline **once**, through the real engine (``tuned_mlp``), and every test
that only needs "a work directory with a tuned database" gets its own copy of it
(:func:`copy_tuned_work_dir`). ``tests/test_tuning_engine.py`` checks that run end to end (progress
events, tuning and apply reports, numerics); the other tuning tests check reuse, stop, retune and the
passes against copies of its database.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from typing import Any

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUNING_PIPELINE = os.path.join(ROOT, "resources", "pipelines", "tuning_mlp_cpu.json")
#: Index of the MetaScheduleTuneTIR step in ``tuning_mlp_cpu.json`` (the apply step follows it).
TUNE_STEP = 4
#: The per-task trial budget of the session tuning (the pipeline's ``max_trials_global``). A later
#: tuning with a budget up to this one reuses the database; a larger one tunes again.
TUNED_BUDGET = 4


@dataclass
class TunedRun:
    """The session's one real tuning run: the document, its result, its events and its work dir."""

    doc: Any
    result: Any
    events: list[tuple[str, dict]] = field(default_factory=list)
    work_dir: str = ""


def tuning_document(path: str | None = None, **tune_params: Any) -> Any:
    """``tuning_mlp_cpu.json`` (saved as ``path`` when given, so the default work dir is next to it)
    with other parameters for its tuning step."""
    from pipeline_model.fileformat import load_pipeline, save_pipeline

    doc = load_pipeline(TUNING_PIPELINE)
    doc.steps[TUNE_STEP].params.update(tune_params)
    if path is not None:
        save_pipeline(doc, path)
        doc = load_pipeline(path)
    return doc


def copy_tuned_work_dir(tuned: TunedRun, dest: str) -> str:
    """A private copy of the session's tuned work dir at ``dest`` (tests may add to or wipe it)."""
    shutil.copytree(tuned.work_dir, dest)
    return dest


@pytest.fixture(scope="session")
def tuned_mlp(engine, tmp_path_factory) -> TunedRun:
    """Runs ``tuning_mlp_cpu.json`` (4 trials) once through the session engine, work dir in a session
    temporary folder. Read-only for tests: copy the work dir with :func:`copy_tuned_work_dir`."""
    work_dir = str(tmp_path_factory.mktemp("tuned_mlp") / "wd")
    doc = tuning_document()
    doc.build = {"work_dir": work_dir}
    assert doc.steps[TUNE_STEP].params["max_trials_global"] == TUNED_BUDGET
    events: list[tuple[str, dict]] = []
    result = engine.run(doc, on_event=lambda ev, data: events.append((ev, data)))
    assert result.ok, (result.error, [s.error for s in result.steps])
    return TunedRun(doc=doc, result=result, events=events, work_dir=work_dir)
