"""The ``--shape NAME=DIM`` option of the commands that load a model: pin a symbolic dimension (see
:mod:`pipeline_model.importers.dims`)."""

from __future__ import annotations

import argparse
from typing import Optional

from pipeline_model.importers.dims import DimsError, join_spec, parse_dims, spec_dims


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


__all__ = ["DimsError", "add_argument", "apply"]
