"""Layering rules of DEVELOPERS.md, checked on the source tree.

- ``pipeline_model`` never imports PySide6, ``app`` or ``widgets`` (AST scan of every file, plus a
  fresh interpreter that imports every TVM-free ``pipeline_model`` module and checks ``sys.modules``);
- ``widgets`` never imports ``app``; nothing the app runs imports the developer tools of ``scripts/``;
- nothing in ``app``/``widgets``/``main.py`` imports TVM (``tvm`` or ``tvm_ffi``), not even lazily, nor an
  engine-side ``pipeline_model`` module;
- inside ``pipeline_model`` only engine-side modules import TVM, named by rule (:func:`tvm_policy`):
  ``*_tvm.py``, ``engine/handlers_*.py``, ``engine/build/*``, ``engine/worker.py`` and ``engine/runner.py``
  anywhere; ``passkinds/*``, ``importers/*``, ``scriptlib/*`` (code copied into exported scripts), ``emit.py`` and ``ir_graph.py`` only inside functions (they are imported
  by the GUI process too, and run their TVM code in the engine); every other module not at all.

Import cycles are checked by ``tests/test_import_cycles.py``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

QT = ("PySide6", "PySide2", "PyQt5", "PyQt6", "shiboken6")
TVM = ("tvm", "tvm_ffi")


def _walk(tree: ast.AST, top_level_only: bool):
    """``ast.walk``, skipping function and lambda bodies when ``top_level_only`` (what runs at import)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if top_level_only and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                todo.extend(child.decorator_list if not isinstance(child, ast.Lambda) else [])
                continue
            todo.append(child)


def imported_modules(source: str, filename: str = "<src>", package: str = "",
                     top_level_only: bool = False) -> list[tuple[str, int]]:
    """Every absolute module name ``source`` imports, with its line (relative imports resolved
    against ``package``; ``importlib.import_module("x")`` / ``__import__("x")`` with a literal count).
    ``top_level_only``: only the imports that run when the module is imported (not inside functions)."""
    tree = ast.parse(source, filename)
    found: list[tuple[str, int]] = []
    for node in _walk(tree, top_level_only):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.append((name, node.lineno))
            if not node.module or node.level:
                found.extend((f"{name}.{alias.name}", node.lineno) for alias in node.names)
        elif isinstance(node, ast.Call):
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if fname in ("import_module", "__import__") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.append((arg.value, node.lineno))
    return found


def _is_under(name: str, roots: tuple[str, ...]) -> bool:
    return any(name == r or name.startswith(r + ".") for r in roots)


def _sources(folder: str) -> list[Path]:
    base = ROOT / folder
    return [base] if base.is_file() else sorted(base.rglob("*.py"))


def violations(folder: str, forbidden: tuple[str, ...], top_level_only: bool = False) -> list[str]:
    """``file:line imports name`` for every import of a forbidden package in ``folder`` (a folder or
    one file)."""
    out = []
    for path in _sources(folder):
        rel = path.relative_to(ROOT)
        package = ".".join(rel.with_suffix("").parts[:-1])
        source = path.read_text(encoding="utf-8")
        for name, line in imported_modules(source, str(rel), package, top_level_only):
            if _is_under(name, forbidden):
                out.append(f"{rel}:{line} imports {name}")
    return out


#: May import TVM anywhere: the engine process's own modules.
ENGINE_SIDE = "engine-side"
#: May import TVM inside functions only (imported by the GUI process, TVM code runs in the engine).
LAZY = "lazy"
#: Must not import TVM at all.
NO_TVM = "no-tvm"


def tvm_policy(rel: str) -> str:
    """The TVM import policy of ``pipeline_model`` file ``rel`` (a POSIX path relative to the root)."""
    parts = rel.removesuffix(".py").split("/")
    stem = parts[-1]
    inside = parts[1:-1]  # sub-packages under pipeline_model
    if stem.endswith("_tvm"):
        return ENGINE_SIDE
    if inside == ["engine"] and (stem.startswith("handlers_") or stem in ("worker", "runner", "context")):
        return ENGINE_SIDE
    if inside == ["engine", "build"]:
        return ENGINE_SIDE
    if inside[:1] in (["passkinds"], ["importers"], ["scriptlib"]) or (not inside and stem in ("emit", "ir_graph")):
        return LAZY
    return NO_TVM


def engine_side_modules() -> list[str]:
    """Dotted names of the engine-side ``pipeline_model`` modules (the GUI never imports them)."""
    out = []
    for path in _sources("pipeline_model"):
        rel = path.relative_to(ROOT)
        if tvm_policy(rel.as_posix()) == ENGINE_SIDE:
            out.append(".".join(rel.with_suffix("").parts))
    return out


def test_scanner_catches_violations() -> None:
    src = (
        "import os\nfrom PySide6 import QtCore\nimport tvm.relax as r\n"
        "def f():\n    import importlib\n    importlib.import_module('app.main_window')\n"
        "from .. import widgets\n"
    )
    names = [n for n, _ in imported_modules(src, package="x.y")]
    assert "PySide6" in names and "tvm.relax" in names and "app.main_window" in names
    assert "x.widgets" in names  # relative import resolved against the package
    assert _is_under("tvm.relax", TVM) and not _is_under("tvmx", TVM)
    # function-level imports are seen, and told apart from what runs at import time
    top = [n for n, _ in imported_modules(src, top_level_only=True)]
    assert "tvm.relax" in top and "PySide6" in top and "app.main_window" not in top
    lazy = "def f():\n    import tvm\nclass C:\n    def m(self):\n        from tvm import relax\n"
    assert [n for n, _ in imported_modules(lazy, top_level_only=True)] == []
    assert {n for n, _ in imported_modules(lazy)} == {"tvm"}


def test_tvm_policy_naming_rule() -> None:
    assert tvm_policy("pipeline_model/passkinds/metaschedule/tasks_tvm.py") == ENGINE_SIDE
    assert tvm_policy("pipeline_model/engine/handlers_build.py") == ENGINE_SIDE
    assert tvm_policy("pipeline_model/engine/worker.py") == ENGINE_SIDE
    assert tvm_policy("pipeline_model/engine/runner.py") == ENGINE_SIDE
    assert tvm_policy("pipeline_model/passkinds/dlight/__init__.py") == LAZY
    assert tvm_policy("pipeline_model/passkinds/dlight/script.py") == LAZY
    assert tvm_policy("pipeline_model/passkinds/dlight/report_tvm.py") == ENGINE_SIDE
    assert tvm_policy("pipeline_model/engine/build/measure.py") == ENGINE_SIDE
    assert tvm_policy("pipeline_model/scriptlib/arguments.py") == LAZY
    assert tvm_policy("pipeline_model/importers/onnx.py") == LAZY
    assert tvm_policy("pipeline_model/emit.py") == LAZY
    assert tvm_policy("pipeline_model/engine/client.py") == NO_TVM
    assert tvm_policy("pipeline_model/engine/protocol.py") == NO_TVM
    assert tvm_policy("pipeline_model/document.py") == NO_TVM
    assert tvm_policy("pipeline_model/cli/run_cmd.py") == NO_TVM
    assert tvm_policy("pipeline_model/runner.py") == NO_TVM  # only engine/runner.py is engine-side


def test_pipeline_model_never_imports_qt_app_or_widgets() -> None:
    assert (ROOT / "pipeline_model" / "document.py").exists()
    assert violations("pipeline_model", QT + ("app", "widgets")) == []


def test_widgets_never_import_app() -> None:
    assert violations("widgets", ("app",)) == []


@pytest.mark.parametrize("folder", ["pipeline_model", "app", "widgets", "main.py"])
def test_product_never_imports_developer_tools(folder: str) -> None:
    # scripts/ (the screenshot tour & co.) drives the app; the app never needs it (nor ships it)
    assert (ROOT / "scripts" / "screenshots" / "tour.py").exists()
    assert violations(folder, ("scripts",)) == []


@pytest.mark.parametrize("folder", ["app", "widgets", "main.py"])
def test_gui_never_imports_tvm(folder: str) -> None:
    assert violations(folder, TVM) == []


@pytest.mark.parametrize("folder", ["app", "widgets", "main.py"])
def test_gui_never_imports_engine_side_modules(folder: str) -> None:
    engine_side = tuple(engine_side_modules())
    assert "pipeline_model.passkinds.metaschedule.tasks_tvm" in engine_side and "pipeline_model.engine.worker" in engine_side
    assert violations(folder, engine_side) == []


def test_only_engine_side_modules_import_tvm() -> None:
    bad = []
    for path in _sources("pipeline_model"):
        rel = path.relative_to(ROOT).as_posix()
        policy = tvm_policy(rel)
        if policy == NO_TVM:
            bad += violations(rel, TVM)
        elif policy == LAZY:
            bad += [f"{v} at module level (only inside functions here)" for v in violations(rel, TVM, True)]
    assert bad == []


def _tvm_free_modules() -> list[str]:
    mods = []
    for path in sorted((ROOT / "pipeline_model").rglob("*.py")):
        if tvm_policy(path.relative_to(ROOT).as_posix()) == ENGINE_SIDE:
            continue  # engine-side modules: TVM by design
        rel = path.relative_to(ROOT).with_suffix("")
        parts = rel.parts[:-1] if rel.parts[-1] == "__init__" else rel.parts
        mods.append(".".join(parts))
    return mods


def test_importing_pipeline_model_pulls_in_neither_qt_nor_tvm() -> None:
    modules = _tvm_free_modules()
    assert "pipeline_model.document" in modules and "pipeline_model.fileformat" in modules
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{QT + TVM + ('app', 'widgets')!r})\n"
        "print(json.dumps(bad))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
