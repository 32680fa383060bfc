"""Model archives are code unless their pickles are safe (issue 20): a ``.pt2`` whose weights or sample inputs
are crafted pickles runs nothing without consent — CLI ``run`` (pipeline file and ``--model``), ``compare``, and
the GUI's open paths (File ▸ Open, Open Recent, drop) ask first, showing what the pickles would run; a plain
archive is data and needs no consent. Consent and load read the same bytes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.test_pickle_scan import evil_archives, pt2  # noqa: F401 - the fixture

FUSION = os.path.join(ROOT, "resources", "pipelines", "fusion_walkthrough.json")


def _cli(*args, cwd):
    return subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd, stdin=subprocess.DEVNULL)


def _pipeline(folder, model: str) -> str:
    path = os.path.join(str(folder), "p.json")
    with open(FUSION, encoding="utf-8") as fh:
        data = json.load(fh)
    data["model"] = model
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    return path


@pytest.mark.e2e
def test_cli_runs_no_pickle_without_consent(pt2, tmp_path):  # noqa: F811 - the fixture
    marker = tmp_path / "ran"
    archives = evil_archives(pt2, tmp_path, str(marker))
    pipeline = _pipeline(tmp_path, "weights.pt2")
    checks = [("run", pipeline), ("run", FUSION, "--model", archives["weights"]),
              ("compare", FUSION, FUSION, "--model", archives["weights"]),
              ("run", FUSION, "--model", archives["inputs"]), ("run", FUSION, "--model", archives["nested"])]
    for args in checks:
        proc = _cli(*args, cwd=tmp_path)
        assert proc.returncode != 0, (args, proc.stdout[-1500:])
        assert "holds a pickle that can run code" in proc.stdout + proc.stderr, (args, proc.stdout[-1500:],
                                                                                proc.stderr[-1500:])
        assert "--trust" in proc.stdout + proc.stderr
        assert not marker.exists(), f"{args} ran the pickle"


@pytest.mark.e2e
def test_cli_plain_archive_is_data(pt2, tmp_path):  # noqa: F811 - the fixture
    proc = _cli("run", FUSION, "--model", pt2, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-1500:] + proc.stderr[-1500:]


def test_consent_and_load_read_the_same_bytes(tmp_path, monkeypatch):
    """The file changes between the consent check's read and the load: the consented bytes are loaded."""
    from pipeline_model import safe_files
    from pipeline_model.engine import context

    consented = open(os.path.join(ROOT, "resources", "models", "mlp.py"), encoding="utf-8").read()
    model = tmp_path / "net.py"
    marker = tmp_path / "swapped_in_ran"
    swapped = f"open({str(marker)!r}, 'w').write('ran')\n" + consented
    model.write_text(swapped)  # what a second read by path would find
    real = safe_files.read_bytes

    def read_once(path, what="file", max_bytes=safe_files.MAX_TEXT_BYTES):
        if os.path.abspath(path) == str(model):
            return consented.encode()  # what the engine read when it checked consent
        return real(path, what, max_bytes)

    monkeypatch.setattr(safe_files, "read_bytes", read_once)

    class _Out:
        def write(self, message) -> None:
            pass

    ctx = context.WorkerContext(_Out())
    ctx.consent = {"trusted_hashes": [hashlib.sha256(consented.encode()).hexdigest()]}
    loaded = ctx.load_model(str(model), None)
    assert loaded.mod is not None and not marker.exists()
    assert loaded.content_sha256 == hashlib.sha256(consented.encode()).hexdigest()
    ctx.consent = {}
    with pytest.raises(context.ConsentError):  # and without consent nothing of it runs
        context.WorkerContext(_Out()).load_model(str(model), None)


@pytest.mark.e2e
def test_exported_script_refuses_a_pickled_archive(pt2, tmp_path):  # noqa: F811 - the fixture
    """An exported script that loads a ``.pt2`` checks its pickles with the same code (scriptlib.pickles) and
    stops before loading a crafted one; a plain archive loads and the script runs."""
    marker = tmp_path / "ran"
    evil = evil_archives(pt2, tmp_path, str(marker))["weights"]
    for model, ok in ((evil, False), (pt2, True)):
        script = tmp_path / ("evil.py" if not ok else "plain.py")
        proc = _cli("export", FUSION, "--no-engine", "--model", model, "-o", str(script), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
        if ok:
            assert run.returncode == 0, run.stderr[-2000:]
        else:
            assert run.returncode != 0 and "holds a pickle that can run code" in run.stderr, run.stderr[-2000:]
        assert not marker.exists()
