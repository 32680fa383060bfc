"""Script export: bundled pipelines give the same final module as the engine's construction; no code injection."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

tvm = pytest.importorskip("tvm")

from pipeline_model.consent import Consent  # noqa: E402
from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from pipeline_model.export import ExportError, export_script  # noqa: E402
from pipeline_model.passkinds import catalogue_tvm  # noqa: E402
from tests.conftest import quick_bundled_pipeline_paths  # noqa: E402
from tests.tuning_fixtures import QUICK_SEARCH  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = quick_bundled_pipeline_paths()
PYTHON = sys.executable


def _engine_final(engine, doc: PipelineDocument):
    """The final module of a real engine run of ``doc`` (parsed back from the engine's TVMScript), or its
    text when it holds constants (printed as ``metadata[...]`` references, which do not parse back)."""
    with engine.consented(Consent.everything()):
        result = engine.run(doc)
    assert result.ok, (result.error, [s.error for s in result.steps if s.error])
    if "metadata[" in result.final_script:
        return result.final_script
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
    expected = _engine_final(engine, doc)
    if isinstance(expected, str):  # weights bound as constants: same printed module, constants by reference
        assert got.script() == expected
    else:
        tvm.ir.assert_structural_equal(got, expected)


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


def test_step_on_defaults_exports_with_the_catalogue_and_says_why_without():
    """Issue 33: a dropped FuseOpsByPattern keeps no parameters; with the catalogue it exports its default table,
    without one (export --no-engine) the message says the default lives there."""
    doc = PipelineDocument(steps=[Step("relax.FuseOpsByPattern")])
    assert "get_patterns_with_prefix(" in export_script(doc, catalogue=catalogue_tvm.catalogue())
    with pytest.raises(ExportError, match=r"step 1 \(relax.FuseOpsByPattern\): no pattern table given.*catalogue"):
        export_script(doc)


def test_tuning_pipeline_script_measures_on_cpu(tmp_path):
    """The exported tuning pipeline carries the working CPU set-up (no pipeline_model import), measures
    real candidates in a fresh interpreter and applies them: every PrimFunc of the final module is
    scheduled."""
    import json

    from pipeline_model.fileformat import load_pipeline

    cat = catalogue_tvm.catalogue()
    doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", "tuning_mlp_cpu.json"), known_pass_ids=set(cat.ids()))
    # seeded with two app rules: the script also seeds its database with the app's schedules (measured records
    # MetaSchedule's search did not make) and says which schedules won (one script run checks both)
    doc.steps[4].params.update(max_trials_global=1, num_trials_per_iter=1, builder_workers=1,
                               seed_rules=["app.CPUMatmul", "app.CPUParallel"], cost_model=QUICK_SEARCH["cost_model"])
    work = tmp_path / "wd"
    source = export_script(doc, catalogue=cat, work_dir=str(work))
    assert "pipeline_model" not in source
    assert "install_meta_schedule_cpu(WORK_DIR, {" in source and "def meta_schedule_f_build" in source
    imported = {a.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import) for a in n.names}
    assert "tvm.s_tir.tensor_intrin" not in imported  # the import that times out every stock candidate
    script = tmp_path / "exported.py"
    script.write_text(source)
    out = tmp_path / "final.py"
    proc = subprocess.run([PYTHON, str(script), "--quiet", "--save-script", str(out)], capture_output=True,
                          text=True, timeout=300, cwd=str(tmp_path),
                          env={**os.environ, "PYTHONPATH": "", "RPS_TUNING_DB_DIR": "off"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(line) for line in (work / "database_tuning_record.json").read_text().splitlines() if line.strip()]
    assert records and (work / "database_workload.json").stat().st_size > 0
    measured = [r for r in records if r[1][1] and max(r[1][1]) < 1.0]  # run_secs of a real measurement
    assert len(measured) >= 4, records  # one per PrimFunc of the MLP, none a builder timeout
    lines = [line for line in proc.stdout.splitlines() if line.startswith("app schedules:")]
    # 3 of the MLP's 4 PrimFuncs have an app schedule (its 1 x 256 x 10 product too: app.CPUParallel's reduction
    # lanes on one thread, 3.0 -> 1.0 us), the last transpose none
    assert len(lines) == 2 and "3 seeded, 0 skipped, 1 no rule" in lines[0] and "best:" in lines[1], proc.stdout[-2000:]
    seeds = [r for r in records if "EnterPostproc" not in json.dumps(r[1][0])]
    assert len(seeds) == 3 and all(0 < max(r[1][1]) < 1.0 for r in seeds)
    searched = [r for r in records if "EnterPostproc" in json.dumps(r[1][0])]
    assert searched, records  # and the search measured candidates of its own
    final = tvm.script.from_source(out.read_text())
    prim_funcs = [f for _, f in final.functions_items() if isinstance(f, tvm.tirx.PrimFunc)]
    assert prim_funcs and all(f.attrs is not None and f.attrs.get("tirx.is_scheduled", False) for f in prim_funcs)


def test_tuning_export_uses_the_apps_work_dir_by_default(tmp_path):
    from pipeline_model.fileformat import load_pipeline, save_pipeline

    doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", "tuning_mlp_cpu.json"))
    path = tmp_path / "mine.json"
    save_pipeline(doc, str(path))
    source = export_script(load_pipeline(str(path)), catalogue=catalogue_tvm.catalogue())
    assert f"WORK_DIR = os.path.abspath({str(tmp_path / 'mine.tuning')!r})" in source
    assert source.index("install_meta_schedule_cpu(WORK_DIR") < source.index("MetaScheduleTuneTIR(work_dir=WORK_DIR")


def test_script_uses_every_usable_core_before_importing_tvm():
    """The exported script runs compiled code on as many threads as the app does (set before ``import tvm``)."""
    from pipeline_model import runtime_threads

    doc = PipelineDocument(name="threads", model="builtin:mlp", steps=[Step(pass_id="relax.LegalizeOps")])
    source = export_script(doc, build=True)
    lines = source.splitlines()
    first_tvm = lines.index("import tvm")
    setting = lines.index(runtime_threads.script_lines()[2])
    assert lines.index("import os") < setting < first_tvm
