"""Code that the engine runs and exported scripts contain, one copy of each rule.

Each module here is TVM-free when imported (TVM is imported inside the functions that need it) and is
copied whole into exported scripts by :func:`module_source`, so the script runs the very code the engine
runs: :mod:`.threads` (how many cores TVM's CPU runtime uses), :mod:`.functions` (which Relax function
runs), :mod:`.arguments` (the inputs and weights it runs on), :mod:`.outputs` (flattening, warm-up,
timing and the numerical check), :mod:`.quant_reference` (a quantized model's reference: the model evaluated in
float64), :mod:`.pickles` (which pickles in a model archive could run code: the
consent rule, and the guard of an exported script that loads a ``.pt2``), :mod:`.building` (``tvm.compile`` with the
PrimFuncs compiled on every core), :mod:`.files` (the files a script writes: never through a link or into a device), :mod:`.sys_path` (an exported script's or reproducer's first statement: nothing
imported from the folder it lies in or is run from), :mod:`.dynamic_import` (the ONNX/PyTorch import of models
with a dynamic axis: in the loaders of exported scripts, not in :data:`SCRIPT_MODULES`). A module here may import another one of them (the script holds their
code in :data:`SCRIPT_MODULES` order, so the names exist there), the standard library and numpy.
"""

from __future__ import annotations

import ast
import importlib
import inspect

#: The modules exported scripts contain, in the order their code is placed (later ones use earlier ones).
SCRIPT_MODULES = ("threads", "functions", "arguments", "outputs", "quant_reference", "building", "files")


def _start_line(node: ast.stmt, lines: list[str]) -> int:
    """First line (1-based) of ``node`` with its decorators and the comment lines right above it."""
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    while start > 1 and lines[start - 2].lstrip().startswith("#"):
        start -= 1
    return start


def _is_own_import(node: ast.stmt) -> bool:
    """An import the script must not copy: ``__future__`` or one of this package's modules (whose code the
    script holds itself)."""
    if isinstance(node, ast.ImportFrom):
        return node.module in ("__future__",) or (node.module or "").startswith("pipeline_model")
    return isinstance(node, ast.Import) and any(a.name.startswith("pipeline_model") for a in node.names)


def module_source(name: str, imports: bool = True) -> str:
    """The code of ``pipeline_model.scriptlib.<name>`` for an exported script: its imports of the standard
    library and numpy (``imports``; not ``__future__``, not this package's, not ``if TYPE_CHECKING:``
    blocks), then every other top-level statement (with the comments right above it) except the module
    docstring, blocks separated by two blank lines."""
    module = importlib.import_module(f"{__name__}.{name}")
    source = inspect.getsource(module)
    lines = source.splitlines()
    head: list[str] = []
    blocks: list[str] = []
    for index, node in enumerate(ast.parse(source).body):
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the module docstring
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if imports and not _is_own_import(node):
                head.append(ast.unparse(node))
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        end = node.end_lineno or node.lineno
        blocks.append("\n".join(lines[_start_line(node, lines) - 1:end]))
    body = "\n\n\n".join(blocks) + "\n"
    return ("\n".join(head) + "\n\n\n" + body) if head else body


def script_source(names: tuple[str, ...] = SCRIPT_MODULES) -> str:
    """The code of the modules ``names`` for an exported script, each under a comment naming it (the script
    names no ``pipeline_model`` module: it runs without this package)."""
    parts = [f"# ---- scriptlib/{name}.py: the same code as the app runs ----\n\n{module_source(name)}"
             for name in names]
    return "\n\n".join(parts)
