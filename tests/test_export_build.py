"""The exported script's ``--build``: latency and the check like the app, integer inputs inside their table;
``main.py export --model/--target`` overrides."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_PIPELINE = os.path.join(ROOT, "resources", "pipelines", "cpu_build.json")


def _export(tmp_path, *extra: str) -> str:
    out = tmp_path / "script.py"
    done = subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "export", CPU_PIPELINE, "-o", str(out),
                           "--no-engine", *extra], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return str(out)


def test_exported_build_prints_latency_and_check(tmp_path):
    script = _export(tmp_path, "--build")
    run = subprocess.run([sys.executable, script, "--quiet"], capture_output=True, text=True, timeout=600,
                         cwd=str(tmp_path))
    assert run.returncode == 0, run.stderr[-2000:]
    assert "latency: median" in run.stdout and " us per run" in run.stdout
    assert "check output 0: PASS" in run.stdout and "max |diff|/max |ref|" in run.stdout


def test_export_model_override_and_embedding_bounds(tmp_path):
    onnx = pytest.importorskip("onnx")
    from tests.test_build_models import embedding_model

    model = embedding_model(tmp_path / "embed.onnx", vocab=7)
    script = _export(tmp_path, "--model", model, "--target", "cpu")
    text = open(script, encoding="utf-8").read()
    assert "embed.onnx" in text
    run = subprocess.run([sys.executable, script, "--quiet", "--build"], capture_output=True, text=True,
                         timeout=600, cwd=str(tmp_path))
    assert run.returncode == 0, run.stderr[-2000:]
    assert "check output 0: PASS" in run.stdout
    assert "input ids: int64[1, 64] drawn from [0, 7)" in run.stdout
    assert onnx is not None


def test_export_bad_overrides(tmp_path):
    bad = subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "export", CPU_PIPELINE, "-o", "-",
                          "--no-engine", "--model", "builtin:nope"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--model" in bad.stderr
    bad_t = subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "export", CPU_PIPELINE, "-o", "-",
                            "--no-engine", "--target", "{not json"], capture_output=True, text=True, timeout=300)
    assert bad_t.returncode == 2 and "--target" in bad_t.stderr
