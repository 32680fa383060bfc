"""Palette-aware status colours (error, ok, warning, info) and contrast helpers.

Text and marks drawn in a fixed colour must stay readable on a light and on a dark palette: each
status has a light-palette and a dark-palette shade, both with a contrast ratio of at least 4.5:1
(WCAG AA for text) against the palette's base and window colours.
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtGui import QColor, QGuiApplication, QPalette

from widgets.highlight import palette_is_dark

#: (light palette, dark palette) shades per status.
STATUS_COLOURS: dict[str, tuple[str, str]] = {
    "error": ("#b3261e", "#ff7b72"),
    "ok": ("#1e7b3a", "#5fd07f"),
    "warning": ("#935c00", "#f0b450"),
    "info": ("#1f63b0", "#6cb4ff"),
}


def _palette(palette: Optional[QPalette]) -> QPalette:
    if palette is not None:
        return palette
    app = QGuiApplication.instance()
    return app.palette() if app is not None else QPalette()


def status_colour(kind: str, palette: Optional[QPalette] = None) -> QColor:
    """The shade of status ``kind`` ("error", "ok", "warning", "info") for ``palette``
    (default: the application palette)."""
    light, dark = STATUS_COLOURS[kind]
    return QColor(dark if palette_is_dark(_palette(palette)) else light)


def status_css(kind: str, palette: Optional[QPalette] = None) -> str:
    """``#rrggbb`` of :func:`status_colour`, for rich text and style sheets."""
    return status_colour(kind, palette).name()


def blend(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` moved a fraction ``t`` of the way to ``b``."""
    return QColor(
        round(a.red() + (b.red() - a.red()) * t),
        round(a.green() + (b.green() - a.green()) * t),
        round(a.blue() + (b.blue() - a.blue()) * t),
    )


def muted_colour(palette: Optional[QPalette] = None, amount: float = 0.4) -> QColor:
    """The palette's text colour moved ``amount`` towards its base: secondary marks that still read
    on both light and dark palettes (unlike ``Mid``, which is near the base on dark themes)."""
    pal = _palette(palette)
    return blend(pal.color(QPalette.ColorRole.Text), pal.color(QPalette.ColorRole.Base), amount)


def relative_luminance(colour: QColor) -> float:
    """WCAG relative luminance of ``colour``."""

    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.redF()) + 0.7152 * channel(colour.greenF()) + 0.0722 * channel(colour.blueF())


def contrast_ratio(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two colours (1 … 21)."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)
