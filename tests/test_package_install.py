"""An installable package: a wheel built from the checkout, installed into a fresh virtual environment,
runs the built-in model and a bundled pipeline from another folder and ships the compiled zh_CN
translation (the bundled files are package data, found through the package, not through the checkout).

Offline and quick: the wheel is built without build isolation from a copy of the sources, installed with
``--no-deps --no-index``, and the new environment takes its dependencies (TVM, PySide6, numpy ...) from
this interpreter's site-packages through a ``.pth`` file."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.venv_tools import build_wheel, fresh_venv, install, isolated_env, run_ok

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: What the wheel is built from (a copy, so that a stale build/ folder of the checkout cannot leak in).
SOURCES = ("pyproject.toml", "README.md", "DEVELOPERS.md", "main.py", "docs", "pipeline_model", "app", "widgets",
           "resources")

pytestmark = pytest.mark.package


_run = run_ok


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(venv python, console script, clean env, a work folder outside the checkout)``."""
    base = tmp_path_factory.mktemp("package")
    src = base / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.tuning")
    for name in SOURCES:
        path = os.path.join(ROOT, name)
        if os.path.isdir(path):
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    wheel = build_wheel(str(src), str(base / "wheels"), "relax_pipeline_studio-*.whl")
    venv = base / "venv"
    python, purelib = fresh_venv(str(venv))
    install(python, wheel)
    work = base / "elsewhere"
    work.mkdir()
    env = isolated_env(str(base))
    return python, str(venv / "bin" / "relax-pipeline-studio"), env, str(work), purelib


def test_installed_copy_uses_its_own_package_data(installed):
    python, _script, env, work, purelib = installed
    code = ("import pipeline_model, app.i18n; from pipeline_model.resources import resource_path, bundled_pipelines;"
            "print(pipeline_model.__file__); print(resource_path('models', 'mlp.py'));"
            "print(app.i18n.qm_path('zh_CN')); print(sorted(bundled_pipelines()))")
    lines = _run([python, "-c", code], cwd=work, env=env).stdout.splitlines()
    package_file, mlp, qm, names = lines[:4]
    for path in (package_file, mlp, qm):
        assert path.startswith(purelib), (path, purelib)  # the installed copy, not the checkout
    assert os.path.isfile(mlp)
    assert qm.endswith("relax_pipeline_studio_zh_CN.qm") and os.path.getsize(qm) > 1000
    assert "'cpu_build'" in names and "'fusion_walkthrough'" in names
    assert os.path.isfile(os.path.join(purelib, "resources", "styles", "app.qss"))


def test_installed_command_runs_a_bundled_pipeline_from_another_folder(installed):
    _python, script, env, work, _purelib = installed
    proc = _run([script, "run", "builtin:fusion_walkthrough", "--model", "builtin:mlp"], cwd=work, env=env)
    assert "FuseTIR" in proc.stdout or "FuseOps" in proc.stdout, proc.stdout
    bad = subprocess.run([script, "nosuchcommand", "x.json"], cwd=work, env=env, capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "relax-pipeline-studio" in bad.stderr and "run" in bad.stderr


def test_installed_copy_has_the_chinese_ui_and_its_documentation(installed):
    python, _script, env, work, _purelib = installed
    code = ("from PySide6.QtWidgets import QApplication; from app import i18n; a = QApplication([]);"
            "print(i18n.install_translator(a, 'zh_CN') is not None); print(i18n.tr('&File'));"
            "from app.help_controller import doc_files; print([f.name for f in doc_files()])")
    out = _run([python, "-c", code], cwd=work, env=env).stdout.splitlines()
    assert out[0] == "True"
    assert out[1] != "&File" and any("\u4e00" <= ch <= "\u9fff" for ch in out[1]), out
    assert out[2].startswith("['README.md'") and "'MODELS.md'" in out[2], out  # Help ▸ Documentation
