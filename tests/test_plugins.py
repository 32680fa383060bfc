"""Entry-point plug-ins (docs/ARCHITECTURE.md "Plug-ins"): the example plug-in package (examples/rps-example-plugin)
built as a wheel and installed into a fresh virtual environment, with a deliberately broken plug-in beside it.

In that environment a pipeline uses the example's model format, pass kind and DLight rule (CLI ``run``), the export
holds the plug-in's code (not an import of it), the GUI palette lists the plug-in's pass and Help ▸ About lists the
plug-in with its version, and the broken plug-in (its module raises on import) leaves the app starting with the
environment report, About and a status message naming it. Offline: wheels are built without build isolation and
installed with ``--no-index --no-deps`` (tests/venv_tools.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap

import pytest

from tests.venv_tools import build_wheel, fresh_venv, install, isolated_env, run_ok

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "rps-example-plugin")
MAIN = os.path.join(ROOT, "main.py")
PASS_ID = "example.CanonicalizeAndDCE"

#: A plug-in whose pass kind, engine command and DLight rule modules raise when imported.
BROKEN = {
    "pyproject.toml": textwrap.dedent('''\
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "rps-broken-plugin"
        version = "9.9"

        [project.entry-points."relax_pipeline_studio.pass_kinds"]
        broken = "rps_broken_plugin:KIND"

        [project.entry-points."relax_pipeline_studio.engine_commands"]
        broken_cmd = "rps_broken_plugin.commands"

        [project.entry-points."relax_pipeline_studio.dlight_rules"]
        "broken.Rule" = "rps_broken_plugin.rule_tvm:Rule"

        [tool.setuptools]
        packages = ["rps_broken_plugin"]
        '''),
    "rps_broken_plugin/__init__.py": 'raise RuntimeError("deliberately broken plug-in")\n',
    "rps_broken_plugin/commands.py": "",
}

pytestmark = pytest.mark.package


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """``(python, env, work folder)``: a fresh environment with the example and the broken plug-in installed."""
    base = tmp_path_factory.mktemp("plugins")
    example = base / "example"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    broken = base / "broken"
    for name, text in BROKEN.items():
        (broken / name).parent.mkdir(parents=True, exist_ok=True)
        (broken / name).write_text(text)
    wheels = str(base / "wheels")
    python, _purelib = fresh_venv(str(base / "venv"))
    install(python, build_wheel(str(example), wheels, "rps_example_plugin-*.whl"),
            build_wheel(str(broken), wheels, "rps_broken_plugin-*.whl"))
    work = base / "work"
    work.mkdir()
    for name in ("example_pipeline.json", "tiny.rpsmlp"):
        shutil.copy2(os.path.join(EXAMPLE, name), work / name)
    return python, isolated_env(str(base)), str(work)


def test_a_pipeline_uses_the_plugins_format_pass_and_rule(venv):
    python, env, work = venv
    out = run_ok([python, MAIN, "run", "example_pipeline.json", "--emit-ir", "ir"], cwd=work, env=env).stdout
    assert f"[{PASS_ID}]" in out and "changed" in out, out  # the plug-in's pass ran
    scheduled = open(os.path.join(work, "ir", "03_dlight.ApplyDefaultSchedule.py"), encoding="utf-8").read()
    relu = scheduled[scheduled.index("def relu("):]
    assert "T.parallel(" in relu[:800] and "T.vectorized(" in relu[:800]  # example.ElementwiseVector's schedule
    script = os.path.join(work, "exported.py")
    run_ok([python, MAIN, "export", "example_pipeline.json", "-o", script], cwd=work, env=env)
    text = open(script, encoding="utf-8").read()
    for definition in ("def canonicalize_and_dce(", "class ElementwiseVector(", "def build_mlp("):
        assert definition in text  # the code the engine ran, copied
    assert "rps_example_plugin" not in text.replace("rps-example-plugin", "")  # no import of the plug-in


def test_a_broken_plugin_is_named_by_the_environment_report(venv):
    python, env, work = venv
    proc = subprocess.run([python, MAIN, "env", "--json"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=240)
    report = json.loads(proc.stdout)
    assert report["engine"] is not None, report["engine_error"]  # the engine started
    listed = {(p["group"].rpartition(".")[2], p["name"], p["dist"], p["version"])
              for p in report["local"]["plugins"]["plugins"]}
    assert {("pass_kinds", "example", "rps-example-plugin", "0.1.0"),
            ("dlight_rules", "example.ElementwiseVector", "rps-example-plugin", "0.1.0"),
            ("model_formats", "example_mlp", "rps-example-plugin", "0.1.0")} <= listed
    local = {(f["name"], f["dist"]) for f in report["local"]["plugins"]["failures"]}
    engine = {(f["name"], f["dist"]) for f in report["engine"]["plugins"]["failures"]}
    assert ("broken", "rps-broken-plugin") in local  # the GUI/CLI process
    assert {("broken", "rps-broken-plugin"), ("broken_cmd", "rps-broken-plugin"),
            ("broken.Rule", "rps-broken-plugin")} <= engine  # the engine (the rule's class is imported there only)
    warnings = [p["message"] for p in report["problems"] if "rps-broken-plugin" in p["message"]]
    assert warnings and "RuntimeError: deliberately broken plug-in" in warnings[0]
    text = run_ok([python, MAIN, "env"], cwd=work, env=env).stdout
    assert "rps-example-plugin 0.1.0: pass kind 'example'" in text and "NOT LOADED: rps-broken-plugin 9.9" in text


def test_a_step_using_a_broken_plugins_rule_fails_naming_it(venv):
    python, env, work = venv
    with open(os.path.join(work, "example_pipeline.json"), encoding="utf-8") as handle:
        doc = json.load(handle)
    doc["steps"][2]["params"]["rules"] = ["broken.Rule", "app.CPUParallel"]
    with open(os.path.join(work, "broken_rule.json"), "w", encoding="utf-8") as handle:
        json.dump(doc, handle)
    proc = subprocess.run([python, MAIN, "run", "broken_rule.json"], cwd=work, env=env, capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "step 3 (dlight.ApplyDefaultSchedule) failed" in proc.stderr
    assert "DLight rule 'broken.Rule' of rps-broken-plugin 9.9: RuntimeError: deliberately broken plug-in" in proc.stderr


GUI_DRIVER = '''
import json, sys, time
from PySide6.QtWidgets import QApplication
from app.application import setup_look_and_language
from app.main_window import MainWindow

app = QApplication([])
setup_look_and_language(app)
window = MainWindow()
messages = []
window.ctx.status_message.connect(lambda text, ms: messages.append(text))
window.show()
deadline = time.monotonic() + 240  # a guard against a hang, not a timing assertion
while time.monotonic() < deadline and not (window.palette.visible_pass_ids() and window.help.engine_info):
    app.processEvents()
    time.sleep(0.05)
for _ in range(20):
    app.processEvents()
print(json.dumps({"ids": window.palette.visible_pass_ids(), "about": window.help.about_text(), "status": messages}))
window.exit_on_signal()
app.processEvents()
'''


def test_the_gui_lists_the_plugins_pass_and_names_the_broken_one(venv):
    python, env, work = venv
    proc = run_ok([python, "-c", GUI_DRIVER], cwd=ROOT, env=env)
    shown = json.loads(proc.stdout.strip().splitlines()[-1])
    assert PASS_ID in shown["ids"] and "relax.FuseTIR" in shown["ids"]  # the palette, plug-in and built-ins
    assert "rps-example-plugin 0.1.0: pass kind &#x27;example&#x27;" in shown["about"]
    assert "rps-broken-plugin 9.9: pass kind &#x27;broken&#x27;" in shown["about"]
    assert any("rps-broken-plugin" in m and "deliberately broken" in m for m in shown["status"]), shown["status"]


def test_the_exported_script_runs_the_plugins_code(venv):
    python, env, work = venv
    script = os.path.join(work, "exported_run.py")
    run_ok([python, MAIN, "export", "example_pipeline.json", "-o", script], cwd=work, env=env)
    out = run_ok([python, script], cwd=work, env=env).stdout  # the model, the pass and the rule from its own copies
    relu = out[out.index("def relu("):]
    assert "T.parallel(" in relu[:800] and "T.vectorized(" in relu[:800], out[-3000:]
