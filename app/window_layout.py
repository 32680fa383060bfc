"""The main window's pane layout: a default that fits the screen, remembered per user.

:func:`apply_default_layout` arranges the docks for the window's size: the right dock area (the
pipeline) spans the full height, so the step list keeps its rows when the bottom dock (diff, Build & Run,
profile, tuning) is open; below :data:`COMPACT_WIDTH` the pass palette shares the right dock with the
pipeline (tabs) so the graph keeps at least half the window's width, above it the palette has the left
side. :func:`restore_layout` brings back the user's own arrangement (``QMainWindow.saveState``, saved on
close under :data:`STATE_KEY`), or the default when there is none or it is of an older layout version.
The graph area itself puts the node details beside the graph or below it, whichever leaves the graph
more room (:class:`app.panels.GraphArea`).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, Qt

#: Windows narrower than this get the compact layout (palette and pipeline as tabs on the right).
COMPACT_WIDTH = 1400
#: Version of the saved dock state; a state of another version is not restored (the default applies).
LAYOUT_VERSION = 2
GEOMETRY_KEY = "window/geometry"
STATE_KEY = "window/state"


def initial_size(win: Any) -> tuple[int, int]:
    """A first window size: 1500×920, or 92 % of the screen's free area when that is smaller."""
    screen = win.screen() if hasattr(win, "screen") else None
    if screen is None:
        return 1500, 920
    free = screen.availableGeometry()
    return min(1500, int(free.width() * 0.92)) or 1500, min(920, int(free.height() * 0.92)) or 920


def apply_default_layout(win: Any) -> None:
    """Arrange ``win``'s docks for its current size (View ▸ Reset Layout, and a first start)."""
    width, height = max(win.width(), 640), max(win.height(), 480)
    area = Qt.DockWidgetArea
    for corner in (Qt.Corner.TopRightCorner, Qt.Corner.BottomRightCorner):
        win.setCorner(corner, area.RightDockWidgetArea)
    for corner in (Qt.Corner.TopLeftCorner, Qt.Corner.BottomLeftCorner):
        win.setCorner(corner, area.LeftDockWidgetArea)
    for dock in (win.palette_dock, win.pipeline_dock, win.diff_dock):
        dock.setFloating(False)
        dock.show()
    if win.dockWidgetArea(win.diff_dock) != area.BottomDockWidgetArea:
        win.addDockWidget(area.BottomDockWidgetArea, win.diff_dock)
    for dock in (win.run_dock, win.profile_dock, win.tuning_dock):  # one tab group (never side by side:
        dock.setFloating(False)                                     # their widths would add up)
        win.tabifyDockWidget(win.diff_dock, dock)
    win.diff_dock.raise_()
    win.addDockWidget(area.RightDockWidgetArea, win.pipeline_dock)
    if width < COMPACT_WIDTH:
        win.tabifyDockWidget(win.pipeline_dock, win.palette_dock)
        win.pipeline_dock.raise_()
        win.resizeDocks([win.pipeline_dock], [max(300, int(width * 0.34))], Qt.Orientation.Horizontal)
        win.resizeDocks([win.diff_dock], [max(180, int(height * 0.33))], Qt.Orientation.Vertical)
    else:
        win.addDockWidget(area.LeftDockWidgetArea, win.palette_dock)
        win.resizeDocks([win.palette_dock, win.pipeline_dock], [max(240, int(width * 0.14)), max(360, int(width * 0.19))],
                        Qt.Orientation.Horizontal)
        win.resizeDocks([win.diff_dock], [max(240, int(height * 0.33))], Qt.Orientation.Vertical)
    panel = win.pipeline_panel
    panel.right_split.setSizes([3, 2])  # the step list first: several steps before the parameters


def restore_layout(win: Any) -> bool:
    """The user's saved window geometry and docks (True); False when there is none (the caller applies
    :func:`apply_default_layout` once the window has its size)."""
    geometry, state = win.settings.value(GEOMETRY_KEY), win.settings.value(STATE_KEY)
    if isinstance(geometry, QByteArray) and not geometry.isEmpty():
        win.restoreGeometry(geometry)
    return isinstance(state, QByteArray) and not state.isEmpty() and bool(win.restoreState(state, LAYOUT_VERSION))


def save_layout(win: Any) -> None:
    """Remember the window's geometry and docks (on close)."""
    win.settings.setValue(GEOMETRY_KEY, win.saveGeometry())
    win.settings.setValue(STATE_KEY, win.saveState(LAYOUT_VERSION))
