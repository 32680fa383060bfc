"""The plug-in loader in one process, without TVM (tests/test_plugins.py installs the example for real): the
example plug-in's entry points go through the same registries as the app's own, a pipeline file can only name
installed kinds and rules (never a module), and a missing one is named with its step."""

from __future__ import annotations

import os
import sys

import pytest

from pipeline_model import emit, plugins
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.importers import registry as formats
from pipeline_model.passkinds import registry as kinds
from pipeline_model.passkinds.dlight import rules

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "rps-example-plugin")
#: The example's entry points, as its pyproject.toml declares them.
ENTRIES = {
    plugins.GROUP_PASS_KINDS: ["example = rps_example_plugin.passkind:KIND"],
    plugins.GROUP_DLIGHT_RULES: ["example.ElementwiseVector = rps_example_plugin.rules_tvm:ElementwiseVector"],
    plugins.GROUP_MODEL_FORMATS: ["example_mlp = rps_example_plugin.model_format:FORMAT"],
}


def _reload(monkeypatch) -> None:
    for table in (kinds.KINDS, formats.FORMATS, rules.RULES):
        monkeypatch.setattr(table, "_loaded", False)
        monkeypatch.setattr(table, "_members", {})
        monkeypatch.setattr(table, "_entries", {})


@pytest.fixture
def example_installed(monkeypatch):
    """The example plug-in's entry points, as if its package were installed."""
    monkeypatch.syspath_prepend(EXAMPLE)
    monkeypatch.setattr(plugins, "installed_entries", lambda group: [
        plugins.parse_entry(line, group, dist="rps-example-plugin", version="0.1.0", origin=plugins.INSTALLED)
        for line in ENTRIES.get(group, [])])
    _reload(monkeypatch)
    yield
    _reload(monkeypatch)
    plugins.forget_failures()


def test_plugins_and_builtins_share_one_registry_each(example_installed):
    kind = kinds.kind_for("example.CanonicalizeAndDCE")
    assert kind is not None and kinds.KINDS.entry_of("example").dist == "rps-example-plugin"
    assert kinds.KINDS.entry_of("dlight").builtin and kinds.KINDS.entry_of("dlight").value.endswith(":KIND")
    assert rules.rule_names() == ["app.CPUInt8", "app.CPUMatmul", "app.CPUConv2d", "app.CPUParallel",
                                  "example.ElementwiseVector"]
    fmt = formats.identify_format(os.path.join(EXAMPLE, "tiny.rpsmlp"))
    assert fmt is not None and fmt.name == "example_mlp"
    rep = plugins.report()
    assert "rps-example-plugin 0.1.0: DLight rule 'example.ElementwiseVector'" in plugins.plugin_lines(rep)


def test_exported_code_of_a_plugin_is_the_code_the_engine_runs(example_installed):
    expr = kinds.recipe_for("dlight.ApplyDefaultSchedule", {"rules": ["example.ElementwiseVector", "app.CPUParallel"]})
    calls = emit.script_calls(expr)
    assert [(c.module, c.attr) for c in calls] == [("rps_example_plugin.rules_tvm", "ElementwiseVector"),
                                                   ("pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm",
                                                    "CPUParallel")]
    sources = rules.rule_sources("app.CPUParallel")  # the base class from its own module first
    assert [s.split("(", 1)[0] for s in sources] == ["class AppRule", "class CPUParallel"]
    assert rules.rule_sources("example.ElementwiseVector")[0].startswith("class ElementwiseVector(")


def test_a_file_names_kinds_and_rules_never_modules(example_installed, tmp_path, monkeypatch):
    trap = tmp_path / "rps_trap_module.py"
    trap.write_text(f"open({str(tmp_path / 'imported')!r}, 'w').close()\nclass Rule: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for rule in ("rps_trap_module.Rule", "os.system"):
        with pytest.raises(emit.EmitError, match=rf"step 3: DLight rule '{rule}' is not installed"):
            kinds.recipe_for("dlight.ApplyDefaultSchedule", {"rules": [rule]}, step_number=3)
    with pytest.raises(emit.EmitError, match="no construction known"):
        kinds.recipe_for("rps_trap_module.Rule", {})
    assert not (tmp_path / "imported").exists() and "rps_trap_module" not in sys.modules


def test_a_missing_plugin_is_named_with_its_step(example_installed):
    from pipeline_model.cli.run_cmd import unknown_step_errors

    doc = PipelineDocument(steps=[Step("relax.LegalizeOps"), Step("other.Pass"), Step("relax.FuseOp")], name="p")
    for step in doc.steps[1:]:
        step.placeholder = "unknown"
    first, second = unknown_step_errors(doc)
    assert first.startswith("p: step 2: unknown pass id 'other.Pass' (no installed plug-in provides it: the "
                            "plug-in of the 'other' passes is not installed")
    assert "step 3: unknown pass id 'relax.FuseOp' (misspelt, or from another TVM build" in second
    assert kinds.unknown_pass_reason("example.CanonicalizeAndDCE") == \
        "misspelt, or not offered by the installed plug-in rps-example-plugin 0.1.0"
