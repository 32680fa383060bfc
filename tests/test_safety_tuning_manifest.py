"""Tuning work directories: re-tune deletes only the files the app wrote (its manifest), never the user's."""

from __future__ import annotations

import os

import pytest

from pipeline_model.passkinds.metaschedule import script
from pipeline_model.passkinds.metaschedule.script import MANIFEST_FILE, TuningConfigError, read_manifest, track_work_dir, wipe_work_dir


def _write(path, text="x"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


def test_retune_keeps_user_files(tmp_path):
    work = str(tmp_path / "work")
    user = [os.path.join(work, "logs", "mine.txt"), os.path.join(work, "database_x.json"), os.path.join(work, "notes.md")]
    for path in user:
        _write(path, "user data")
    # A tuning run writes its database, state and task logs.
    with track_work_dir(work):
        for name in ("database_workload.json", "database_tuning_record.json", script.STATE_FILE,
                     os.path.join("logs", "task_0.log")):
            _write(os.path.join(work, name), "app data")
    listed = read_manifest(work)
    assert "database_workload.json" in listed and "logs/task_0.log" in listed
    assert not any(p in listed for p in ("logs/mine.txt", "database_x.json", "notes.md"))
    wipe_work_dir(work)
    for path in user:
        assert open(path).read() == "user data"
    for name in ("database_workload.json", "database_tuning_record.json", script.STATE_FILE, "logs/task_0.log"):
        assert not os.path.exists(os.path.join(work, name))
    # A second tuning after the wipe records its files again (they existed before, were wiped, came back).
    with track_work_dir(work):
        wipe_work_dir(work)
        _write(os.path.join(work, "database_workload.json"), "again")
    assert "database_workload.json" in read_manifest(work)


def test_retune_never_deletes_a_database_it_did_not_write(tmp_path):
    work = str(tmp_path / "w")
    _write(os.path.join(work, "database_tuning_record.json"), "someone else's records")
    with pytest.raises(TuningConfigError, match="not written by this app"):
        wipe_work_dir(work)
    assert open(os.path.join(work, "database_tuning_record.json")).read() == "someone else's records"


def test_manifest_entries_outside_the_work_dir_are_ignored(tmp_path):
    outside = tmp_path / "precious.txt"
    outside.write_text("keep")
    work = str(tmp_path / "w")
    os.makedirs(work)
    os.symlink(str(outside), os.path.join(work, "link.txt"))
    script.write_manifest(work, ["../precious.txt", str(outside), "link.txt"])
    wipe_work_dir(work)
    assert outside.read_text() == "keep"
    assert os.path.islink(os.path.join(work, "link.txt"))
    assert not [n for n in os.listdir(work) if n.endswith(".rps-tmp")]
    assert os.path.exists(os.path.join(work, MANIFEST_FILE))
