"""No import cycles in pipeline_model / app / widgets, from the AST (no module is imported).

Module-level imports (including those inside ``try``/``if`` at module level, but not ``if
TYPE_CHECKING:`` blocks) and function-level imports are collected separately. Module-level cycles must
be zero; the function-level graph (lazy imports) is reported but only checked for the cycles that
issue 8 removed.
"""

from __future__ import annotations

import ast
import os
from typing import Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("pipeline_model", "app", "widgets")


def _module_name(path: str) -> str:
    rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def _modules() -> dict[str, str]:
    out = {}
    for package in PACKAGES:
        for folder, _dirs, files in os.walk(os.path.join(ROOT, package)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    out[_module_name(path)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(name: str, known: dict[str, str]) -> Optional[str]:
    """The known module ``name`` refers to (its longest known prefix), or None for third-party modules."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def _imports(path: str, module: str, known: dict[str, str]) -> tuple[set[str], set[str]]:
    """(module-level, function-level) imported known modules of the file at ``path``."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    top: set[str] = set()
    lazy: set[str] = set()
    is_package = path.endswith("__init__.py")

    def targets(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        assert isinstance(node, ast.ImportFrom)
        base = node.module or ""
        if node.level:
            pkg = module.split(".") if is_package else module.split(".")[:-1]
            pkg = pkg[: len(pkg) - (node.level - 1)]
            base = ".".join(pkg + ([base] if base else []))
        # "from a.b import c" imports a.b, and a.b.c when c is a module
        return [base] + [f"{base}.{a.name}" for a in node.names]

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for name in targets(child):
                    found = _resolve(name, known)
                    if found and found != module:
                        (lazy if in_function else top).add(found)
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, nested)

    visit(tree, False)
    return top, lazy


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def _graphs() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    known = _modules()
    top: dict[str, set[str]] = {}
    lazy: dict[str, set[str]] = {}
    for module, path in known.items():
        top[module], lazy[module] = _imports(path, module, known)
    # importing a submodule imports its package first
    for module in known:
        parent = module.rpartition(".")[0]
        if parent in known and parent != module:
            top[module].add(parent)
    return top, lazy


def test_graph_is_built():
    top, lazy = _graphs()
    assert "pipeline_model.catalogue" in top["pipeline_model.catalogue_tvm"]
    assert "pipeline_model.passkinds.registry" in top["pipeline_model.passkinds.fuse_by_pattern"]
    assert "pipeline_model.custom_pass_tvm" in lazy["pipeline_model.passkinds.evaluate"]


def test_no_module_level_cycles():
    top, _ = _graphs()
    # a package importing its own submodules is not a cycle to report: drop package -> child edges
    graph = {m: {d for d in deps if not d.startswith(m + ".")} for m, deps in top.items()}
    assert _cycles(graph) == []


def test_cycles_removed_by_issue_8_stay_removed():
    """catalogue_tvm<->custom_pass_tvm, importers.load_tvm<->importers.onnx_tvm, worker<->handlers_*: not even lazily."""
    top, lazy = _graphs()
    both = {m: top[m] | lazy[m] for m in top}

    def edge(a: str, b: str) -> bool:
        return b in both.get(a, set())

    pm = "pipeline_model."
    assert not (edge(pm + "catalogue_tvm", pm + "custom_pass_tvm") and edge(pm + "custom_pass_tvm", pm + "catalogue_tvm"))
    assert not (edge(pm + "importers.load_tvm", pm + "importers.onnx_tvm") and edge(pm + "importers.onnx_tvm", pm + "importers.load_tvm"))
    for name in ("handlers_build", "handlers_graph", "handlers_tuning"):
        assert not edge(pm + "engine." + name, pm + "engine.worker"), name


def test_detects_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
