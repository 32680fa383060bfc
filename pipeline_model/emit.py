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
by name. This module names no pass kind.

The MetaSchedule CPU set-up (:func:`meta_schedule_target`, :func:`load_tensor_intrinsics`,
:func:`meta_schedule_f_build`, :func:`install_meta_schedule_cpu`) is used by the engine and copied verbatim
(``inspect.getsource``) into exported scripts (:data:`META_SCHEDULE_HELPERS`). It imports TVM lazily, so
this module stays TVM-free.
"""

from __future__ import annotations

import ast
import importlib.util
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


def script_source(module: str, name: str) -> str:
    """Source of the top-level function or class ``name`` of ``module`` (a pass kind's script module), as
    exported scripts hold it: the lines of its definition (decorators included), read from the module's
    file with :mod:`ast`, so the module is not imported (a ``script_tvm`` module, which imports TVM, is read
    in a TVM-free process). Raises :class:`EmitError` when the module or the name is unknown."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise EmitError(f"no script module {module!r}")
    with open(spec.origin, encoding="utf-8") as fh:
        text = fh.read()
    lines = text.splitlines(keepends=True)
    for node in ast.parse(text, spec.origin).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return textwrap.dedent("".join(lines[first - 1:node.end_lineno]))
    raise EmitError(f"{module} defines no {name!r}")


# ---------------------------------------------------------------------------------------------
# MetaSchedule helpers shared by the engine and exported scripts (copied into scripts with inspect.getsource)


def meta_schedule_target(target):
    """``target`` (a Target, dict or JSON/kind string) as a ``tvm.target.Target`` fit for MetaSchedule:
    an llvm target without ``"num-cores"`` gets the number of physical cores (MetaSchedule refuses an
    llvm target without it)."""
    import json
    import os

    from tvm.target import Target

    if isinstance(target, Target):
        if target.kind.name != "llvm" or "num-cores" in (target.attrs or {}):
            return target
        config = {k: v for k, v in dict(target.export()).items() if k in ("kind", "mtriple", "mcpu", "mattr", "mabi")}
    elif isinstance(target, str):
        config = json.loads(target) if target.strip().startswith("{") else {"kind": target}
    else:
        config = dict(target)
    if config.get("kind") == "llvm" and "num-cores" not in config:
        try:
            import psutil

            cores = psutil.cpu_count(logical=False) or psutil.cpu_count()
        except ImportError:
            cores = None
        config["num-cores"] = max(1, int(cores or os.cpu_count() or 1))
    return Target(config)


def load_tensor_intrinsics(target):
    """Register the tensor intrinsics MetaSchedule needs for ``target``, quickly.

    MetaSchedule's ``TuneContext`` runs ``import tvm.s_tir.tensor_intrin``, whose CUDA part alone takes
    about a minute. For a CPU (llvm) target only the CPU intrinsics are loaded: the package is entered in
    ``sys.modules`` without running its ``__init__``, then its CPU submodules are imported; any other
    target loads the whole package as TVM does.
    """
    import importlib
    import importlib.util
    import sys

    name = "tvm.s_tir.tensor_intrin"
    if target.kind.name != "llvm":
        importlib.import_module(name)
        return
    if name not in sys.modules:
        spec = importlib.util.find_spec(name)
        if spec is None:
            return
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        import tvm.s_tir as s_tir_package

        setattr(s_tir_package, "tensor_intrin", package)
    for sub in ("dot_product_common", "x86", "arm_cpu", "riscv_cpu", "rocm", "hexagon"):
        importlib.import_module(f"{name}.{sub}")


def meta_schedule_f_build():
    """The candidate builder function for MetaSchedule's ``LocalBuilder``: the stock ``default_build``
    without its ``import tvm.s_tir.tensor_intrin`` (~40 s in every fresh builder worker, so every stock
    candidate hits the 30 s timeout). A closure, so it is shipped to the workers by value."""

    def rps_build(mod, target, _params):  # runs in a builder worker process
        from tvm.driver import build as tvm_build
        from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock

        mod = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)
        return tvm_build(mod, target=target)

    return rps_build


def install_meta_schedule_cpu(work_dir, options):
    """Make TVM's own ``MetaScheduleTuneTIR`` / ``MetaScheduleTuneIRMod`` passes measure real candidates.

    Those passes call the global functions ``tvm.s_tir.meta_schedule.tune_tir`` / ``tune_relax``, whose
    stock settings measure nothing on a CPU (every candidate hits the builder timeout). This overrides
    them with functions that tune with: a target with ``"num-cores"`` (:func:`meta_schedule_target`),
    only the CPU tensor intrinsics (:func:`load_tensor_intrinsics`), a ``LocalBuilder`` with
    :func:`meta_schedule_f_build`, and a ``LocalRunner`` (or an ``RPCRunner`` for ``runner = "rpc"``)
    measuring with ``EvaluatorConfig(number, repeat, min_repeat_ms)``. ``options`` are the step's tuning
    options (``num_trials_per_iter``, ``cost_model``, ``runner``, ``rpc_host``, ``rpc_port``,
    ``rpc_key``, ``builder_workers``, ``builder_timeout_s``, ``retune`` ...). With ``retune`` the
    database in ``work_dir`` is deleted first. Returns the ``tune_tir`` function; a targeted step sets its
    ``choose`` attribute to a function ``mod -> (trials, space) | None`` (None: leave that PrimFunc
    untuned; ``space``: a MetaSchedule space generator such as ``ms.space_generator.ScheduleFn``).
    """
    import os
    import shutil

    import tvm_ffi
    from tvm.s_tir import meta_schedule as ms
    from tvm.s_tir.meta_schedule import relax_integration, tir_integration

    if options.get("retune"):
        for name in ("database_workload.json", "database_tuning_record.json", "rps_tuning_state.json"):
            if os.path.exists(os.path.join(work_dir, name)):
                os.remove(os.path.join(work_dir, name))
        shutil.rmtree(os.path.join(work_dir, "logs"), ignore_errors=True)
    workers = int(options.get("builder_workers") or 0) or (os.cpu_count() or 1)

    def builder():
        return ms.builder.LocalBuilder(f_build=meta_schedule_f_build(), max_workers=workers,
                                       timeout_sec=float(options.get("builder_timeout_s", 60.0)))

    def runner():
        evaluator = ms.runner.EvaluatorConfig(
            number=int(options.get("number", 10)), repeat=int(options.get("repeat", 1)),
            min_repeat_ms=int(options.get("min_repeat_ms", 20)), enable_cpu_cache_flush=False,
        )
        if options.get("runner") == "rpc":
            rpc_config = ms.runner.RPCConfig(
                tracker_host=str(options.get("rpc_host", "127.0.0.1")), tracker_port=int(options.get("rpc_port", 9190)),
                tracker_key=str(options.get("rpc_key", "local")),
                session_timeout_sec=int(options.get("rpc_session_timeout_s", 60)),
            )
            return ms.runner.RPCRunner(rpc_config=rpc_config, evaluator_config=evaluator, max_workers=1)
        return ms.runner.LocalRunner(timeout_sec=float(options.get("runner_timeout_s", 30.0)), evaluator_config=evaluator)

    per_iter = int(options.get("num_trials_per_iter", 64))
    cost_model = str(options.get("cost_model", "xgb"))
    seed = options.get("seed")

    def tune_tir(mod, target, work_dir, max_trials_global, *_args, space="post-order-apply", **_kwargs):
        choose = getattr(tune_tir, "choose", None)  # set by a targeted step: (trials, space) or None per PrimFunc
        if choose is not None:
            picked = choose(mod)
            if picked is None:
                return mod
            max_trials_global, space = picked
        target = meta_schedule_target(target)
        load_tensor_intrinsics(target)
        tir_integration.tune_tir(
            mod, target, str(work_dir), int(max_trials_global), num_trials_per_iter=per_iter,
            builder=builder(), runner=runner(), cost_model=cost_model, task_scheduler="round-robin", seed=seed,
            space=space,
        )
        return mod

    def tune_relax(mod, params, target, work_dir, max_trials_global, max_trials_per_task=None, op_names=None,
                   *_args, **_kwargs):
        target = meta_schedule_target(target)
        load_tensor_intrinsics(target)
        relax_integration.tune_relax(
            mod, dict(params.items()) if params else {}, target, str(work_dir), int(max_trials_global),
            int(max_trials_per_task) if max_trials_per_task else None, list(op_names) if op_names else None,
            num_trials_per_iter=per_iter, builder=builder(), runner=runner(), cost_model=cost_model, seed=seed,
        )
        return mod

    tvm_ffi.register_global_func("tvm.s_tir.meta_schedule.tune_tir", tune_tir, override=True)
    tvm_ffi.register_global_func("tvm.s_tir.meta_schedule.tune_relax", tune_relax, override=True)
    return tune_tir


#: Helpers an exported script with a MetaSchedule tuning step needs (in this order).
META_SCHEDULE_HELPERS = (meta_schedule_target, load_tensor_intrinsics, meta_schedule_f_build, install_meta_schedule_cpu)


def helper_source(func: Any) -> str:
    """Source of a helper above, for copying into an exported script."""
    return textwrap.dedent(inspect.getsource(func))
