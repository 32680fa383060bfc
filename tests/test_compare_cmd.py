"""``main.py compare A.json B.json --model SPEC [--json]``: pipelines compared on the same model and inputs,
and the compare view widget."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pipeline_model import build_api

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPELINES = os.path.join(ROOT, "resources", "pipelines")


def _main(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "compare", *args],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)


def test_compare_two_pipelines_json():
    out = _main(os.path.join(PIPELINES, "cpu_build.json"), os.path.join(PIPELINES, "fusion_walkthrough.json"),
                "--model", "builtin:mlp", "--number", "2", "--repeat", "2", "--json")
    assert out.returncode == 0, out.stderr + out.stdout
    data = json.loads(out.stdout)
    assert data["ok"] and data["model"] == "builtin:mlp" and len(data["rows"]) == 2
    labels = [r["label"] for r in data["rows"]]
    assert labels == ["cpu_build", "fusion_walkthrough"]
    for row in data["rows"]:
        assert row["error"] is None and row["build_ms"] > 0
        assert row["latency"]["median_us"] > 0 and len(row["latency"]["runs_us"]) == 2
        assert row["check"]["passed"]
    assert data["best"] in (0, 1)
    assert len(data["diffs"]) == 1 and data["diffs"][0]["a"] == 0 and data["diffs"][0]["b"] == 1
    assert not data["diffs"][0]["identical"]  # cpu_build fuses the transpose, the walkthrough does not
    result = build_api.MultiCompareResult.from_json(data)
    assert result.rows[0].latency is not None


def test_compare_text_table_never_headlines_a_same_build():
    # The same pipeline twice compiles to the same module: "same build", no "fastest" to use (issue 18).
    out = _main(os.path.join(PIPELINES, "cpu_build.json"), os.path.join(PIPELINES, "cpu_build.json"),
                "--model", "builtin:mlp", "--number", "2", "--repeat", "4")
    assert out.returncode == 0, out.stderr
    assert "same build" in out.stdout and "\nfastest:" not in out.stdout and "use this one" not in out.stdout
    assert "no fastest" in out.stdout and "IQR us" in out.stdout
    assert "identical" in out.stdout  # the same pipeline twice: same final IR


def test_compare_json_says_whether_each_pipeline_differs_from_the_first():
    out = _main(os.path.join(PIPELINES, "cpu_build.json"), os.path.join(PIPELINES, "cpu_build.json"),
                os.path.join(PIPELINES, "fusion_walkthrough.json"), "--model", "builtin:mlp", "--json")
    assert out.returncode == 0, out.stderr + out.stdout
    data = json.loads(out.stdout)
    first, same, other = data["rows"]
    assert first.get("vs_first") is None
    assert same["significant"] is False and same["vs_first"]["verdict"] == "same_build"
    assert same["fingerprint"] == first["fingerprint"] != other["fingerprint"]
    # The walkthrough does not fold the transposes: several times slower, told apart from the noise.
    assert other["significant"] is True and other["vs_first"]["verdict"] == "slower"
    assert 1.0 < other["vs_first"]["low"] <= other["vs_first"]["ratio"] <= other["vs_first"]["high"]
    assert other["latency"]["interleaved"] and len(other["latency"]["runs_us"]) == 20
    assert data["best"] in (0, 1) and data["best_clear"] is True


def test_compare_bad_input():
    one = _main(os.path.join(PIPELINES, "cpu_build.json"))
    assert one.returncode == 2 and "at least two" in one.stderr
    missing = _main(os.path.join(PIPELINES, "cpu_build.json"), "no_such.json")
    assert missing.returncode == 2 and "no_such.json" in missing.stderr
    bad_model = _main(os.path.join(PIPELINES, "cpu_build.json"), os.path.join(PIPELINES, "cpu_build.json"),
                      "--model", "builtin:nope")
    assert bad_model.returncode == 2 and "--model" in bad_model.stderr


def test_compare_view_widget(qtbot):
    pytest.importorskip("PySide6")
    from widgets.compare_view import CompareView

    lat = {"median_us": 10.0, "mean_us": 10.0, "std_us": 1.0, "min_us": 9.0, "max_us": 12.0,
           "runs_us": [9.0, 12.0], "number": 1, "repeat": 2, "warmup": 0}
    data = {"function": "main", "best": 1, "diffs": [{"a": 0, "b": 1, "identical": False,
                                                      "stats": {"changed": 1}, "functions": []}],
            "rows": [{"label": "A", "key": "ka", "target": {"kind": "llvm"}, "build_ms": 100.0,
                      "latency": {**lat, "median_us": 20.0}, "outputs": [], "check": None, "error": None},
                     {"label": "B", "key": "kb", "target": {"kind": "llvm"}, "build_ms": 50.0, "latency": lat,
                      "outputs": [], "check": None, "error": None},
                     {"label": "C", "key": "kc", "target": {"kind": "llvm"}, "build_ms": None, "latency": None,
                      "outputs": [], "check": None, "error": "build failed: boom"}]}
    view = CompareView()
    qtbot.addWidget(view)
    view.set_result(build_api.MultiCompareResult.from_json(data))
    assert view.table().rowCount() == 3
    assert "B" in view.best_label_text()
    chosen = []
    view.use_requested.connect(chosen.append)
    view.use_best()
    assert chosen == [1]
    assert "boom" in view.table().item(2, 6).text()
