"""How each catalogue pass is constructed, as a small TVM-free expression tree, and its Python source.

One table drives both the engine and the exported script, so they cannot drift apart:
:func:`recipe_for` asks the pass's kind (:mod:`pipeline_model.passkinds`) to turn ``(pass_id,
validated params)`` into an expression (:class:`Call`,
:class:`Lit`, :class:`Ref`, :class:`CustomCode`, :class:`PatternFile`);
:func:`pipeline_model.catalogue_tvm.make_pass` *evaluates* it with TVM, and :func:`render` writes it as
Python source for :mod:`pipeline_model.export`. Every value reaches the source through ``repr()`` of a
checked JSON-plain value; module and attribute names are checked identifiers, never user text.

The helpers :func:`pick_custom_pass` and :func:`load_pattern_file` are used by the engine and copied
verbatim (``inspect.getsource``, :func:`helper_source`) into exported scripts. They import TVM lazily, so
this module stays TVM-free.
"""

from __future__ import annotations

import inspect
import math
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
    """A value known only where the pass is built: ``target``, ``work_dir``, ``base_dir`` or ``weights`` (the
    model's own weights; ``params`` in exported scripts)."""

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
class PatternFile:
    """The ``patterns`` list of a user pattern file (path as given; resolved against ``base_dir``)."""

    path: str


@dataclass(frozen=True)
class CustomCode:
    """A custom pass given as Python source; ``label`` names it in tracebacks."""

    source: str
    label: str


Expr = Union[Lit, Ref, Call, ListOf, PatternFile, CustomCode]

REFS = ("target", "work_dir", "base_dir", "weights")


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


def custom_label(step_number: Optional[int]) -> str:
    """The pseudo file name a custom step's source is compiled under, e.g. ``<custom step 3>``."""
    return f"<custom step {step_number}>" if step_number is not None else "<custom step>"


def recipe_for(pass_id: str, params: dict[str, Any], *, step_number: Optional[int] = None) -> Expr:
    """The construction of ``pass_id`` with (already validated) ``params`` as an expression tree.

    The construction comes from the pass's kind (:mod:`pipeline_model.passkinds`). Raises
    :class:`EmitError` for an id no kind knows how to build.
    """
    from pipeline_model.passkinds.registry import kind_for

    params = dict(params or {})
    if not SAFE_PASS_ID.match(pass_id or ""):
        raise EmitError(f"pass id {pass_id!r} has characters other than letters, digits, '_' and '.'")
    kind = kind_for(pass_id)
    if kind is None:
        raise EmitError(f"no construction known for pass {pass_id!r}")
    return kind.recipe(pass_id, params, step_number=step_number)


# ---------------------------------------------------------------------------------------------
# rendering as Python source


def render(expr: Expr, ref_names: Optional[dict[str, str]] = None) -> str:
    """Python source for ``expr`` (custom code and pattern files are rendered by the exporter).

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
    if isinstance(expr, Call):
        if not _DOTTED.match(expr.module) or not _IDENT.match(expr.attr):
            raise EmitError(f"bad callee {expr.module}.{expr.attr}")
        args = [render(a, ref_names) for a in expr.args]
        for name, value in expr.kwargs:
            if not _IDENT.match(name):
                raise EmitError(f"bad keyword {name!r}")
            args.append(f"{name}={render(value, ref_names)}")
        return f"{expr.module}.{expr.attr}({', '.join(args)})"
    if isinstance(expr, PatternFile):
        return f"load_pattern_file({repr(check_literal(expr.path))}, BASE_DIR)"
    raise EmitError(f"cannot render {type(expr).__name__} inline")


def imports_of(expr: Expr) -> list[str]:
    """Modules the rendered ``expr`` needs imported (callee modules and side-effect imports)."""
    found: list[str] = []

    def walk(e: Any) -> None:
        if isinstance(e, Call):
            for m in (e.module, *e.imports):
                if m not in found:
                    found.append(m)
            for a in e.args:
                walk(a)
            for _, v in e.kwargs:
                walk(v)
        elif isinstance(e, ListOf):
            for a in e.items:
                walk(a)

    walk(expr)
    return found


def check_custom_source(source: str, label: str) -> None:
    """Compile ``source`` under ``label``; raise :class:`SyntaxError` naming the line if it is invalid."""
    compile(source, label, "exec")


def render_custom_function(func_name: str, source: str, label: str) -> str:
    """A function ``func_name()`` whose body is the user's source verbatim (indented), returning its pass."""
    if not _IDENT.match(func_name):
        raise EmitError(f"bad function name {func_name!r}")
    body = textwrap.indent(source.rstrip("\n") + "\n", "    ", lambda line: True) if source.strip() else "    pass\n"
    return (
        f"def {func_name}():\n"
        f"    # ---- user source of {label} begins (verbatim) ----\n"
        f"{body}"
        f"    # ---- user source of {label} ends ----\n"
        f"    return pick_custom_pass(dict(locals()), {func_name}.__code__.co_filename, {label!r})\n"
    )


# ---------------------------------------------------------------------------------------------
# helpers shared by the engine and exported scripts (copied into scripts with inspect.getsource)


def pick_custom_pass(namespace, filename, label):
    """Pick the pass a custom step's source defines and return it as a ``tvm.transform.Pass``.

    Candidates, in order of preference: the last ``tvm.transform.Pass`` instance defined by the
    source, else the last pass class (decorated with ``@tvm.transform.module_pass`` or
    ``@relax.transform.function_pass``; instantiated without arguments), else the last plain
    function defined in the source (``IRModule -> IRModule``), wrapped with
    ``tvm.transform.module_pass(opt_level=0)``. Names starting with ``_`` are ignored.
    """
    import tvm

    instances, classes, functions = [], [], []
    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        if isinstance(value, tvm.transform.Pass):
            instances.append(value)
        elif isinstance(value, type) and issubclass(value, tvm.transform.Pass):
            classes.append(value)
        elif inspect.isfunction(value) and value.__code__.co_filename == filename:
            functions.append(value)
    if instances:
        return instances[-1]
    if classes:
        return classes[-1]()
    if functions:
        func = functions[-1]
        nargs = len(inspect.signature(func).parameters)

        def _custom(mod, _ctx):
            result = func(mod) if nargs == 1 else func(mod, _ctx)
            if not isinstance(result, tvm.ir.IRModule):
                raise TypeError(f"{label}: {func.__name__}() returned {type(result).__name__}, not an IRModule")
            return result

        return tvm.transform.module_pass(_custom, opt_level=0, name=func.__name__)
    raise ValueError(
        f"{label} defines no pass: define a tvm.transform.Pass, a class decorated with "
        "@tvm.transform.module_pass, or a function taking an IRModule and returning one"
    )


def load_pattern_file(path, base_dir):
    """Run a user pattern file and return its ``patterns`` list for ``FuseOpsByPattern``.

    ``patterns`` items are ``tvm.relax.transform.FusionPattern`` objects or ``(name, pattern)`` /
    ``(name, pattern, check)`` tuples built with ``tvm.relax.dpl``. Relative paths are relative to
    ``base_dir`` (the pipeline file's folder).
    """
    import os
    import runpy

    import tvm.relax.transform

    full = path if os.path.isabs(path) or not base_dir else os.path.join(base_dir, path)
    if not os.path.isfile(full):
        raise FileNotFoundError(f"pattern file not found: {full}")
    namespace = runpy.run_path(full, run_name="relax_patterns")
    patterns = namespace.get("patterns")
    if not isinstance(patterns, (list, tuple)) or not patterns:
        raise ValueError(f"{full}: define a non-empty list named 'patterns'")
    out = []
    for i, item in enumerate(patterns):
        if isinstance(item, tvm.relax.transform.FusionPattern):
            out.append(item)
        elif isinstance(item, tuple) and len(item) == 3 and callable(item[2]):
            out.append(tvm.relax.transform.FusionPattern(item[0], item[1], check=item[2]))
        elif isinstance(item, tuple) and 2 <= len(item) <= 5:
            out.append(tvm.relax.transform.FusionPattern(*item))
        else:
            raise ValueError(f"{full}: patterns[{i}] is not a FusionPattern or a (name, pattern[, check]) tuple")
    return out


def helper_source(func: Any) -> str:
    """Source of a helper function or class (dedented), for copying into an exported script."""
    return textwrap.dedent(inspect.getsource(func))
