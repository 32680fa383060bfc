"""How each catalogue pass is constructed, as a small TVM-free expression tree, and its Python source.

One expression drives both the engine and the exported script, so they cannot drift apart: a pass
kind (:mod:`pipeline_model.passkinds`) turns ``(pass_id, validated params)`` into an expression
(:class:`Call`, :class:`ScriptCall`, :class:`Lit`, :class:`Ref`, :class:`ListOf`);
:func:`pipeline_model.passkinds.evaluate.evaluate` *evaluates* it with TVM in the engine, and :func:`render`
writes it as Python source for :mod:`pipeline_model.export`. Every value reaches the source through
``repr()`` of a checked JSON-plain value; module and attribute names are checked identifiers, never user text.

A :class:`ScriptCall` calls a function of a pass kind's ``script`` module (e.g.
``pipeline_model.passkinds.fuse_by_pattern.script.load_pattern_file``): the engine imports that module and
calls the function, and an exported script holds the function's source (:func:`script_source`) and calls it
by name. This module names no pass kind and imports no TVM.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
import math
import os
import re
import textwrap
from dataclasses import dataclass
from typing import Any, Optional, Union

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
#: Characters allowed in a pass id that is written into a script comment.
SAFE_PASS_ID = re.compile(r"^[A-Za-z0-9_.]+$")


class EmitError(ValueError):
    """A step cannot be turned into code (bad id, bad value); the message names the problem."""


@dataclass(frozen=True)
class Lit:
    """A JSON-plain literal value."""

    value: Any


@dataclass(frozen=True)
class Ref:
    """A value known only where the pass is built: ``target``, ``work_dir``, ``base_dir``, ``weights`` (the
    model's own weights; ``params`` in exported scripts) or ``trusted`` (whether custom code is trusted; the
    engine only: a kind whose recipe holds it writes its own export)."""

    name: str


@dataclass(frozen=True)
class Call:
    """``module.attr(*args, **kwargs)``; ``imports`` are modules imported first for side effects."""

    module: str
    attr: str
    args: tuple = ()
    kwargs: tuple = ()  # tuple of (name, expr)
    imports: tuple = ()


@dataclass(frozen=True)
class ListOf:
    """A Python list of expressions."""

    items: tuple


@dataclass(frozen=True)
class ScriptCall:
    """``attr(*args, **kwargs)``, where ``attr`` is a top-level function (or class) of ``module``, a pass kind's
    script module (``pipeline_model.passkinds.<kind>.script``): the engine imports ``module`` and calls it;
    an exported script holds its source (:func:`script_source`) and calls it by name.

    ``needs_trust``: when set, the call runs user code and the engine refuses it without trust, with this
    sentence (after the pass id); ``what``: when set, an exception of the call becomes a plain error
    ``"<pass id>: <what>: <type>: <message>"`` (e.g. ``"pattern file p.py"``).
    """

    module: str
    attr: str
    args: tuple = ()
    kwargs: tuple = ()  # tuple of (name, expr)
    needs_trust: str = ""
    what: str = ""


Expr = Union[Lit, Ref, Call, ListOf, ScriptCall]

#: References an expression may hold; ``trusted`` is whether the user trusts custom code (engine only).
REFS = ("target", "work_dir", "base_dir", "weights", "trusted")


def check_literal(value: Any, where: str = "value") -> Any:
    """Return ``value`` if it is JSON-plain (None/bool/int/finite float/str/list/dict with str keys).

    Raises :class:`EmitError` otherwise; only such values are ever written into code via ``repr``.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise EmitError(f"{where}: {value!r} is not a finite number")
        return value
    if isinstance(value, list):
        return [check_literal(v, where) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise EmitError(f"{where}: object keys must be strings, not {k!r}")
            out[k] = check_literal(v, where)
        return out
    raise EmitError(f"{where}: {type(value).__name__} is not a plain JSON value")


def keyword_args(params: dict[str, Any], names: Optional[list[str]] = None, skip: tuple = ()) -> tuple:
    """``(name, Lit(value))`` pairs of ``params`` (only ``names`` if given; ``skip`` and ``None`` values
    left out); raises :class:`EmitError` for a name that is not an identifier or a value that is not plain."""
    items = []
    for name, value in params.items():
        if names is not None and name not in names:
            continue
        if name in skip or value is None:
            continue
        if not is_identifier(name):
            raise EmitError(f"parameter name {name!r} is not an identifier")
        items.append((name, Lit(check_literal(value, name))))
    return tuple(items)


def is_identifier(name: str) -> bool:
    """Whether ``name`` is a plain Python identifier (what may be written into code as a name)."""
    return bool(_IDENT.match(name or ""))


def comment_safe(text: Any) -> str:
    """``text`` made safe for a ``#`` comment line of generated code: newlines, other control
    characters, backslashes and every non-ASCII character are written as Python escapes, so the
    value stays on its one line whatever it holds (a file name with a newline cannot start code)."""
    return str(text).encode("unicode_escape").decode("ascii")


# ---------------------------------------------------------------------------------------------
# rendering as Python source


def render(expr: Expr, ref_names: Optional[dict[str, str]] = None) -> str:
    """Python source for ``expr`` (a :class:`ScriptCall` as a call of the function by its bare name).

    ``ref_names`` maps :class:`Ref` names to variable names in the generated script.
    """
    refs = {"target": "TARGET", "work_dir": "WORK_DIR", "base_dir": "BASE_DIR", "weights": "params"}
    refs.update(ref_names or {})
    if isinstance(expr, Lit):
        return repr(check_literal(expr.value))
    if isinstance(expr, Ref):
        if expr.name not in refs:
            raise EmitError(f"unknown reference {expr.name!r}")
        return refs[expr.name]
    if isinstance(expr, ListOf):
        return "[" + ", ".join(render(e, ref_names) for e in expr.items) + "]"
    if isinstance(expr, (Call, ScriptCall)):
        if not _DOTTED.match(expr.module) or not _IDENT.match(expr.attr):
            raise EmitError(f"bad callee {expr.module}.{expr.attr}")
        args = [render(a, ref_names) for a in expr.args]
        for name, value in expr.kwargs:
            if not _IDENT.match(name):
                raise EmitError(f"bad keyword {name!r}")
            args.append(f"{name}={render(value, ref_names)}")
        callee = expr.attr if isinstance(expr, ScriptCall) else f"{expr.module}.{expr.attr}"
        return f"{callee}({', '.join(args)})"
    raise EmitError(f"cannot render {type(expr).__name__} inline")


def imports_of(expr: Expr) -> list[str]:
    """Modules the rendered ``expr`` needs imported (callee modules and side-effect imports)."""
    found: list[str] = []

    for e in _walk(expr):
        if isinstance(e, Call):
            for m in (e.module, *e.imports):
                if m not in found:
                    found.append(m)
    return found


def _walk(expr: Any) -> list[Any]:
    """``expr`` and every expression inside it, in pre-order (callee before arguments, left to right)."""
    out = [expr]
    if isinstance(expr, (Call, ScriptCall)):
        for a in expr.args:
            out.extend(_walk(a))
        for _, v in expr.kwargs:
            out.extend(_walk(v))
    elif isinstance(expr, ListOf):
        for a in expr.items:
            out.extend(_walk(a))
    return out


def script_calls(expr: Expr) -> list[ScriptCall]:
    """The :class:`ScriptCall` nodes of ``expr`` (pre-order): the script functions an exported script needs."""
    return [e for e in _walk(expr) if isinstance(e, ScriptCall)]


#: Parsed script modules by file: (mtime_ns, size, lines, top-level statements); read again when the file changes.
_PARSED: dict[str, tuple[int, int, list[str], list[ast.stmt]]] = {}


def _script_module(module: str) -> tuple[list[str], list[ast.stmt]]:
    """(lines, top-level statements) of a pass kind's script module, read without importing it (parsed once per
    version of the file: an export reads the same few modules many times, ~5 ms each)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise EmitError(f"no script module {module!r}")
    try:
        st = os.stat(spec.origin)
    except OSError as exc:
        raise EmitError(f"no script module {module!r}: {exc.strerror or exc}") from None
    cached = _PARSED.get(spec.origin)
    if cached is not None and cached[:2] == (st.st_mtime_ns, st.st_size):
        return cached[2], cached[3]
    with open(spec.origin, encoding="utf-8") as fh:
        text = fh.read()
    lines, body = text.splitlines(keepends=True), ast.parse(text, spec.origin).body
    _PARSED[spec.origin] = (st.st_mtime_ns, st.st_size, lines, body)
    return lines, body


def _definition(module: str, name: str, lines: list[str], body: list[ast.stmt]) -> tuple[ast.AST, str]:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return node, textwrap.dedent("".join(lines[first - 1:node.end_lineno]))
    raise EmitError(f"{module} defines no {name!r}")


def script_source(module: str, name: str) -> str:
    """Source of the top-level function or class ``name`` of ``module`` (a pass kind's script module), as
    exported scripts hold it: the lines of its definition (decorators included), read from the module's
    file with :mod:`ast`, so the module is not imported (a ``script_tvm`` module, which imports TVM, is read
    in a TVM-free process). Raises :class:`EmitError` when the module or the name is unknown."""
    lines, body = _script_module(module)
    return _definition(module, name, lines, body)[1]


def script_sources(module: str, name: str) -> list[str]:
    """What an exported script needs to define ``name`` of ``module``: the sources of the classes it derives from
    (bases first, each once) and of the module's top-level functions it names (its parts, e.g. the helpers of a
    pass), each once and before what uses it, then its own (:func:`script_source`). A base class of the same
    module, or one imported by name at the top of it from another ``pipeline_model`` module or a module of the same
    top-level package (``from pipeline_model.passkinds.dlight.rules.app_rule_tvm import AppRule``), is copied; a
    base from elsewhere (``tvm.s_tir.dlight.ScheduleRule``) is the script's import, not copied."""
    out: list[str] = []

    def add(mod: str, wanted: str, seen: tuple[tuple[str, str], ...]) -> None:
        if (mod, wanted) in seen:
            raise EmitError(f"{mod}: class {wanted!r} derives from itself")
        lines, body = _script_module(mod)
        node, source = _definition(mod, wanted, lines, body)
        if isinstance(node, ast.ClassDef):
            local = {n.name for n in body if isinstance(n, ast.ClassDef)}
            imported = _copied_imports(mod, body)
            for base in node.bases:
                if isinstance(base, ast.Name) and base.id in local:
                    add(mod, base.id, (*seen, (mod, wanted)))
                elif isinstance(base, ast.Name) and base.id in imported:
                    add(imported[base.id], base.id, (*seen, (mod, wanted)))
        functions = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        callers = {w for m, w in seen if m == mod}
        for part in sorted(used & functions - {wanted, *callers}):  # a function calling back into its caller: once
            add(mod, part, (*seen, (mod, wanted)))
        if source not in out:
            out.append(source)

    add(module, name, ())
    return out


def _copied_imports(module: str, body: list[ast.stmt]) -> dict[str, str]:
    """``{name: module}`` of the top-level ``from M import name`` statements of ``module`` whose classes an
    exported script copies: ``M`` in ``pipeline_model`` or in ``module``'s own top-level package."""
    roots = {"pipeline_model", module.partition(".")[0]}
    out = {}
    for node in body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.partition(".")[0] in roots:
            for alias in node.names:
                if alias.asname is None:
                    out[alias.name] = node.module
    return out


# ---------------------------------------------------------------------------------------------
# MetaSchedule helpers shared by the engine and exported scripts (copied into scripts with inspect.getsource)


@functools.lru_cache(maxsize=None)
def helper_source(func: Any) -> str:
    """Source of a helper function or class (dedented), for copying into an exported script.

    Kept per helper object: an export copies ~50 helpers, and ``inspect.getsource`` re-tokenizes each one's
    file (two thirds of an export's time); a reloaded plug-in's helpers are new objects, read afresh."""
    return textwrap.dedent(inspect.getsource(func))
