"""Pass kinds: a kind defined only in this file is catalogued, runs in the engine, exports and reports.

The engine loads this module through ``RPS_PASSKIND_MODULES=tests.test_passkinds`` (the documented way
to add kinds from outside ``pipeline_model``); importing it registers :class:`MyDCEKind`. No other file
knows about ``test.MyDCE``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, Optional

import pytest

from pipeline_model import emit
from pipeline_model.consent import Consent
from pipeline_model.passkinds import PassKind, kind_for, register, step_report_html, unregister
from pipeline_model.passkinds.registry import ENV_MODULES
from pipeline_model.passkinds.report_html import ReportSection, esc

PASS_ID = "test.MyDCE"


def _count_functions(mod: Any) -> int:
    return len(list(mod.functions_items()))


def _mydce_html(value: Any, _target: dict, _css: str) -> str:
    return f"<p><b>My DCE</b>: {esc(value.get('before'))} function(s) before, {esc(value.get('after'))} after</p>"


class MyDCEKind(PassKind):
    """``relax.transform.DeadCodeElimination`` under the id ``test.MyDCE`` with one parameter."""

    name = "test_mydce"
    priority = 5
    catalogue_order = 200

    def matches(self, pass_id: str) -> bool:
        return pass_id == PASS_ID

    def add_specs(self, cat: Any) -> None:
        from pipeline_model.catalogue import ParamSpec, PassSpec

        cat.add(PassSpec(id=PASS_ID, title="My DCE", category="Optimization", doc="Dead code elimination (test kind).",
                         params=[ParamSpec("entry_functions", "str_list", None, "Functions to keep.", nullable=True)],
                         tvm_name="tvm.relax.transform.DeadCodeElimination"))

    def recipe(self, pass_id: str, params: dict[str, Any], *, step_number: Optional[int] = None) -> emit.Expr:
        return emit.Call("tvm.relax.transform", "DeadCodeElimination", (), emit.keyword_args(params))

    def after_step(self, pass_id: str, before: Any, after: Any, report: dict[str, Any]) -> None:
        report["mydce"] = {"before": _count_functions(before), "after": _count_functions(after)}

    def report_sections(self) -> tuple[ReportSection, ...]:
        return (ReportSection("mydce", 70, _mydce_html),)


register(MyDCEKind())

# ---- the tests below run only in the pytest process ----------------------------------------------
PYTHON = sys.executable
MODULE = "tests.test_passkinds"
UNUSED_MODEL = '''from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class Module:
    @R.function(private=True)
    def unused(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        with R.dataflow():
            y = R.add(x, x)
            R.output(y)
        return y
'''


@pytest.fixture(scope="module")
def plugin_engine():
    """An engine started with ``RPS_PASSKIND_MODULES`` naming this module."""
    pytest.importorskip("tvm")
    from pipeline_model.engine.client import EngineClient

    client = EngineClient(step_timeout_s=300.0, env={ENV_MODULES: MODULE})
    yield client
    client.close()


def test_registry_knows_the_kind_without_tvm():
    code = ("import sys; from pipeline_model.passkinds import kind_name, all_kinds; "
            f"print(kind_name({PASS_ID!r})); print(len(all_kinds())); print('tvm' in sys.modules)")
    env = dict(os.environ, **{ENV_MODULES: MODULE})
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=env, cwd=root, timeout=120)
    assert out.returncode == 0, out.stderr
    name, count, tvm_loaded = out.stdout.split()
    assert name == "test_mydce"
    assert int(count) == 17  # the sixteen built-in kinds + this one
    assert tvm_loaded == "False"  # kinds are asked without importing TVM


def test_bad_plugin_module_is_named_and_left_out(monkeypatch):
    from pipeline_model import plugins
    from pipeline_model.passkinds import registry

    monkeypatch.setenv(ENV_MODULES, "tests.no_such_passkind_module")
    monkeypatch.setattr(registry.KINDS, "_loaded", False)
    try:
        registry.load_kinds()  # the app goes on without it
        (failure,) = [f for f in plugins.failures() if f.name == "tests.no_such_passkind_module"]
        assert failure.group == plugins.GROUP_PASS_KINDS and failure.dist == ENV_MODULES
        assert "ModuleNotFoundError" in failure.line() and "tests.no_such_passkind_module" in failure.line()
        assert len(registry.all_kinds()) >= 12
    finally:
        plugins.forget_failures()
        monkeypatch.setattr(registry.KINDS, "_loaded", True)


def test_kind_in_catalogue_runs_exports_and_reports(plugin_engine, tmp_path):
    tvm = pytest.importorskip("tvm")
    from pipeline_model.catalogue import Catalogue
    from pipeline_model.document import PipelineDocument, Step
    from pipeline_model.engine.results import CHANGED
    from pipeline_model.export import export_script

    cat = Catalogue.from_json(plugin_engine.catalogue())
    spec = cat.get(PASS_ID)
    assert spec is not None and spec.kind == "test_mydce" and spec.title == "My DCE"
    assert [p.name for p in spec.params] == ["entry_functions"]
    assert cat.get("relax.FuseOps").kind == "relax"

    model = tmp_path / "two_funcs.py"
    model.write_text(UNUSED_MODEL)
    doc = PipelineDocument(model=str(model), steps=[Step(PASS_ID, {"entry_functions": ["main"]})])
    with plugin_engine.consented(Consent.everything()):  # the model is a .py file the test wrote
        result = plugin_engine.run(doc)
    assert result.ok, (result.error, [s.error for s in result.steps])
    step = result.steps[0]
    assert step.state == CHANGED
    assert step.report["mydce"] == {"before": 2, "after": 1}
    final = tvm.script.from_source(result.final_script)
    assert [gv.name_hint for gv, _ in final.functions_items()] == ["main"]

    source = export_script(doc, catalogue=cat)
    assert "tvm.relax.transform.DeadCodeElimination(entry_functions=['main'])" in source
    script = tmp_path / "exported.py"
    script.write_text(source)
    out = tmp_path / "final.json"
    proc = subprocess.run([PYTHON, str(script), "--quiet", "--save-json", str(out)], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    tvm.ir.assert_structural_equal(tvm.ir.load_json(out.read_text()), final)

    html = step_report_html(PASS_ID, step.report, dict(doc.target))
    assert "<b>My DCE</b>: 2 function(s) before, 1 after" in html


def test_builtin_kinds_and_flags():
    assert kind_for("relax.FuseOps").name == "relax"
    assert kind_for("relax.FuseOpsByPattern").name == "fuse_by_pattern"
    assert kind_for("relax.MetaScheduleTuneTIR").runs_tuning("relax.MetaScheduleTuneTIR")
    assert not kind_for("relax.MetaScheduleApplyDatabase").runs_tuning("relax.MetaScheduleApplyDatabase")
    assert kind_for("pipeline.zero").is_composite("pipeline.zero")
    assert kind_for("stage.cuda.legalize_passes").is_composite("stage.cuda.legalize_passes")
    assert kind_for("dlight.ApplyDefaultSchedule").name == "dlight"
    assert kind_for("custom.python").name == "custom_python"
    assert kind_for("nothing.Known") is None


def test_user_code_of_custom_and_pattern_steps(tmp_path):
    from pipeline_model.document import Step

    custom = Step("custom.python", {"source": "x = 1\n"})
    (ref,) = kind_for(custom.pass_id).user_code(custom, str(tmp_path), 3)
    assert (ref.label, ref.path, ref.filenames, ref.read()) == ("custom.python", None, ("<custom step 3>",), "x = 1\n")
    (tmp_path / "pat.py").write_text("patterns = []\n")
    fuse = Step("relax.FuseOpsByPattern", {"pattern_source": "file", "pattern_file": "pat.py"})
    (ref,) = kind_for(fuse.pass_id).user_code(fuse, str(tmp_path), 1)
    full = str(tmp_path / "pat.py")
    assert ref.path == full and ref.filenames == ("pat.py", full) and ref.read() == "patterns = []\n"
    table = Step("relax.FuseOpsByPattern", {"pattern_source": "table"})
    assert kind_for(table.pass_id).user_code(table, str(tmp_path), 1) == []
    missing = Step("relax.FuseOpsByPattern", {"pattern_source": "file", "pattern_file": "gone.py"})
    assert kind_for(missing.pass_id).user_code(missing, str(tmp_path), 1)[0].read().startswith("# cannot read")


# ---- a kind as one folder: behaviour, exported code and report from one package ---------------------
ONE_FOLDER = {
    "__init__.py": '''"""Kind test_one_folder: spec and hooks (TVM-free)."""
from pipeline_model import emit
from pipeline_model.passkinds.base import PassKind
from pipeline_model.passkinds.registry import register
from pipeline_model.passkinds.report_html import ReportSection, esc

PASS_ID = "test.OneFolder"
SCRIPT_MODULE = __name__ + ".script"


def _html(value, _target, _css):
    return f"<p><b>One folder</b>: {esc(', '.join(value['before']))} -> {esc(', '.join(value['after']))}</p>"


class OneFolderKind(PassKind):
    name = "test_one_folder"
    priority = 5

    def matches(self, pass_id):
        return pass_id == PASS_ID

    def recipe(self, pass_id, params, *, step_number=None):
        return emit.ScriptCall(SCRIPT_MODULE, "one_folder_pass")

    def after_step(self, pass_id, before, after, report):
        from . import report_tvm

        report["one_folder"] = {"before": report_tvm.function_names(before), "after": report_tvm.function_names(after)}

    def report_sections(self):
        return (ReportSection("one_folder", 71, _html),)


KIND = register(OneFolderKind())
''',
    "script.py": '''"""Code exported scripts contain; the engine calls it too."""


def one_folder_pass():
    """Dead code elimination keeping only main (the step's pass)."""
    from tvm import relax

    return relax.transform.DeadCodeElimination(entry_functions=["main"])
''',
    "report_tvm.py": '''"""Engine half (imports TVM); never imports the kind back."""
import tvm


def function_names(mod: tvm.IRModule) -> list:
    return sorted(gv.name_hint for gv in mod.get_global_vars())
''',
}


def test_a_kind_is_one_folder(tmp_path, monkeypatch):
    """A kind written as one package (``__init__.py`` + ``script.py`` + ``report_tvm.py``) registered through
    ``RPS_PASSKIND_MODULES``: the engine builds its step by calling the script function, which the exported
    script holds verbatim and calls too; its report is rendered by its own section."""
    import importlib
    import inspect

    tvm = pytest.importorskip("tvm")
    from pipeline_model.document import PipelineDocument, Step
    from pipeline_model.export import export_script
    from pipeline_model.passkinds import PassBuildContext, recipe_for, registry

    folder = tmp_path / "rps_one_folder_kind"
    folder.mkdir()
    for name, text in ONE_FOLDER.items():
        (folder / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(ENV_MODULES, "rps_one_folder_kind")
    monkeypatch.setattr(registry.KINDS, "_loaded", False)
    try:
        registry.load_kinds()
        kind = kind_for("test.OneFolder")
        assert kind is not None and kind.name == "test_one_folder"
        script = importlib.import_module("rps_one_folder_kind.script")
        for obj in (type(kind), script.one_folder_pass):  # spec, hooks and script code: one folder
            assert os.path.dirname(inspect.getfile(obj)) == str(folder)

        # behaviour: the engine evaluates the recipe by calling the script function (spied on here)
        calls = []
        original = script.one_folder_pass

        def spy():
            calls.append(1)
            return original()

        monkeypatch.setattr(script, "one_folder_pass", spy)
        expr = recipe_for("test.OneFolder", {})
        built = kind.build_pass("test.OneFolder", {}, expr, PassBuildContext())
        assert calls == [1]
        model = tmp_path / "two_funcs.py"
        model.write_text(UNUSED_MODEL)
        import runpy

        mod = runpy.run_path(str(model))["Module"]
        with tvm.target.Target("llvm"), tvm.transform.PassContext(opt_level=3):
            after = built(mod)
        report: dict = {}
        kind.after_step("test.OneFolder", mod, after, report)  # the report, by the folder's engine half
        assert report["one_folder"] == {"before": ["main", "unused"], "after": ["main"]}
        assert step_report_html("test.OneFolder", report, {"kind": "llvm"}) == \
            "<p><b>One folder</b>: main, unused -> main</p>"
        monkeypatch.setattr(script, "one_folder_pass", original)

        # exported code: the same function's source, called the same way
        doc = PipelineDocument(model=str(model), steps=[Step("test.OneFolder", {})])
        source = export_script(doc)
        assert inspect.getsource(original) in source
        assert "        pass_ = one_folder_pass()\n" in source and "rps_one_folder_kind" not in source
        exported = tmp_path / "exported.py"
        exported.write_text(source)
        out = tmp_path / "final.json"
        proc = subprocess.run([PYTHON, str(exported), "--quiet", "--save-json", str(out)], capture_output=True,
                              text=True, timeout=300, cwd=str(tmp_path))
        assert proc.returncode == 0, proc.stderr[-3000:]
        tvm.ir.assert_structural_equal(tvm.ir.load_json(out.read_text()), after)
    finally:
        unregister("test_one_folder")


def test_builtin_script_functions_are_what_exports_copy():
    """The script functions the built-in kinds' recipes call are copied verbatim into exported scripts."""
    import importlib
    import inspect

    from pipeline_model.passkinds import recipe_for

    recipes = {
        "weights.BindAsConstants": {},
        "relax.FuseOpsByPattern": {"pattern_source": "file", "pattern_file": "p.py"},
        "dlight.ApplyDefaultSchedule": {"rules": ["app.CPUParallel"]},
    }
    found = []
    for pass_id, params in recipes.items():
        for call in emit.script_calls(recipe_for(pass_id, params)):
            assert call.module.startswith("pipeline_model.passkinds." + kind_for(pass_id).name + ".")
            source = emit.script_source(call.module, call.attr)
            if not call.module.endswith("_tvm"):  # script_tvm modules import TVM; read, not imported, here
                assert source == inspect.getsource(getattr(importlib.import_module(call.module), call.attr))
            found.append(source.split("(", 1)[0])
    assert found == ["def bind_model_weights", "def load_pattern_file", "class CPUParallel"]
    with pytest.raises(emit.EmitError):
        emit.script_source("pipeline_model.passkinds.bind_weights.script", "nothing_here")


def teardown_module() -> None:
    unregister(MyDCEKind.name)  # leave the registry as other test modules expect it


def test_script_source_reads_a_changed_module_again(tmp_path, monkeypatch) -> None:
    """Script modules are parsed once per version of their file (an export reads the same few many times): the
    same text while the file is unchanged, the new definition once it changes."""
    import importlib

    module = tmp_path / "rps_emit_probe.py"
    module.write_text("def helper():\n    return 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    first = emit.script_source("rps_emit_probe", "helper")
    assert first == "def helper():\n    return 1\n" and emit.script_source("rps_emit_probe", "helper") == first
    module.write_text("def helper():\n    return 22\n", encoding="utf-8")
    assert emit.script_source("rps_emit_probe", "helper") == "def helper():\n    return 22\n"
