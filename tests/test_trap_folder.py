"""The folder you run from is not code (issue 20): modules named like libraries planted in the current folder
(``numpy.py``, ``tvm.py``, ``json.py`` …) are never imported by the app's child processes — each plant writes
a marker file when imported, and no marker may appear."""

from __future__ import annotations

import os

import pytest

from pipeline_model import child_process

#: Library names an app child imports early (each one planted as a module that leaves a marker when imported).
PLANTED = ("numpy", "tvm", "json", "pickle", "struct", "select", "difflib", "psutil", "tvm_ffi", "site_customize",
           "sitecustomize", "usercustomize", "pipeline_model", "encodings")


def plant(folder) -> str:
    """Plant the trap modules in ``folder``; returns the marker folder."""
    markers = os.path.join(str(folder), "markers")
    os.makedirs(markers, exist_ok=True)
    for name in PLANTED:
        path = os.path.join(str(folder), f"{name}.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(f"open({os.path.join(markers, name)!r}, 'w').write('imported')\n")
    return markers


def test_child_env_and_command(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["", ".", "rel/dir", "/abs/one", "/abs/one"]))
    env = child_process.child_env()
    assert env["PYTHONSAFEPATH"] == "1"
    assert env["PYTHONPATH"].split(os.pathsep) == [child_process.APP_ROOT, "/abs/one"]
    assert child_process.python_command("x.y", "--a")[1:] == ["-P", "-m", "x.y", "--a"]


def test_diff_process_ignores_modules_in_the_current_folder(tmp_path, monkeypatch):
    from pipeline_model.diff_process import DiffProcess

    markers = plant(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([".", ""]))
    proc = DiffProcess()
    try:
        result = proc.structure("a\nb\n" * 50, "a\nc\n" * 50)
        assert result is not None
    finally:
        proc.close()
    assert os.listdir(markers) == [], "the diff process imported a planted module"


@pytest.mark.parametrize("where", ["cwd"])
def test_plants_do_import_without_the_rule(tmp_path, monkeypatch, where):
    """The trap is real: a plain ``python -m`` child imports the planted module (so the tests above can fail)."""
    import subprocess
    import sys

    markers = plant(tmp_path)
    subprocess.run([sys.executable, "-m", "json.tool", "--help"], cwd=tmp_path, capture_output=True, timeout=60)
    assert "json" in os.listdir(markers)
