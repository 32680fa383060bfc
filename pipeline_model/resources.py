"""Where the app's bundled files are: the one helper every module uses to find them.

The bundled files (built-in models, example pipelines, custom passes, pattern files, the style sheet,
the translations) live in the top-level ``resources`` package: the ``resources/`` folder of a checkout,
package data in an installed copy (``pip install .``). They are found through the package
(:mod:`importlib.resources`), never through a path relative to this file. A bundled pipeline can be named
``builtin:<name>`` on the command line (``builtin:cpu_build`` is ``resources/pipelines/cpu_build.json``),
as a built-in model is ``builtin:mlp``. TVM-free and Qt-free.
"""

from __future__ import annotations

import argparse
import os
from importlib import resources as _importlib_resources
from pathlib import Path

#: The package holding the bundled files.
PACKAGE = "resources"
#: Prefix naming a bundled pipeline (and a built-in model): ``builtin:<name>``.
BUILTIN_PREFIX = "builtin:"


def resource_root() -> Path:
    """The folder of the ``resources`` package (a real folder: the package is installed as files)."""
    root = _importlib_resources.files(PACKAGE)
    if not isinstance(root, Path):  # a zip import or a namespace package: not how the app ships
        raise RuntimeError(f"the {PACKAGE!r} package is not a folder of files ({root!r})")
    return root


def resource_path(*parts: str) -> Path:
    """The path of a bundled file or folder, e.g. ``resource_path("models", "mlp.py")`` (it may not exist)."""
    return resource_root().joinpath(*parts)


def is_resource(path: str) -> bool:
    """True for a path inside the bundled files (the app's own: code there needs no consent)."""
    real = os.path.realpath(path)
    root = os.path.realpath(resource_root())
    return real == root or real.startswith(root + os.sep)


def bundled_pipelines() -> dict[str, Path]:
    """The bundled example pipelines: name (file stem) -> path, sorted by name."""
    folder = resource_path("pipelines")
    return {p.stem: p for p in sorted(folder.glob("*.json"))} if folder.is_dir() else {}


def bundled_pipeline(name: str) -> Path:
    """The path of bundled pipeline ``name`` (``cpu_build`` or ``builtin:cpu_build``); ``KeyError`` naming
    the bundled pipelines when there is no such one."""
    stem = name[len(BUILTIN_PREFIX):] if name.startswith(BUILTIN_PREFIX) else name
    stem = stem[:-5] if stem.endswith(".json") else stem
    known = bundled_pipelines()
    if stem not in known:
        raise KeyError(f"no bundled pipeline {name!r}: choose one of "
                       + ", ".join(f"{BUILTIN_PREFIX}{n}" for n in known))
    return known[stem]


def pipeline_argument(text: str) -> str:
    """A command line's pipeline argument as a path: ``builtin:<name>`` is the bundled pipeline of that
    name, anything else is returned unchanged. Raises ``argparse.ArgumentTypeError`` naming the bundled
    pipelines for an unknown name (as an ``argparse`` ``type=``: a usage error, exit 2)."""
    if not text.startswith(BUILTIN_PREFIX):
        return text
    try:
        return str(bundled_pipeline(text))
    except KeyError as exc:
        raise argparse.ArgumentTypeError(exc.args[0]) from None
