"""The ``--shape NAME=DIM`` option of the commands that load a model: pin a symbolic dimension (see
:mod:`pipeline_model.importers.dims`); and ``--input-shape NAME=DIM`` of ``run --build``: the symbolic dims of
the inputs the built module runs on, the model staying dynamic (a name given again is one more run of the
same built module)."""

from __future__ import annotations

import argparse
from typing import Optional

from pipeline_model.importers.dims import DimsError, join_spec, parse_dim, parse_dims, spec_dims


def add_argument(parser: argparse.ArgumentParser) -> None:
    """Add the repeatable ``--shape NAME=DIM`` option to ``parser``."""
    parser.add_argument("--shape", metavar="NAME=DIM", action="append", default=[],
                        help="pin the model's symbolic dimension NAME to DIM at load time (repeatable, e.g. "
                             "--shape seq=8 --shape batch=1; adds to the pipeline file's pinned dimensions)")


def apply(spec: str, items: Optional[list[str]]) -> str:
    """``spec`` with the ``--shape`` items pinned on top of the pins it has; :class:`DimsError` (one line)
    for a bad item."""
    if not items:
        return spec
    dims = spec_dims(spec)
    dims.update(parse_dims(list(items)))
    return join_spec(spec, dims)


def add_input_shape_argument(parser: "argparse.ArgumentParser | argparse._ArgumentGroup") -> None:
    """Add the repeatable ``--input-shape NAME=DIM`` option to ``parser``."""
    parser.add_argument("--input-shape", metavar="NAME=DIM", action="append", default=[],
                        help="run the built module on seeded inputs whose symbolic dimension NAME is DIM (default 1), "
                             "the model staying dynamic; a NAME given again runs the same built module once more "
                             "(e.g. --input-shape seq=32 --input-shape seq=128: one build, two runs, each checked)")


def input_runs(items: Optional[list[str]]) -> list[dict[str, int]]:
    """The symbolic dims of each run from ``--input-shape`` items: run ``k`` takes the ``k``-th value given
    for each name (a name given fewer times keeps its last value); ``[{}]`` for no items. :class:`DimsError`
    (one line) for a bad item."""
    values: dict[str, list[int]] = {}
    for item in items or []:
        name, value = parse_dim(item)
        values.setdefault(name, []).append(value)
    count = max([len(v) for v in values.values()] or [1])
    return [{name: vals[min(k, len(vals) - 1)] for name, vals in values.items()} for k in range(count)]


__all__ = ["DimsError", "add_argument", "add_input_shape_argument", "apply", "input_runs"]
