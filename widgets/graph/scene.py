"""The graph's scene: the diagram item, the selection outline above it, or a message in the middle."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QObject, QRectF, Qt
from PySide6.QtGui import QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsScene, QGraphicsSimpleTextItem

from widgets.graph.items.diagram import DiagramItem
from widgets.graph.palette import GraphPalette
from widgets.graph.prepare import Prepared


class GraphScene(QGraphicsScene):
    """At most three items: :attr:`diagram` (the whole graph), :attr:`selection` (the selected node's
    outline) and :attr:`message` (a text shown instead of a graph). The scene needs no item index: the
    diagram finds what to paint in its own tile index."""

    def __init__(self, palette: GraphPalette, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self.palette = palette
        self.diagram: Optional[DiagramItem] = None
        self.selection: Optional[QGraphicsPathItem] = None
        self.message: Optional[QGraphicsSimpleTextItem] = None

    def show_message(self, message: str) -> None:
        """Remove everything; show ``message`` (if any) in the middle."""
        self.clear()
        self.diagram = None
        self.selection = None
        self.message = None
        if message:
            self.message = self.addSimpleText(message)
            self.message.setBrush(self.palette.colors["muted"])
            self.setSceneRect(self.message.boundingRect().adjusted(-40, -40, 40, 40))

    def show_prepared(self, prepared: Prepared, cats: list[int], heat: dict[int, float]) -> DiagramItem:
        """Replace the scene by the diagram of ``prepared`` and a hidden selection outline."""
        self.show_message("")
        item = DiagramItem(prepared, self.palette)
        item.cats = cats
        item.heat = heat
        self.setSceneRect(item.boundingRect())
        self.addItem(item)
        self.diagram = item
        sel = QGraphicsPathItem()
        sel.setZValue(20)
        sel.setVisible(False)
        self.addItem(sel)
        self.selection = sel
        return item

    def set_selection(self, rect: Optional[QRectF], radius: float = 0.0) -> None:
        """Outline a node box (``rect`` with corner ``radius``), or hide the outline (None)."""
        if rect is None:
            if self.selection is not None:
                self.selection.setVisible(False)
            return
        assert self.selection is not None
        path = QPainterPath()
        path.addRoundedRect(rect, radius, radius)
        self.selection.setPath(path)
        self.selection.setVisible(True)

    def apply_colors(self) -> None:
        """Repaint the items in the palette's current colours."""
        c = self.palette.colors
        if self.message is not None:
            self.message.setBrush(c["muted"])
        if self.selection is not None:
            self.selection.setPen(QPen(c["selection"], 3.0))
            self.selection.setBrush(Qt.BrushStyle.NoBrush)
        if self.diagram is not None:
            self.diagram.update()
