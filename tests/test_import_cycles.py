"""No import cycles in pipeline_model / app / widgets / scripts, from the AST (no module is imported).

Module-level imports (including those inside ``try``/``if`` at module level, but not ``if
TYPE_CHECKING:`` blocks) and function-level imports are collected separately. Module-level cycles must
be zero; counting function-level imports too, no cycle may remain either (issue 17; :data:`PENDING` lists
the ones other parts of issue 17 remove). A pass kind is one folder whose engine half never imports the
kind back, and the engine's handlers and runner import only the pass-kind framework, never a kind.
"""

from __future__ import annotations

import ast
import functools
import os
from typing import Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("pipeline_model", "app", "widgets", "scripts")

#: Cycles (counting function-level imports) that other parts of issue 17 remove on their own branches.
PENDING: list[list[str]] = []
#: The pass-kind framework (``pipeline_model/passkinds/*.py``): what engine code may import from ``passkinds``.
PASSKIND_FRAMEWORK = {"pipeline_model.passkinds", "pipeline_model.passkinds.base", "pipeline_model.passkinds.registry",
                      "pipeline_model.passkinds.context", "pipeline_model.passkinds.evaluate",
                      "pipeline_model.passkinds.report_html", "pipeline_model.passkinds.catalogue_tvm"}


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


@functools.lru_cache(maxsize=None)
def _parsed(module: str) -> tuple[frozenset[str], frozenset[str]]:
    """:func:`_imports` of ``module``, parsed once per session (every test here walks the same graph, and the
    reachability search asks for the same modules thousands of times)."""
    known = _modules()
    top, lazy = _imports(known[module], module, known)
    return frozenset(top), frozenset(lazy)


def _graphs() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    known = _modules()
    top: dict[str, set[str]] = {}
    lazy: dict[str, set[str]] = {}
    for module in known:
        parsed = _parsed(module)
        top[module], lazy[module] = set(parsed[0]), set(parsed[1])
    # importing a submodule imports its package first
    for module in known:
        parent = module.rpartition(".")[0]
        if parent in known and parent != module:
            top[module].add(parent)
    return top, lazy


def test_graph_is_built():
    top, lazy = _graphs()
    assert "pipeline_model.catalogue" in top["pipeline_model.passkinds.catalogue_tvm"]
    assert "pipeline_model.passkinds.base" in top["pipeline_model.passkinds.fuse_by_pattern"]
    assert "pipeline_model.passkinds.fuse_by_pattern.patterns_tvm" in lazy["pipeline_model.passkinds.fuse_by_pattern"]
    assert "pipeline_model.passkinds.fuse_by_pattern.script" in top["pipeline_model.passkinds.fuse_by_pattern.patterns_tvm"]


def _all_edges() -> dict[str, set[str]]:
    """Module-level and function-level imports together, without a package's edges to its own submodules."""
    top, lazy = _graphs()
    return {m: {d for d in top[m] | lazy[m] if not d.startswith(m + ".")} for m in top}


def test_no_cycles_counting_function_level_imports():
    assert [c for c in _cycles(_all_edges()) if c not in PENDING] == []


def _imports_only(module: str) -> frozenset[str]:
    """What ``module`` imports itself (module- and function-level), without the implicit parent package."""
    top, lazy = _parsed(module)
    return top | lazy


def test_kind_engine_halves_never_import_their_kind_back():
    """Every ``passkinds/<kind>/`` module other than ``__init__`` imports nothing that imports the kind."""
    known = _modules()
    graph = _all_edges()
    kinds = {m for m, p in known.items() if m.startswith("pipeline_model.passkinds.") and p.endswith("__init__.py")}
    assert {"pipeline_model.passkinds.dlight", "pipeline_model.passkinds.custom_python"} <= kinds

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            m = todo.pop()
            if m == goal:
                return True
            if m not in seen:
                seen.add(m)
                todo.extend(d for d in _imports_only(m) if d != m)
        return False

    assert graph  # built
    bad = [(m, kind) for kind in kinds for m in known if m.startswith(kind + ".") and reaches(m, kind)]
    assert bad == []


def test_engine_handlers_and_runner_import_no_pass_kind():
    bad = []
    for module in _modules():
        name = module.rpartition(".")[2]
        if module.startswith("pipeline_model.engine.") and (name.startswith("handlers_") or name == "runner"):
            bad += [(module, d) for d in _imports_only(module)
                    if d.startswith("pipeline_model.passkinds") and d not in PASSKIND_FRAMEWORK]
    assert bad == []


def test_no_module_level_cycles():
    top, _ = _graphs()
    # a package importing its own submodules is not a cycle to report: drop package -> child edges
    graph = {m: {d for d in deps if not d.startswith(m + ".")} for m, deps in top.items()}
    assert _cycles(graph) == []


def test_cycles_removed_by_issue_8_stay_removed():
    """catalogue_tvm<->custom pass code, importers.load_tvm<->importers.onnx_tvm, worker<->handlers_*: not even lazily."""
    top, lazy = _graphs()
    both = {m: top[m] | lazy[m] for m in top}

    def edge(a: str, b: str) -> bool:
        return b in both.get(a, set())

    pm = "pipeline_model."
    cat, custom = pm + "passkinds.catalogue_tvm", pm + "passkinds.custom_python.compile_tvm"
    assert not (edge(cat, custom) and edge(custom, cat))
    assert not (edge(pm + "importers.load_tvm", pm + "importers.onnx_tvm") and edge(pm + "importers.onnx_tvm", pm + "importers.load_tvm"))
    for name in ("engine.handlers_build", "engine.handlers_graph", "passkinds.metaschedule.handlers_tvm"):
        assert not edge(pm + name, pm + "engine.worker"), name


def test_detects_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
