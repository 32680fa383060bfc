"""Engine half of the ``custom_python`` kind: a custom step's Python source built into a pass (imports TVM).

The source is compiled under the pseudo file name ``<custom step N>`` so syntax errors and tracebacks
name the line, executed in a fresh namespace, and the pass it defines is picked by
:func:`pipeline_model.passkinds.custom_python.script.pick_custom_pass` (the function exported scripts
contain). Running user code requires trust: without it :func:`make_custom_pass` refuses with a clear
message. The kind's recipe names :func:`make_custom_pass` by its dotted name.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import linecache
import traceback
from typing import Any

import tvm

from pipeline_model.passkinds.context import UNTRUSTED_MESSAGE, PassConfigError
from pipeline_model.passkinds.custom_python.script import pick_custom_pass


def _user_line(exc: BaseException, label: str) -> str:
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == label:
            return f"line {frame.lineno}: {frame.line or ''}".rstrip(": ")
    return ""


def make_custom_pass(source: str, label: str = "<custom step>", *, trusted: bool = False) -> tvm.transform.Pass:
    """Execute ``source`` in a fresh namespace and return the pass it defines.

    Raises :class:`PassConfigError` when untrusted, on a syntax error (naming the line), when running
    the source fails (naming the line) or when it defines no pass.
    """
    if not trusted:
        raise PassConfigError(f"{label}: {UNTRUSTED_MESSAGE}")
    if not source.strip():
        raise PassConfigError(f"{label}: the source is empty")
    try:
        code = compile(source, label, "exec")
    except SyntaxError as exc:
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        text = (exc.text or "").rstrip()
        raise PassConfigError(f"{label}: syntax error at {where}: {exc.msg}" + (f": {text.strip()}" if text else "")) from None
    # Make the source visible to traceback/linecache so tracebacks show the user's lines.
    linecache.cache[label] = (len(source), None, source.splitlines(True), label)
    namespace: dict = {"__name__": "custom_step", "__builtins__": builtins, "__file__": label}
    try:
        exec(code, namespace)  # noqa: S102 - trusted user code, by explicit consent
    except (SystemExit, KeyboardInterrupt) as exc:  # would end the engine: a plain message instead
        raise PassConfigError(exit_message(exc, label)) from None
    except Exception as exc:  # noqa: BLE001
        line = _user_line(exc, label)
        raise PassConfigError(f"{label}: {line + ': ' if line else ''}{type(exc).__name__}: {exc}") from exc
    try:
        # The user's functions are wrapped so SystemExit/KeyboardInterrupt raised when the pass runs get a
        # plain message (through TVM's FFI they would arrive as "RuntimeError: 4" or a bare "RuntimeError").
        guarded = {name: (_guard_exit(value, label) if inspect.isfunction(value) and value.__code__.co_filename == label
                          else value) for name, value in namespace.items()}
        return pick_custom_pass(guarded, _guard_exit.__code__.co_filename, label)
    except Exception as exc:  # noqa: BLE001
        raise PassConfigError(str(exc) if label in str(exc) else f"{label}: {exc}") from exc


def exit_message(exc: BaseException, label: str) -> str:
    """A plain message for ``SystemExit``/``KeyboardInterrupt`` raised by a custom step's code."""
    line = _user_line(exc, label)
    what = (f"raised SystemExit({exc.code!r}) (what sys.exit() does)" if isinstance(exc, SystemExit) and exc.code is not None
            else f"raised {type(exc).__name__}")
    return (f"{label}: {line + ': ' if line else ''}the code {what}; a custom step must return an IRModule or "
            "raise an exception (e.g. ValueError) to fail, not exit or interrupt the engine")


def _guard_exit(func: Any, label: str) -> Any:
    """``func`` with ``SystemExit``/``KeyboardInterrupt`` turned into a ``RuntimeError`` with a plain message."""

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (SystemExit, KeyboardInterrupt) as exc:
            raise RuntimeError(exit_message(exc, label)) from None

    return guarded
