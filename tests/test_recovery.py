"""Recovery files (pipeline_model.recovery): atomic write, validated read, found after the writer is gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pipeline_model import recovery
from pipeline_model.document import PipelineDocument, Step


def test_round_trip_and_remove(tmp_path):
    doc = PipelineDocument(name="edited", steps=[Step("relax.FuseOps", {"fuse_opt_level": 2})])
    doc.path = str(tmp_path / "mine.json")
    path = recovery.write_recovery(doc, folder=str(tmp_path / "rec"))
    back = recovery.read_recovery(path)
    assert back.document.name == "edited" and back.document.steps[0].params == {"fuse_opt_level": 2}
    assert back.pipeline_path == os.path.abspath(doc.path) and back.pid == os.getpid()
    # Overwritten in place by the next autosave; no temp files left.
    doc.name = "edited again"
    assert recovery.write_recovery(doc, folder=str(tmp_path / "rec")) == path
    assert os.listdir(tmp_path / "rec") == [os.path.basename(path)]
    assert recovery.read_recovery(path).document.name == "edited again"
    assert recovery.remove_recovery(path) and not os.path.exists(path)
    assert not recovery.remove_recovery(str(tmp_path / "mine.json"))  # never a file of another naming


def test_unsaveable_document_is_not_written(tmp_path):
    doc = PipelineDocument(name="bad", build={"x": float("nan")})
    with pytest.raises(ValueError):
        recovery.write_recovery(doc, folder=str(tmp_path))
    assert os.listdir(tmp_path) == []


def test_damaged_files_are_reported_not_raised(tmp_path):
    folder = tmp_path / "rec"
    folder.mkdir()
    (folder / ("x" + recovery.SUFFIX)).write_text("{broken")
    (folder / ("y" + recovery.SUFFIX)).write_text(json.dumps({"format": recovery.FORMAT, "document": {"steps": 1}}))
    found, problems = recovery.find_recoveries(str(folder))
    assert found == [] and len(problems) == 2 and all(str(folder) in p for p in problems)


def test_found_after_the_writer_died(tmp_path):
    folder = str(tmp_path / "rec")
    code = ("import sys; from pipeline_model import recovery; from pipeline_model.document import PipelineDocument;"
            f"recovery.write_recovery(PipelineDocument(name='crashed'), folder={folder!r})")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, PYTHONPATH=root))
    found, problems = recovery.find_recoveries(folder)
    assert [r.document.name for r in found] == ["crashed"] and problems == []
    assert found[0].pipeline_path is None
