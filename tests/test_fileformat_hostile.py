"""Hostile pipeline files give clean errors naming the place (issue 9), saves keep a backup and leave
no temp files."""

from __future__ import annotations

import json
import os
import threading

import pytest

from pipeline_model import fileformat
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.fileformat import PipelineFileError, load_pipeline, loads_pipeline, save_pipeline


def _text(**changes) -> str:
    data = fileformat.pipeline_to_json(PipelineDocument(name="h", steps=[Step("relax.FuseOps", {"n": 1})]))
    data.update(changes)
    return json.dumps(data, indent=2)


def _error(text: str) -> PipelineFileError:
    with pytest.raises(PipelineFileError) as info:
        loads_pipeline(text, source="h.json")
    return info.value


def test_huge_integer_names_the_line():
    text = _text(build={"x": 0}).replace('"x": 0', '"x": ' + "9" * 5000)
    err = _error(text)
    assert "5000 digits" in err.reason and err.line == text[: text.index("9999")].count("\n") + 1


def test_int64_overflow_names_the_path():
    err = _error(_text(target={"kind": "llvm", "num-cores": 2**64}))
    assert err.json_path == 'target["num-cores"]' and "64 bits" in err.reason and err.line is not None


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused(literal):
    text = _text(build={"x": 0}).replace('"x": 0', f'"x": {literal}')
    err = _error(text)
    assert err.line is not None and ("NaN" in err.reason or "Infinity" in err.reason)


def test_lone_surrogate_names_the_path():
    text = _text(name="ok").replace('"name": "ok"', '"name": "a\\ud800b"')
    err = _error(text)
    assert err.json_path == "name" and "surrogate" in err.reason


def test_duplicate_keys_are_refused_with_the_line():
    text = '{\n "format": "relax-pipeline-studio.pipeline",\n "version": 1,\n "name": "a",\n "name": "b"\n}'
    err = _error(text)
    assert "duplicate key 'name'" in err.reason and err.line == 5


def test_deep_nesting_is_refused():
    text = _text(build={"x": 0}).replace('"x": 0', '"x": ' + "[" * 500 + "]" * 500)
    err = _error(text)
    assert "nested more than" in err.reason and err.line is not None
    assert "64" in err.reason


def test_special_files_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "p.json"
    os.mkfifo(fifo)
    outcome = {}

    def load():
        try:
            load_pipeline(str(fifo))
        except PipelineFileError as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(30)  # a guard only: a blocking read would never return
    assert not thread.is_alive() and "FIFO" in str(outcome["error"])
    for special in ("/dev/zero", "/proc/self/status", str(tmp_path)):
        with pytest.raises(PipelineFileError) as info:
            load_pipeline(special)
        assert special in str(info.value)


def test_file_size_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(fileformat, "MAX_FILE_BYTES", 1000)
    path = tmp_path / "big.json"
    path.write_text(_text(description="x" * 5000))
    with pytest.raises(PipelineFileError) as info:
        load_pipeline(str(path))
    assert "1,000 bytes" in str(info.value)


def test_saving_unsaveable_values_fails_before_touching_the_file(tmp_path):
    path = tmp_path / "p.json"
    save_pipeline(PipelineDocument(name="old"), path)
    before = path.read_bytes()
    for bad in (float("nan"), 2**70, "a\ud800"):
        with pytest.raises(ValueError):
            save_pipeline(PipelineDocument(name="new", build={"x": bad}), path)
        assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["p.json"]


def test_save_keeps_backup_and_cleans_only_its_own_stale_temp_files(tmp_path):
    path = tmp_path / "p.json"
    save_pipeline(PipelineDocument(name="v1"), path)
    stale = tmp_path / ".p.json.abcd1234.rps-tmp"  # left by a save killed with SIGKILL
    stale.write_text("partial")
    old = tmp_path / ".p.json.zzzz9999.tmp"  # the older naming of the app's temp files
    old.write_text("partial")
    foreign = [tmp_path / ".p.json.mine.tmp", tmp_path / ".other.json.abcd1234.rps-tmp", tmp_path / "p.json.tmp"]
    for f in foreign:
        f.write_text("user")
    for f in (stale, old):
        os.utime(f, (1, 1))
    save_pipeline(PipelineDocument(name="v2"), path)
    assert load_pipeline(str(path)).name == "v2"
    assert load_pipeline(str(tmp_path / "p.json.bak")).name == "v1"
    assert not stale.exists() and not old.exists()
    assert all(f.read_text() == "user" for f in foreign)
