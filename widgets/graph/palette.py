"""What the graph's items paint with: colours, pens, brushes and fonts, in one object (:class:`GraphPalette`)
that the view builds once and refreshes when the application palette changes; the items and the minimap
only read it."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontInfo, QFontMetricsF, QPalette, QPen

from widgets.graph.adapter import CATEGORIES, CHANGED


def blend(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` moved a fraction ``t`` towards ``b`` (opaque)."""
    return QColor(
        round(a.red() * (1 - t) + b.red() * t),
        round(a.green() * (1 - t) + b.green() * t),
        round(a.blue() * (1 - t) + b.blue() * t),
    )


#: Smallest screen size (pixels) a node's name is written at: below it the name is not legible, so the
#: diagram writes names in screen-size text instead (:mod:`widgets.graph.items.labels`).
READABLE_PX = 8.0
#: Screen size (pixels) of a node's name written in screen-size text (far out).
NODE_LABEL_PX = 10.0

#: The profile heat overlay's own colour scale (ColorBrewer RdPu: pale pink to deep purple), far from the
#: amber of "changed by this step" and from the node categories' fills, so heat reads on changed nodes too.
HEAT_STOPS = ("#fcc5c0", "#fa9fb5", "#f768a1", "#dd3497", "#ae017e", "#7a0177")


def heat_colour(t: float) -> QColor:
    """The heat scale's colour for ``t`` in 0..1 (a node's share of the run time over the largest share)."""
    t = min(1.0, max(0.0, float(t)))
    pos = t * (len(HEAT_STOPS) - 1)
    k = min(int(pos), len(HEAT_STOPS) - 2)
    return blend(QColor(HEAT_STOPS[k]), QColor(HEAT_STOPS[k + 1]), pos - k)


def heat_text_colour(t: float) -> QColor:
    """Black or white, whichever reads on :func:`heat_colour` ``(t)``."""
    return QColor("#000000") if heat_colour(t).lightness() > 150 else QColor("#ffffff")


def graph_colors(pal: QPalette) -> dict[str, Any]:
    """The named colours of the diagram for a widget palette (light or dark)."""
    base = pal.color(QPalette.ColorRole.Base)
    text = pal.color(QPalette.ColorRole.Text)
    dark = base.lightness() < 128
    try:
        accent = pal.color(QPalette.ColorRole.Accent)
    except AttributeError:  # Qt < 6.6
        accent = pal.color(QPalette.ColorRole.Highlight)
    changed = QColor("#e0a020") if not dark else QColor("#c88a10")
    tint = 0.22 if dark else 0.16
    return {
        "base": base,
        "text": text,
        "muted": blend(text, base, 0.45),
        "edge": blend(text, base, 0.55),
        "frame_fill": blend(base, QColor("#4a90d9"), 0.06),
        "frame_pen": blend(text, base, 0.7),
        "binding": blend(base, QColor("#4a7bd0"), tint),
        "call": blend(base, QColor("#8a5cd0"), tint),
        "param": blend(base, QColor("#3aa55a"), tint + 0.05),
        "constant": blend(base, QColor("#808080"), tint),
        "output": blend(base, QColor("#d0603a"), tint + 0.05),
        "group": blend(base, QColor("#2a9d8f"), tint + 0.08),
        "stub": blend(base, QColor("#3aa55a"), tint * 0.6),
        "changed": blend(base, changed, 0.75),
        "changed_pen": changed.darker(130) if not dark else changed.lighter(130),
        "border": blend(text, base, 0.5),
        "selection": accent,
        "heat": heat_colour(1.0),
        "heat_text": QColor("#ffffff"),
    }


class GraphPalette:
    """Fonts (from the view's font, fixed) and colours with the pens and brushes built from them (per
    widget palette: :meth:`update_colors`), built once per palette rather than per paint.

    ``brushes``/``box_pens``/``overview_brushes`` are indexed by node category
    (:data:`widgets.graph.adapter.CATEGORIES`); ``char_width`` and ``node_height`` size the node boxes."""

    def __init__(self, font: QFont, pal: QPalette) -> None:
        self.title_font = QFont(font)
        self.title_font.setBold(True)
        self.sub_font = QFont(font)
        self.sub_font.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
        fm_title = QFontMetricsF(self.title_font)
        fm_sub = QFontMetricsF(self.sub_font)
        self.char_width = max(fm_title.horizontalAdvance("m_x0") / 4.0, fm_sub.horizontalAdvance("m_x0") / 4.0) * 1.08
        self.node_height = max(36.0, fm_title.height() + fm_sub.height() + 14.0)
        self.sub_height = fm_sub.height()
        #: Pixel size of the node title font at scale 1, and the view scale from which titles drawn at
        #: their scene size are legible (``READABLE_PX``); below it names are written at screen size.
        self.title_px = float(max(1, QFontInfo(self.title_font).pixelSize()))
        self.text_scale = READABLE_PX / self.title_px
        self.sub_scale = READABLE_PX / float(max(1, QFontInfo(self.sub_font).pixelSize()))
        self.label_font = QFont(font)
        self.label_font.setBold(True)
        self.label_metrics = QFontMetricsF(self.label_font)
        self.label_widths: dict[tuple[int, str], float] = {}  # (pixel size, group label) -> its width
        self.label_fonts: dict[int, Any] = {}  # pixel size -> (label font at that size, its metrics)
        self.label_elided: dict[tuple[str, int], tuple[str, float]] = {}  # (name, room) -> (elided, its width)
        self.label_static: dict[tuple[str, int], Any] = {}  # (label, pixel size) -> its prepared QStaticText
        self.colors: dict[str, Any] = {}
        self.update_colors(pal)

    def update_colors(self, pal: QPalette) -> None:
        """Rebuild the colours, pens and brushes for a widget palette."""
        c = self.colors = graph_colors(pal)
        self.brushes = [QBrush(c[cat]) for cat in CATEGORIES]
        border = QPen(c["border"], 1.0)
        self.box_pens = [border] * len(CATEGORIES)
        self.box_pens[CHANGED] = QPen(c["changed_pen"], 2.4)
        self.overview_brushes = [QBrush(c[cat] if cat != "changed" else c["changed_pen"]) for cat in CATEGORIES]
        self.edge_pen = QPen(c["edge"], 1.3)
        self.edge_pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        self.edge_brush = QBrush(c["edge"])
        self.overview_edge_pen = QPen(c["edge"], 0)  # cosmetic: one pixel at any zoom
        self.frame_brush = QBrush(c["frame_fill"])
        self.frame_pen = QPen(c["frame_pen"], 1.2, Qt.PenStyle.DashLine)
        self.text_pen = QPen(c["text"])
        self.label_bg = blend(c["base"], c["text"], 0.04)
        self.muted_pen = QPen(c["muted"])
