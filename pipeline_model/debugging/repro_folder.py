"""Reading a reproducer folder someone else made, before anything in it is trusted (issue 32).

``main.py reduce DIR`` and the GUI's Reduce Reproducer… read ``repro.json`` and ``repro.py`` to say what the
reproducer expects — before the user is asked to trust its code. Those files may be hostile: a FIFO (an ``open()``
blocks for ever), a link to ``/dev/zero`` (a read never ends), a huge file, JSON that is not an object, has the
wrong types or nests 100,000 levels deep. Here each file is read with :mod:`pipeline_model.safe_files` (regular
files only, opened non-blocking, under a size cap) and ``repro.json`` is validated field by field; any problem is
a :class:`ReproducerFolderError` with one line naming the file (never a traceback, never a hang). TVM-free and
Qt-free.
"""

from __future__ import annotations

import ast
import json
import os
import stat
from typing import Any, Iterable

from pipeline_model import safe_files

#: Size caps: ``repro.json`` (a few KiB when the app writes it), ``repro.py`` (the module's TVMScript inlined),
#: and the data files (``module.json``, ``inputs.npz``, read by the engine once the code is trusted).
MAX_SPEC_BYTES = 4 * 1024 * 1024
MAX_REPRO_BYTES = 64 * 1024 * 1024
MAX_DATA_BYTES = 2 * 1024 * 1024 * 1024

#: The fields of ``repro.json`` that must be there, and the JSON type of each field that may be.
_REQUIRED = ("kind", "expected", "target", "pass_context", "step_index", "pass_id")
_TYPES: dict[str, tuple[type, ...]] = {
    "kind": (str,), "expected": (dict,), "target": (dict,), "pass_context": (dict,), "step_index": (int,),
    "pass_id": (str,), "params": (dict,), "function": (str,), "error": (str,), "tvm_version": (str,),
    "build_flags": (dict,), "python_version": (str,), "pieces": (list,), "has_module_json": (bool,),
    "has_inputs": (bool,), "bindings": (int, type(None)), "note": (str,),
}
_TYPE_NAMES = {str: "a string", dict: "an object", int: "an integer", list: "a list", bool: "true or false",
               type(None): "null"}


class ReproducerFolderError(ValueError):
    """A reproducer folder that cannot be read safely or says nonsense; the one-line message names the file."""


def _folder(folder: str) -> str:
    full = os.path.abspath(folder)
    root = safe_files.special_root(full)
    if root is not None:
        raise ReproducerFolderError(f"reproducer folder {folder} is under {root} (a system folder); refused")
    try:
        st = os.stat(full)
    except OSError as exc:
        raise ReproducerFolderError(f"reproducer folder {folder}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise ReproducerFolderError(f"reproducer folder {folder} is {safe_files.kind_of(st.st_mode)}, not a folder")
    return full


def _text(path: str, max_bytes: int) -> str:
    try:
        return safe_files.read_text(path, "reproducer file", max_bytes)
    except OSError as exc:  # UnsafeFileError: FIFO, device, link into /dev, too big, not UTF-8, missing
        raise ReproducerFolderError(str(exc).splitlines()[0] if str(exc) else f"cannot read {path}") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _check_fields(path: str, data: Any, kinds: Iterable[str]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ReproducerFolderError(f"{path}: not a reproducer description (a JSON object); it holds "
                                    f"{_TYPE_NAMES.get(type(data), type(data).__name__)}")
    for key in _REQUIRED:
        if key not in data:
            raise ReproducerFolderError(f"{path}: the field {key!r} is missing")
    for key, types in _TYPES.items():
        if key in data:
            value = data[key]
            if isinstance(value, bool) and bool not in types:
                ok = False
            else:
                ok = isinstance(value, types)
            if not ok:
                wanted = " or ".join(_TYPE_NAMES[t] for t in types)
                raise ReproducerFolderError(f"{path}: {key} must be {wanted}")
    if data["kind"] not in tuple(kinds):
        raise ReproducerFolderError(f"{path}: kind {str(data['kind'])[:40]!r} is not one of {', '.join(kinds)}")
    if data["step_index"] < -1 or data["step_index"] > 1_000_000:  # -1: no step (reproducer.NO_STEP)
        raise ReproducerFolderError(f"{path}: step_index {data['step_index']} is out of range")
    for i, piece in enumerate(data.get("pieces") or []):
        if not isinstance(piece, dict) or not all(
                isinstance(v, list) and all(isinstance(x, str) for x in v) for v in piece.values()):
            raise ReproducerFolderError(f"{path}: pieces[{i}] must be an object of lists of strings")
    return data


def read_json(path: str, kinds: Iterable[str]) -> dict[str, Any]:
    """``repro.json`` at ``path``, read safely and validated; :class:`ReproducerFolderError` otherwise."""
    text = _text(path, MAX_SPEC_BYTES)
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ReproducerFolderError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise ReproducerFolderError(f"{path}: nested too deeply to be a reproducer description") from None
    except ValueError as exc:
        raise ReproducerFolderError(f"{path}: {exc}") from None
    return _check_fields(path, data, kinds)


def module_text(path: str) -> str:
    """The ``MODULE_TEXT`` string literal of the ``repro.py`` at ``path`` (parsed, never run)."""
    source = _text(path, MAX_REPRO_BYTES)
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise ReproducerFolderError(f"{path}: line {exc.lineno}: not valid Python ({exc.msg})") from None
    except (RecursionError, MemoryError, ValueError):
        raise ReproducerFolderError(f"{path}: cannot be parsed (nested too deeply, or not Python text)") from None
    text = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "MODULE_TEXT" for t in node.targets):
            try:
                text = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                raise ReproducerFolderError(f"{path}: line {node.lineno}: MODULE_TEXT is not a string literal") from None
    if not isinstance(text, str):
        raise ReproducerFolderError(f"{path}: holds no MODULE_TEXT (not a reproducer's repro.py)")
    return text


def describe(folder: str, kinds: Iterable[str]) -> dict[str, Any]:
    """``repro.json``'s fields of the reproducer ``folder``, and ``repro.py`` checked to be a regular file under
    the cap without reading it: quick enough for the GUI thread (a few stats and one JSON file of at most
    :data:`MAX_SPEC_BYTES`; nothing that can block)."""
    full = _folder(folder)
    data = read_json(os.path.join(full, "repro.json"), tuple(kinds))
    try:
        safe_files.check_regular(os.path.join(full, "repro.py"), "reproducer file", MAX_REPRO_BYTES)
    except OSError as exc:
        raise ReproducerFolderError(str(exc)) from None
    return data


def read(folder: str, kinds: Iterable[str]) -> tuple[dict[str, Any], str]:
    """``(repro.json's fields, repro.py's module text)`` of the reproducer ``folder``, read safely."""
    full = _folder(folder)
    kinds = tuple(kinds)
    data = read_json(os.path.join(full, "repro.json"), kinds)
    return data, module_text(os.path.join(full, "repro.py"))
