"""The "where values diverge" overlay's data: :class:`NodeError` per node of the full graph, the error colour
scale, and the marks the diagram paints per node of the view (a collapsed group shows its worst member).

The scale is ColorBrewer's RdYlGn read from green to red, on the relative error ``max |diff| / max |ref|``
measured against the check's tolerance, on a log scale: a node whose status is ``ok`` sits in the green-yellow
half (green: 10^-4 of the tolerance or less, yellow: at the tolerance), a node that ``diverges`` in the
orange-red part (orange: just over the tolerance, red: 1000 times it and more). The status decides the half,
so a colour never says "ok" of a node the check failed, whatever its number. "No counterpart" (a value the
step made that has nothing to compare with) is not an error: grey, with a dashed outline.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Mapping, NamedTuple, Optional

from PySide6.QtGui import QColor

from widgets.graph.palette import blend

OK = "ok"
DIVERGES = "diverges"
NO_COUNTERPART = "no counterpart"
#: How bad a status is (a collapsed group shows its worst member).
RANK = {NO_COUNTERPART: 0, OK: 1, DIVERGES: 2}

#: (position 0..1, colour) of the error scale; 0.5 is the tolerance.
ERROR_STOPS = ((0.0, "#1a9850"), (0.25, "#a6d96a"), (0.5, "#fee08b"), (0.6, "#fdae61"), (0.8, "#f46d43"),
               (1.0, "#d73027"))
#: Where the scale's "ok" half ends and its "diverges" part starts.
OK_END, DIVERGES_START = 0.5, 0.6
#: Steps of the colour scale (colours are looked up, not blended, per node).
BINS = 64
#: The grey of "no counterpart".
NO_COUNTERPART_COLOUR = "#8c8c8c"


@dataclass(frozen=True)
class NodeError:
    """What the overlay knows of one node: ``status`` (``ok``, ``diverges``, ``no counterpart``),
    ``rel_error`` (max |diff| / max |ref|; None when not measured) and a plain-text ``tooltip`` line."""

    status: str
    rel_error: Optional[float] = None
    tooltip: str = ""


class ErrorMark(NamedTuple):
    """What the diagram paints on one view node: the status, the position on the scale, the pill text (the
    relative error of a diverging node; empty otherwise) and its entry in :func:`colour_table` (-1: from
    ``status`` and ``t``)."""

    status: str
    t: float
    label: str = ""
    colour: int = -1


def scale_position(error: NodeError, tolerance: float) -> float:
    """Where ``error`` sits on the scale (0..1) for the check's relative ``tolerance``."""
    rel = error.rel_error
    if error.status == DIVERGES:
        if rel is None or not math.isfinite(rel) or rel <= 0.0 or tolerance <= 0.0:
            return 1.0
        over = math.log10(max(rel / tolerance, 1.0)) / 3.0  # 1x .. 1000x the tolerance
        return DIVERGES_START + (1.0 - DIVERGES_START) * min(1.0, over)
    if rel is None or not math.isfinite(rel) or rel <= 0.0 or tolerance <= 0.0:
        return 0.0
    under = (math.log10(min(rel / tolerance, 1.0)) + 4.0) / 4.0  # 1e-4 .. 1x the tolerance
    return OK_END * min(1.0, max(0.0, under))


def scale_colour(t: float) -> QColor:
    """The scale's colour at ``t`` (0..1), as on the legend's bar."""
    t = min(1.0, max(0.0, float(t)))
    for (t0, c0), (t1, c1) in zip(ERROR_STOPS, ERROR_STOPS[1:]):
        if t <= t1:
            return blend(QColor(c0), QColor(c1), (t - t0) / (t1 - t0) if t1 > t0 else 0.0)
    return QColor(ERROR_STOPS[-1][1])


def colour_index(mark: ErrorMark) -> int:
    """The mark's entry in :func:`colour_table` (the scale in ``BINS`` steps; the last entry: no counterpart)."""
    if mark.colour >= 0:
        return mark.colour
    return BINS if mark.status == NO_COUNTERPART else round(min(1.0, max(0.0, mark.t)) * (BINS - 1))


@functools.lru_cache(maxsize=8)
def colour_table(base_rgb: int) -> tuple[tuple[QColor, ...], tuple[QColor, ...]]:
    """Fills and outlines of every :func:`colour_index` on a background of ``base_rgb`` (built once per
    background: a repaint of thousands of coloured nodes looks its colours up). Fills are the scale's colour
    toned towards the background so the theme's text reads on it (black on light, white on dark); outlines
    are the scale's colour, darkened on a light view. Shared objects: never changed by a caller."""
    base = QColor.fromRgb(base_rgb)
    dark = base.lightness() < 128
    raw = [scale_colour(k / (BINS - 1)) for k in range(BINS)]
    fills = [blend(base, c, 0.45 if dark else 0.6) for c in raw]
    fills.append(blend(base, QColor(NO_COUNTERPART_COLOUR), 0.3 if dark else 0.22))
    raw.append(QColor(NO_COUNTERPART_COLOUR))
    outlines = [c if dark else c.darker(125) for c in raw]
    return tuple(fills), tuple(outlines)


def fill_colour(mark: ErrorMark, base: QColor) -> QColor:
    """A node box's fill for ``mark`` on a view whose background is ``base`` (see :func:`colour_table`)."""
    return colour_table(base.rgb())[0][colour_index(mark)]


def outline_colour(mark: ErrorMark, base: QColor) -> QColor:
    """The outline of a coloured box (see :func:`colour_table`)."""
    return colour_table(base.rgb())[1][colour_index(mark)]


def first_colour(base: QColor) -> QColor:
    """The first diverging node's outline and badge."""
    return QColor("#ff6f61") if base.lightness() < 128 else QColor("#b2182b")


def error_label(rel: Optional[float]) -> str:
    """A relative error as the pill of a diverging node writes it (``0.12``, ``3.4e-05``)."""
    if rel is None or not isinstance(rel, (int, float)):
        return ""
    if not math.isfinite(rel):
        return "inf" if rel > 0 else "nan"
    return f"{rel:.2g}"


def view_marks(errors: Mapping[str, NodeError], tolerance: float, rep: Mapping[str, str],
               index: Mapping[str, int]) -> dict[int, ErrorMark]:
    """The marks of the view nodes (index -> mark) for ``errors`` of full-graph nodes: a node shown in a
    collapsed group marks the group with its worst member's status (the largest error among those); ids
    not in the view are left out."""
    worst: dict[int, NodeError] = {}
    for full_id, error in errors.items():
        vid = full_id if full_id in index else rep.get(full_id)
        if vid is None or vid not in index:
            continue
        i = index[vid]
        held = worst.get(i)
        if held is None or _worse(error, held):
            worst[i] = error
    marks = {}
    for i, e in worst.items():
        t = scale_position(e, tolerance)
        marks[i] = ErrorMark(e.status, t, error_label(e.rel_error) if e.status == DIVERGES else "",
                             BINS if e.status == NO_COUNTERPART else round(t * (BINS - 1)))
    return marks


def _worse(a: NodeError, b: NodeError) -> bool:
    ra, rb = RANK.get(a.status, 0), RANK.get(b.status, 0)
    if ra != rb:
        return ra > rb
    return (a.rel_error or 0.0) > (b.rel_error or 0.0)
