"""Keeping a group in view across an expand/collapse (Model Explorer's behaviour): where a group is drawn,
and the scroll that puts it back under the viewport point it was clicked at."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QPoint, QPointF, QRectF
from PySide6.QtWidgets import QGraphicsView

from widgets.graph.prepare import Prepared


def group_rect(p: Optional[Prepared], group_id: str) -> Optional[QRectF]:
    """Where a group is drawn (scene coordinates): its frame when expanded, its box when collapsed."""
    if p is None:
        return None
    if group_id in p.index:
        return QRectF(*p.rects[p.index[group_id]])
    for rect, _label, gid, _kind in p.frames:
        if gid == group_id:
            return QRectF(rect)
    return None


def anchor_point(view: QGraphicsView, rect: QRectF) -> QPoint:
    """The viewport point of a group's top edge (its middle): what stays put."""
    return view.mapFromScene(QPointF(rect.center().x(), rect.top()))


def restore(view: QGraphicsView, rect: QRectF, where: QPoint) -> None:
    """Scroll so the top edge of ``rect`` is back at viewport point ``where``; then, if the group is not
    wholly visible, as little more as shows it whole (or its top part, title included, when it is larger
    than the view)."""
    now = view.mapToScene(where)
    centre = view.mapToScene(view.viewport().rect().center())
    view.centerOn(centre + QPointF(rect.center().x(), rect.top()) - now)
    seen = view.mapToScene(view.viewport().rect()).boundingRect()
    if seen.contains(rect):
        return
    if rect.height() <= seen.height() * 0.9 and rect.width() <= seen.width() * 0.9:
        view.ensureVisible(rect, 20, 20)
    else:
        view.ensureVisible(QRectF(rect.left(), rect.top(), min(rect.width(), seen.width() * 0.9),
                                  seen.height() * 0.5), 20, 20)
