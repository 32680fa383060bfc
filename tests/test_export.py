"""Script export: bundled pipelines give the same final module as the engine's construction; no code injection."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

tvm = pytest.importorskip("tvm")

from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from pipeline_model.export import ExportError, export_script  # noqa: E402
from pipeline_model import catalogue_tvm  # noqa: E402
from tests.conftest import quick_bundled_pipeline_paths  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = quick_bundled_pipeline_paths()
PYTHON = sys.executable


def _engine_final(engine, doc: PipelineDocument):
    """The final module of a real engine run of ``doc`` (parsed back from the engine's TVMScript)."""
    result = engine.run(doc, trust_custom_code=True)
    assert result.ok, (result.error, [s.error for s in result.steps if s.error])
    return tvm.script.from_source(result.final_script)


def _run_script(source: str, tmp_path) -> "tvm.IRModule":
    script = tmp_path / "exported.py"
    script.write_text(source)
    out = tmp_path / "final.json"
    proc = subprocess.run([PYTHON, str(script), "--quiet", "--save-json", str(out)], capture_output=True,
                          text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tvm.ir.load_json(out.read_text())


@pytest.mark.parametrize("path", EXAMPLES, ids=[os.path.basename(p) for p in EXAMPLES])
def test_bundled_example_matches_engine(engine, path, tmp_path):
    from pipeline_model.fileformat import load_pipeline

    cat = catalogue_tvm.catalogue()
    doc = load_pipeline(path, known_pass_ids=set(cat.ids()))
    source = export_script(doc, catalogue=cat)
    got = _run_script(source, tmp_path)
    tvm.ir.assert_structural_equal(got, _engine_final(engine, doc))


def test_there_are_bundled_examples():
    assert len(EXAMPLES) >= 3


def test_custom_step_and_build(engine, tmp_path):
    src = "from tvm import relax\n\ndef transform(mod):\n    \"\"\"Legalize.\"\"\"\n    return relax.transform.LegalizeOps()(mod)\n"
    doc = PipelineDocument(model="builtin:mlp", steps=[Step("custom.python", {"source": src}), Step("relax.FuseOps"),
                                                       Step("relax.FuseTIR"), Step("relax.FoldConstant", enabled=False)])
    source = export_script(doc, build=True, catalogue=catalogue_tvm.catalogue())
    assert "# ---- user source of <custom step 1> begins (verbatim) ----" in source
    got = _run_script(source, tmp_path)  # BUILD=True: also compiles and runs
    tvm.ir.assert_structural_equal(got, _engine_final(engine, doc))


HOSTILE = "x'); import os; os.system('echo PWNED') #\n\"\"\"\nimport os"


def test_hostile_strings_are_only_literals(tmp_path):
    doc = PipelineDocument(model="builtin:mlp", name=HOSTILE, description=HOSTILE,
                           steps=[Step("relax.DecomposeOpsForInference", {"func_name": HOSTILE}, note=HOSTILE),
                                  Step("relax.LegalizeOps", {"skip_ops": [HOSTILE]})])
    source = export_script(doc, catalogue=catalogue_tvm.catalogue())
    tree = ast.parse(source)
    constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    assert HOSTILE in constants
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "system":
            pytest.fail("injected os.system call")


@pytest.mark.parametrize("step", [
    Step("relax.FuseOps(); import os"),
    Step("relax.FuseOps", {"fuse_opt_level": "1); import os; (1"}),
    Step("relax.FuseOps", {"bad name": 1}),
    Step("custom.python", {"source": "def f(:\n"}),
])
def test_bad_steps_are_refused(step):
    with pytest.raises(ExportError, match="step 1"):
        export_script(PipelineDocument(steps=[step]), catalogue=catalogue_tvm.catalogue())


def test_hostile_param_name_without_catalogue():
    with pytest.raises(ExportError):
        export_script(PipelineDocument(steps=[Step("relax.FuseOps", {"x=1); import os; f(y": 1})]))
