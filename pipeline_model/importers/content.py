"""The bytes of a model file, read once: consent and loading see the same content (issue 20).

The engine checks consent on a model file's content (its SHA-256) and then loads it. Reading the file again by
path to load it would let a file replaced in between run unchecked. So the engine reads a code-bearing model
file (a ``.py`` model, a ``.pt2`` archive) once, checks consent on those bytes, and *pins* them for the load
(:func:`pinned`): every loader reads the file through :func:`read_bytes` / :func:`read_text`, which return the
pinned bytes while the pin holds (and read the file, with :mod:`pipeline_model.safe_files`' checks, otherwise).
:func:`exec_python` runs a model ``.py`` file from its text (what ``runpy.run_path`` did, without the second read).

TVM-free and Qt-free.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import os
import threading
from typing import Any, Iterator

from pipeline_model import safe_files

#: Largest model file read into memory (ONNX and ``.pt2`` archives of large models are big).
MAX_MODEL_BYTES = 16 * 1024 * 1024 * 1024

_local = threading.local()


def _pins() -> dict[str, bytes]:
    pins = getattr(_local, "pins", None)
    if pins is None:
        pins = _local.pins = {}
    return pins


def _key(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


@contextlib.contextmanager
def pinned(path: str, data: bytes) -> Iterator[None]:
    """While this holds (in this thread), :func:`read_bytes` of ``path`` returns ``data``."""
    pins = _pins()
    key = _key(path)
    previous = pins.get(key)
    pins[key] = data
    try:
        yield
    finally:
        if previous is None:
            pins.pop(key, None)
        else:
            pins[key] = previous


def pinned_bytes(path: str) -> "bytes | None":
    """The bytes pinned for ``path`` in this thread, or ``None``."""
    return _pins().get(_key(path))


def read_bytes(path: str, what: str = "model file") -> bytes:
    """The pinned bytes of ``path``, else the file's bytes (a regular file only; size-capped)."""
    data = _pins().get(_key(path))
    if data is not None:
        return data
    return safe_files.read_bytes(path, what, MAX_MODEL_BYTES)


def read_text(path: str, what: str = "model file") -> str:
    """:func:`read_bytes` as UTF-8 text (``UnicodeDecodeError`` for other bytes)."""
    return read_bytes(path, what).decode("utf-8")


def sha256(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def exec_python(path: str, text: str, run_name: str = "__rps_model__") -> dict[str, Any]:
    """Run the Python ``text`` of the file ``path`` as a script (``__name__`` = ``run_name``, ``__file__`` =
    ``path``; tracebacks name the file and line) and return its globals — what ``runpy.run_path`` does, from the
    text already read."""
    import sys
    import types

    code = compile(text, path, "exec")
    module = types.ModuleType(run_name)  # in sys.modules while it runs, as runpy does (TVMScript's parser looks it up)
    module.__dict__.update({"__file__": path, "__builtins__": builtins, "__package__": None, "__loader__": None,
                            "__cached__": None})
    saved = sys.modules.get(run_name)
    sys.modules[run_name] = module
    try:
        exec(code, module.__dict__)  # noqa: S102 - the user's model file, run only with consent (pipeline_model.consent)
        return dict(module.__dict__)
    finally:
        if saved is None:
            sys.modules.pop(run_name, None)
        else:
            sys.modules[run_name] = saved
