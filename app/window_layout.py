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
from PySide6.QtWidgets import QTabBar

#: Windows narrower than this get the compact layout (palette and pipeline as tabs on the right).
COMPACT_WIDTH = 1400
#: The share of the window's width the graph keeps when the window shrinks (the side docks give way).
GRAPH_SHARE = 0.5
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
    set_corners(win)
    for dock in (win.palette_dock, win.pipeline_dock, win.diff_dock, win.run_dock, win.profile_dock, win.tuning_dock):
        dock.setFloating(False)
        dock.show()  # every pane, closed ones included
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
    hide_stale_tab_bars(win)


def set_corners(win: Any) -> None:
    """The side dock areas span the window's full height (the bottom docks sit between them), from the
    start: stacked under the pipeline, the bottom docks would make the first window taller than 700."""
    area = Qt.DockWidgetArea
    for corner in (Qt.Corner.TopRightCorner, Qt.Corner.BottomRightCorner):
        win.setCorner(corner, area.RightDockWidgetArea)
    for corner in (Qt.Corner.TopLeftCorner, Qt.Corner.BottomLeftCorner):
        win.setCorner(corner, area.LeftDockWidgetArea)


def hide_stale_tab_bars(win: Any) -> None:
    """Hide the dock tab bars Qt left shown outside the window (after ``restoreState`` or a re-tabify an old
    bar stays visible at its last place: a second "Pipeline | Passes" bar drawn over the panes)."""
    inside = win.rect()
    for bar in win.findChildren(QTabBar):
        if bar.parent() is win and bar.isVisible() and not inside.contains(bar.geometry()):
            bar.hide()


def keep_graph_room(win: Any) -> None:
    """After the window shrank: narrow the side docks (down to their minimum widths) so the graph keeps
    :data:`GRAPH_SHARE` of the window's width, as the default layout gives it; when that is not enough, the
    pass palette joins the pipeline's tabs (the compact layout's arrangement). The bottom docks give back
    height above the default third of the window when the graph area is shorter than ``GRAPH_SHARE``."""
    central = win.centralWidget()
    if central is None or not central.isVisible():
        return
    if central.height() < GRAPH_SHARE * win.height():
        bottom = [d for d in (win.diff_dock, win.run_dock, win.profile_dock, win.tuning_dock) if d.isVisible()
                  and not d.isFloating() and win.dockWidgetArea(d) == Qt.DockWidgetArea.BottomDockWidgetArea]
        if bottom and bottom[0].height() > win.height() // 3:
            win.resizeDocks([bottom[0]], [max(bottom[0].minimumSizeHint().height(), win.height() // 3)],
                            Qt.Orientation.Vertical)
    need = int(GRAPH_SHARE * win.width()) + 16 - central.width()  # 16: the graph's margins in its area
    if need <= 0:
        return
    area = Qt.DockWidgetArea
    sides: list[tuple[Any, int, int]] = []  # one dock per side (a tab group has one width), its width, minimum
    for side in (area.LeftDockWidgetArea, area.RightDockWidgetArea):
        shown = [d for d in (win.palette_dock, win.pipeline_dock) if d.isVisible() and not d.isFloating()
                 and win.dockWidgetArea(d) == side]
        if shown:
            sides.append((shown[0], shown[0].width(), shown[0].minimumSizeHint().width()))
    spare = sum(w - low for _d, w, low in sides)
    if spare < need and len(sides) == 2 and win.palette_dock.isVisible():
        win.tabifyDockWidget(win.pipeline_dock, win.palette_dock)  # too narrow for both side by side
        win.pipeline_dock.raise_()
        width = max(win.pipeline_dock.minimumSizeHint().width(), win.width() - int(GRAPH_SHARE * win.width()) - 24)
        win.resizeDocks([win.pipeline_dock], [min(width, win.pipeline_dock.width() + win.palette_dock.width())],
                        Qt.Orientation.Horizontal)
        return
    total = sum(w for _d, w, _low in sides)
    if not sides or total <= 0:
        return
    new = [max(low, w - (need * w + total - 1) // total) for _d, w, low in sides]
    win.resizeDocks([d for d, _w, _low in sides], new, Qt.Orientation.Horizontal)


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
