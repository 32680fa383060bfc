"""Layering rules of DEVELOPERS.md, checked on the source tree.

- ``pipeline_model`` never imports PySide6, ``app`` or ``widgets`` (AST scan of every file, plus a
  fresh interpreter that imports every TVM-free ``pipeline_model`` module and checks ``sys.modules``);
- ``widgets`` never imports ``app``;
- nothing in ``app``/``widgets`` imports TVM (``tvm`` or ``tvm_ffi``), not even lazily.
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


def imported_modules(source: str, filename: str = "<src>", package: str = "") -> list[tuple[str, int]]:
    """Every absolute module name ``source`` imports, with its line (relative imports resolved
    against ``package``; ``importlib.import_module("x")`` / ``__import__("x")`` with a literal count)."""
    tree = ast.parse(source, filename)
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
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


def violations(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    """``file:line imports name`` for every import of a forbidden package in ``folder``."""
    out = []
    base = ROOT / folder
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(ROOT)
        package = ".".join(rel.with_suffix("").parts[:-1])
        for name, line in imported_modules(path.read_text(encoding="utf-8"), str(rel), package):
            if _is_under(name, forbidden):
                out.append(f"{rel}:{line} imports {name}")
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


def test_pipeline_model_never_imports_qt_app_or_widgets() -> None:
    assert (ROOT / "pipeline_model" / "document.py").exists()
    assert violations("pipeline_model", QT + ("app", "widgets")) == []


def test_widgets_never_import_app() -> None:
    assert violations("widgets", ("app",)) == []


@pytest.mark.parametrize("folder", ["app", "widgets"])
def test_gui_never_imports_tvm(folder: str) -> None:
    assert violations(folder, TVM) == []


def _tvm_free_modules() -> list[str]:
    mods = []
    for path in sorted((ROOT / "pipeline_model").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        stem = rel.parts[-1]
        if stem.endswith("_tvm") or stem in ("worker", "runner") or stem.startswith("handlers_"):
            continue  # engine-side modules: TVM by design
        parts = rel.parts[:-1] if stem == "__init__" else rel.parts
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
