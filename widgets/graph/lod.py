"""Level of detail of the diagram: which scale fit-to-view picks, how names are drawn at a scale, and the
names written in screen-size text over a viewport (what the diagram item paints, for the view and tests).

Three modes by view scale: ``"text"`` (from the palette's ``text_scale``: each box carries its own title,
at least ``READABLE_PX`` on screen), ``"labels"`` (simplified boxes, names in screen-size text) and
``"overview"`` (below ``LOD_SCALE``: plain rectangles, names in screen-size text).
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QRectF
from PySide6.QtGui import QTransform

from widgets.graph.items.diagram import LOD_SCALE
from widgets.graph.items.labels import place_labels
from widgets.graph.palette import GraphPalette
from widgets.graph.prepare import Prepared
from widgets.graph.tiles import visible

#: Fit-to-view never zooms out below the scale where the boxes' own two lines are legible (the palette's
#: ``text_scale`` and ``sub_scale``) for a graph that is at most this many viewports tall (and wide)
#: there: it scrolls instead.
FIT_SCREENS = 4.0
#: A model summary of at most this many boxes (collapsed groups: ``x → layers ×32 → norm → output``) is fitted
#: whole: its names are written at a legible screen size at any scale (the ``labels`` and ``overview``
#: modes), so its whole chain reads at once rather than its top at the scale where shapes are legible too.
CHAIN_NODES = 16


def fit_scale(rect: QRectF, port: QRectF, pal: GraphPalette, nodes: int = 0) -> float:
    """The scale fit-to-view picks for a scene ``rect`` in a viewport ``port``: the whole graph's, raised
    to the scale where titles and shapes are legible (at most 1) when the graph is at most
    ``FIT_SCREENS`` viewports tall and wide there, unless it has ``nodes`` <= ``CHAIN_NODES`` boxes whose
    names the labels write legibly at the whole graph's scale."""
    if rect.isEmpty() or port.isEmpty():
        return 1.0
    fit = min((port.width() - 4) / rect.width(), (port.height() - 4) / rect.height())
    legible = min(1.0, max(pal.text_scale, pal.sub_scale))
    if fit >= legible or 0 < nodes <= CHAIN_NODES:
        return fit
    room = min(FIT_SCREENS * port.width() / rect.width(), FIT_SCREENS * port.height() / rect.height())
    return max(fit, legible) if room >= legible else fit


def label_mode(scale: float, pal: GraphPalette) -> str:
    """``"text"``, ``"labels"`` or ``"overview"`` (see the module docstring) at view ``scale``."""
    if scale < LOD_SCALE:
        return "overview"
    return "text" if scale >= pal.text_scale else "labels"


def screen_labels(p: Prepared, pal: GraphPalette, world: QTransform, exposed: QRectF, port: QRectF,
                  scale: float) -> list[tuple[QRectF, str, float]]:
    """The names the diagram writes in screen-size text over ``port`` (device rectangle, text, font pixel
    size); empty in ``"text"`` mode, where each box carries its title."""
    mode = label_mode(scale, pal)
    if mode == "text":
        return []
    if mode == "overview":
        tiles = visible(p.coarse, p.coarse_starts, p.band_margin, exposed)
    else:
        tiles = visible(p.bands, p.band_starts, p.band_margin, exposed)
    return [(rect, text, float(font.pixelSize()))
            for rect, text, font in place_labels(world, exposed, p, tiles, pal, port=port)]


def fitted_centre(rect: QRectF, port: QRectF, scale: float) -> Optional[tuple[float, float]]:
    """Where to centre the view when fit-to-view raised the scale above the whole graph's: the graph's top,
    horizontally centred (None when the whole graph fits)."""
    if rect.height() * scale <= port.height() and rect.width() * scale <= port.width():
        return None
    half_h = port.height() / (2.0 * scale)
    return rect.center().x(), rect.top() + min(half_h, rect.height() / 2.0)
