"""Issue 33: the exported script reads like TVM's tutorial. A pipeline of stock TVM passes exports (``main.py export``,
File ▸ Export) to the plain script — the model, the passes as TVM calls in order with their parameters, the printed
result, at most 80 lines — that runs from any folder; the app's own passes and rules, ``--build`` and ``--full`` give
the full script, whose code beyond plain TVM lies below the marker after ``apply_steps``."""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings

from pipeline_model.catalogue import Catalogue
from pipeline_model.cli import export_cmd
from pipeline_model.consent import Consent
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.export import MARKER, ExportError, export_script
from pipeline_model.fileformat import load_pipeline
from tests.test_export_injection import HOSTILE, _model_file, _shape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPELINES = os.path.join(ROOT, "resources", "pipelines")
FUSION_PASSES = ["LegalizeOps", "AnnotateTIROpPattern", "FuseOps", "FuseTIR"]


def _cli_export(argv, monkeypatch, engine) -> int:
    from pipeline_model.cli import passes_cmd

    monkeypatch.setattr(passes_cmd, "fetch_catalogue", lambda: Catalogue.from_json(engine.catalogue()))
    parser = argparse.ArgumentParser()
    export_cmd.add_parser(parser.add_subparsers(dest="command"))
    return export_cmd.main(parser.parse_args(["export", *argv]))


@pytest.mark.e2e
def test_fusion_walkthrough_exports_the_plain_script_and_it_runs_from_another_folder(engine, tmp_path, monkeypatch):
    tvm = pytest.importorskip("tvm")
    scripts, elsewhere = tmp_path / "scripts", tmp_path / "elsewhere"
    scripts.mkdir()
    elsewhere.mkdir()
    script = scripts / "fusion.py"
    monkeypatch.chdir(elsewhere)
    assert _cli_export(["builtin:fusion_walkthrough", "-o", str(script)], monkeypatch, engine) == 0
    source = script.read_text(encoding="utf-8")
    assert len(source.splitlines()) <= 80, len(source.splitlines())
    assert "pipeline_model" not in source and MARKER not in source and "def check_outputs" not in source
    # The passes, in order, as TVM calls with the catalogue's parameters, one line each.
    calls = [line.strip() for line in source.splitlines() if line.strip().startswith("mod = tvm.relax.transform.")]
    assert [c.split(".")[3].split("(")[0] for c in calls] == FUSION_PASSES
    assert "LegalizeOps(enable_warning=False)(mod)" in calls[0] and "FuseOps(fuse_opt_level=-1)(mod)" in calls[2]
    # A fresh interpreter in another folder, no PYTHONPATH: it prints the module the engine makes.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    proc = subprocess.run([sys.executable, str(script)], cwd=str(elsewhere), capture_output=True, text=True,
                          env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = load_pipeline(os.path.join(PIPELINES, "fusion_walkthrough.json"))
    with engine.consented(Consent.everything()):
        result = engine.run(doc)
    assert result.ok, result.error
    tvm.ir.assert_structural_equal(tvm.script.from_source(proc.stdout), tvm.script.from_source(result.final_script))


def _marker_splits(source: str) -> tuple[str, str]:
    assert source.count(MARKER) == 1
    above, below = source.split(MARKER)
    return above, below


def test_app_passes_build_and_full_give_the_full_script_with_their_code_below_the_marker():
    cpu = load_pipeline(os.path.join(PIPELINES, "cpu_build.json"))  # the app's passes, its DLight rules, native CPU
    above, below = _marker_splits(export_script(cpu, plain=True))
    assert "def apply_steps(mod):" in above and "app.CPUMatmul" not in above
    for code in ("class AppRule(", "class CPUMatmul(AppRule):", "def sink_reshapes(", "def native_target(",
                 "TARGET = tvm.target.Target(native_target(", "def build_and_run(", "def write_output("):
        assert code in below, code
    assert above.index("def apply_steps(mod):") > above.index("mod, _param_spec = model.export_tvm(")
    fusion = load_pipeline(os.path.join(PIPELINES, "fusion_walkthrough.json"))
    for source in (export_script(fusion, plain=True, build=True), export_script(fusion, plain=False)):
        above, below = _marker_splits(source)
        assert "def apply_steps(mod):" in above and "def build_and_run(" in below and "def write_output(" in below
        assert "BUILD = " in above and "--save-json" in below
    custom = PipelineDocument(model="builtin:mlp", steps=[Step("custom.python", {"source": "def transform(mod):\n"
                                                                                "    return mod\n"})])
    above, below = _marker_splits(export_script(custom, plain=True))
    assert "def transform(mod):" in below and "def transform(mod):" not in above


def test_plain_script_keeps_every_value_a_literal():
    hostile = "x'); import os; os.system('echo PWNED') #\n\"\"\"\n{name}"
    doc = PipelineDocument(model="builtin:mlp", name=hostile, steps=[
        Step("relax.LegalizeOps", {"skip_ops": [hostile]}), Step("relax.FuseOps", {"fuse_opt_level": 2})],
        pass_context={"config": {"relax.FuseOps.max_depth": 1}, "disabled_pass": [hostile]})
    source = export_script(doc, plain=True)
    assert MARKER not in source and len(source.splitlines()) <= 80
    tree = ast.parse(source)
    constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    assert hostile in constants and [hostile] not in constants
    assert not any(isinstance(n, ast.Attribute) and n.attr == "system" for n in ast.walk(tree))
    assert "PassContext(opt_level=3, config={'relax.FuseOps.max_depth': 1}, disabled_pass=[" in source
    assert "argparse.ArgumentParser(description=" + repr(hostile) + ")" in source


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=HOSTILE)
def test_plain_script_fields_stay_data(tmp_path_factory, text):
    """Every field of a plain script (model path in its comment line, name, target, parameters, PassContext) stays a
    literal or a one-line comment: the code is the same as for a plain name."""
    def doc(folder: str, value: str) -> PipelineDocument:
        return PipelineDocument(model=_model_file(folder, value), name=value,
                                target={"kind": "llvm", "mcpu": value, "tag": [value, {"k": value}]},
                                pass_context={"disabled_pass": [value]},
                                steps=[Step("relax.LegalizeOps", {"skip_ops": [value]}), Step("relax.FuseTIR")])

    try:
        source = export_script(doc(str(tmp_path_factory.mktemp("exp")), text), plain=True)
    except ExportError:
        return  # a clean refusal is fine
    plain = export_script(doc(str(tmp_path_factory.mktemp("plain")), "plain" if text.strip() else text), plain=True)
    assert MARKER not in source and _shape(source) == _shape(plain)
