"""Reproducer folders (issue 21): ``run --reproducer`` for each kind of failing step and ``bisect
--reproducer`` for a numerics culprit; ``python repro.py`` in a fresh interpreter reproduces, and the folder
names no absolute path of the test's folders or the checkout."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from pipeline_model.cli import bisect_cmd, run_cmd
from pipeline_model.debugging import reproducer
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.fileformat import save_pipeline
from tests.debug_fixtures import ROOT, injected_pipeline

SOURCES = {
    "exception": "def transform(mod):\n    raise ValueError('boom from a custom pass')\n",
    "crash": "import ctypes\n\n\ndef transform(mod):\n    ctypes.string_at(0)\n    return mod\n",
    "hang": "import time\n\n\ndef transform(mod):\n    while True:\n        time.sleep(0.05)\n",
}


def test_helpers():
    assert reproducer.scrub_paths('File "/a/b/c.py", at /tmp/x/y: R.add(x)') == 'File "<...>/c.py", at <...>/y: R.add(x)'
    assert reproducer.error_line(ValueError("boom\nmore")) == "ValueError: boom"
    assert reproducer.failure_kind("step 3 (x) did not finish within 5 s; the engine was restarted") == "hang"
    assert reproducer.failure_kind("the engine crashed (signal SIGSEGV) while running step 3") == "crash"
    assert reproducer.crash_signal("the engine crashed (signal SIGABRT)") == 6
    exp = reproducer.expected_for("exception", "step 2 (custom.python) failed: ValueError: boom\nx",
                                  "Traceback ...\nValueError: boom")
    assert exp["line"] == "ValueError: boom" and exp["type"] == "ValueError"
    text = "a '''b''' \\"
    assert eval(reproducer.python_literal(text)) == text  # noqa: S307 - our own literal


def _run_cli(module, name: str, argv: list[str], engine) -> int:
    parser = argparse.ArgumentParser()
    module.add_parser(parser.add_subparsers(dest="command"))
    return module.main(parser.parse_args([name, *argv]), client=engine)


def _check_folder(folder: str, tmp_path, extra_args: tuple = ()) -> str:
    """Run repro.py in a fresh interpreter from another folder; its output. Asserts exit 1 and no paths."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    proc = subprocess.run([sys.executable, os.path.join(folder, "repro.py"), *extra_args], cwd=str(elsewhere),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "REPRODUCED" in proc.stdout
    for name in os.listdir(folder):
        with open(os.path.join(folder, name), "rb") as f:
            data = f.read()
        for path in (str(tmp_path), ROOT, os.path.realpath(str(tmp_path))):
            assert path.encode() not in data, (name, path)
    return proc.stdout


@pytest.mark.e2e
@pytest.mark.parametrize("kind", ["exception", "crash", "hang"])
def test_run_reproducer_of_a_failing_custom_step(engine, tmp_path, capsys, kind):
    doc = PipelineDocument(name=kind, model="builtin:mlp", target={"kind": "llvm"},
                           steps=[Step("relax.LegalizeOps"), Step("relax.AnnotateTIROpPattern"),
                                  Step("custom.python", {"source": SOURCES[kind]}), Step("relax.FuseOps")])
    path = str(tmp_path / "p.json")
    save_pipeline(doc, path)
    folder = str(tmp_path / "repro")
    timeout = ["--timeout", "3"] if kind == "hang" else []
    assert _run_cli(run_cmd, "run", [path, "--trust", "--json", "--reproducer", folder, *timeout], engine) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["reproducer"] == folder, out
    assert sorted(os.listdir(folder)) == ["README.md", "repro.json", "repro.py"]
    seen = _check_folder(folder, tmp_path, ("--timeout", "4") if kind == "hang" else ())
    if kind == "exception":
        assert "ValueError: boom from a custom pass" in seen
    readme = open(os.path.join(folder, "README.md")).read()
    assert "0.27" in readme and "USE_LLVM" in readme and "step 3 (custom.python)" in readme
    if kind == "exception":  # modules planted in the reproducer's folder are not imported, run from there
        from tests.test_trap_folder import plant

        markers = plant(folder, ("numpy", "argparse", "tvm", "inspect", "subprocess"))
        proc = subprocess.run([sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 1 and "REPRODUCED" in proc.stdout, proc.stdout + proc.stderr
        assert os.listdir(markers) == []


@pytest.mark.e2e
def test_run_reproducer_of_a_tvm_pass_error_after_dataflow_lowering(engine, tmp_path, capsys):
    # LowerRuntimeBuiltin on a module whose allocations were not planned: a TVM InternalError. The module
    # before it does not parse back from TVMScript (R.builtin.alloc_tensor ty_args): module.json carries it.
    doc = PipelineDocument(name="tvm", model="builtin:mlp", target={"kind": "llvm"}, steps=[
        Step(p) for p in ("relax.LegalizeOps", "relax.ToNonDataflow", "relax.RemovePurityChecking",
                          "relax.CallTIRRewrite", "relax.LowerRuntimeBuiltin")])
    path = str(tmp_path / "p.json")
    save_pipeline(doc, path)
    folder = str(tmp_path / "repro")
    assert _run_cli(run_cmd, "run", [path, "--reproducer", folder], engine) == 1
    capsys.readouterr()
    assert "module.json" in os.listdir(folder)
    assert "VMBuiltinLower encountered" in _check_folder(folder, tmp_path)


@pytest.mark.e2e
def test_bisect_reproducer_of_a_wrong_rewrite(engine, tmp_path, capsys):
    path, wrong = injected_pipeline(str(tmp_path), 10, 31, "tir")
    folder = str(tmp_path / "repro")
    assert _run_cli(bisect_cmd, "bisect", [path, "--trust", "--json", "--reproducer", folder], engine) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["culprit_step"] == wrong and out["reproducer"] == folder
    assert "inputs.npz" in os.listdir(folder)
    assert "above tolerance" in _check_folder(folder, tmp_path)


@pytest.mark.e2e
def test_numerics_reproducer_after_lift_transform_params_feeds_the_real_weights(engine, tmp_path, capsys):
    # The app's CPU build (LiftTransformParams packs the weights into forward_transform_params), then a wrong TIR
    # step: inputs.npz holds the weights the transform takes (not packed, not random), repro.py runs the transform
    # first as every build does, and sees the very error bisect measured.
    import numpy as np

    from pipeline_model.fileformat import load_pipeline
    from tests.debug_fixtures import TIR_WRONG

    doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json"))
    doc.steps.append(Step("custom.python", {"source": TIR_WRONG}))
    path = str(tmp_path / "p.json")
    save_pipeline(doc, path)
    folder = str(tmp_path / "repro")
    assert _run_cli(bisect_cmd, "bisect", [path, "--trust", "--json", "--reproducer", folder], engine) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["culprit_step"] == len(doc.steps), out
    ratio = next(t["max_abs_over_ref"] for t in out["tested"] if t["step"] == out["culprit_step"])
    spec = reproducer.read_spec(folder)
    assert "forward_transform_params" in spec.module_text and spec.kind == reproducer.KIND_NUMERIC
    with np.load(os.path.join(folder, "inputs.npz")) as data:
        assert {"x", "fc1_weight", "fc2_weight"} <= set(data.files), data.files
        assert data["fc1_weight"].shape == (256, 784)  # as the transform takes it (forward takes it transposed)
    seen = _check_folder(folder, tmp_path)
    assert f"= {ratio:.3g} (above tolerance)" in seen and "random values were fed" not in seen, (seen, ratio)
    assert "runs it first" in open(os.path.join(folder, "README.md")).read()
