"""Qt list model over a pipeline document's steps (``QtPipelineModel``).

The model is read-only with respect to the document: it shows steps together with the latest engine
results, and turns user gestures (drops, moves, checkbox toggles) into *request* signals. The
application turns those requests into undo commands, edits the document and then tells the model to
refresh. This keeps every edit on the undo stack.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QAbstractListModel,
    QByteArray,
    QCoreApplication,
    QMimeData,
    QModelIndex,
    QPersistentModelIndex,
    QPointF,
    QRectF,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPainter, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QApplication

from pipeline_model.document import PipelineDocument, Step
from pipeline_model.engine.results import (
    CANCELLED,
    CHANGED,
    FAILED,
    NOT_RUN,
    RUNNING,
    SKIPPED,
    UNCHANGED,
    StepResult,
)
from widgets.error_trace import error_html
from widgets.highlight import palette_is_dark
from widgets.pass_notes import unknown_pass_html
from widgets.theme import muted_colour, status_colour
from widgets.units import format_duration_ms

#: MIME type of a pass dragged out of the palette: UTF-8 JSON ``{"pass_id": ...}``.
MIME_PASS = "application/x-rps-pass"
#: MIME type of steps dragged inside the pipeline list: UTF-8 JSON ``{"uids": [...]}``.
MIME_STEP = "application/x-rps-step"

#: The item data roles, numbered from ``UserRole + 1`` in this order. ``BisectRole``: the step's mark from the last
#: Find Breaking Step (``"culprit"``, ``"pass"``, ``"fail"``, ``"skip"`` or ``None``).
(TitleRole, PassIdRole, EnabledRole, StateRole, ElapsedRole, CachedRole, ErrorRole, NestedRole, UidRole, ResultRole,
 StepRole, CompositeRole, BisectRole) = (Qt.ItemDataRole.UserRole + n for n in range(1, 14))

BISECT_CULPRIT, BISECT_PASS, BISECT_FAIL, BISECT_SKIP = "culprit", "pass", "fail", "skip"
#: Labels of the bisect marks (English; shown through ``QtPipelineModel.tr``).
BISECT_LABELS = {
    BISECT_CULPRIT: QT_TRANSLATE_NOOP("QtPipelineModel", "breaking step"),
    BISECT_PASS: QT_TRANSLATE_NOOP("QtPipelineModel", "bisect: good"),
    BISECT_FAIL: QT_TRANSLATE_NOOP("QtPipelineModel", "bisect: bad"),
    BISECT_SKIP: QT_TRANSLATE_NOOP("QtPipelineModel", "bisect: skipped"),
}
#: The culprit's colour: a violet apart from the state colours, mid value so it reads on light and dark bases.
CULPRIT_COLOUR = "#a35ad6"

#: Human labels for step states (English; shown through ``QtPipelineModel.tr``).
STATE_LABELS = {
    NOT_RUN: QT_TRANSLATE_NOOP("QtPipelineModel", "not run"),
    RUNNING: QT_TRANSLATE_NOOP("QtPipelineModel", "running…"),
    CHANGED: QT_TRANSLATE_NOOP("QtPipelineModel", "changed"),
    UNCHANGED: QT_TRANSLATE_NOOP("QtPipelineModel", "unchanged"),
    FAILED: QT_TRANSLATE_NOOP("QtPipelineModel", "failed"),
    SKIPPED: QT_TRANSLATE_NOOP("QtPipelineModel", "skipped"),
    CANCELLED: QT_TRANSLATE_NOOP("QtPipelineModel", "cancelled"),
}

# State colours: chosen to read on light and dark backgrounds alike (mid saturation, mid value;
# at least 3:1 against white and against a dark base). Neutral states derive from the palette.
_STATE_COLOURS = {
    NOT_RUN: None,  # palette text blended towards the base
    RUNNING: "#3d8bd9",
    CHANGED: "#2fa84f",
    UNCHANGED: None,  # palette placeholder colour
    FAILED: "#d9443d",
    SKIPPED: None,
    CANCELLED: None,  # amber: darker on light palettes, lighter on dark ones
}


def _json_mime(mime: QMimeData, mime_type: str, value: dict) -> QMimeData:
    """``mime`` carrying ``value`` as UTF-8 JSON under ``mime_type``."""
    mime.setData(mime_type, QByteArray(json.dumps(value).encode("utf-8")))
    return mime


def _json_mime_field(mime: QMimeData, mime_type: str, key: str) -> Any:
    """Field ``key`` of the JSON object ``mime`` carries under ``mime_type``; ``None`` when absent or malformed."""
    if not mime.hasFormat(mime_type):
        return None
    try:
        return json.loads(bytes(mime.data(mime_type).data()).decode("utf-8")).get(key)
    except (ValueError, AttributeError):
        return None


def pass_mime_data(pass_id: str) -> QMimeData:
    """The MIME data a palette drag carries for ``pass_id``."""
    mime = _json_mime(QMimeData(), MIME_PASS, {"pass_id": pass_id})
    mime.setText(pass_id)
    return mime


def step_mime_data(uids: list[str]) -> QMimeData:
    """The MIME data a pipeline-internal drag carries for the steps ``uids``."""
    return _json_mime(QMimeData(), MIME_STEP, {"uids": list(uids)})


def parse_pass_mime(mime: QMimeData) -> Optional[str]:
    """The pass id in palette MIME data, or ``None`` when absent or malformed."""
    pass_id = _json_mime_field(mime, MIME_PASS, "pass_id")
    return pass_id if isinstance(pass_id, str) and pass_id else None


def parse_step_mime(mime: QMimeData) -> Optional[list[str]]:
    """The step uids in pipeline MIME data, or ``None`` when absent or malformed."""
    uids = _json_mime_field(mime, MIME_STEP, "uids")
    if not isinstance(uids, list) or not all(isinstance(u, str) for u in uids) or not uids:
        return None
    return uids


def state_colour(state: str, palette: Optional[QPalette] = None) -> QColor:
    """The colour a step state is drawn with (palette-derived for the neutral states)."""
    name = _STATE_COLOURS.get(state)
    if name:
        return QColor(name)
    palette = palette or QApplication.palette()
    if state == CANCELLED:
        return QColor("#e0a030") if palette_is_dark(palette) else QColor("#a86b00")
    if state == UNCHANGED:
        return palette.color(QPalette.ColorRole.PlaceholderText)
    # Not ``Mid``: on dark themes it is close to the base and the hollow disc disappears.
    return muted_colour(palette, 0.45)


_icon_cache: dict[tuple[str, int], QIcon] = {}


def bisect_colour(mark: str) -> QColor:
    """The colour of a bisect mark: violet for the culprit, the state colours for a good / bad module."""
    if mark == BISECT_CULPRIT:
        return QColor(CULPRIT_COLOUR)
    if mark == BISECT_PASS:
        return state_colour(CHANGED)
    if mark == BISECT_FAIL:
        return state_colour(FAILED)
    return muted_colour(QApplication.palette(), 0.45)


def _draw_badge(painter: QPainter, mark: str, size: int) -> None:
    """A bisect mark in the lower right corner of a ``size`` icon: a disc with a tick, cross or dash, ringed
    with the base colour so it stands apart from the state disc under it."""
    d = size * 0.55
    x = y = size - d - 0.2
    colour = bisect_colour(mark)
    painter.setPen(QPen(QApplication.palette().color(QPalette.ColorRole.Base), 1.2))
    painter.setBrush(QBrush(colour))
    painter.drawEllipse(QRectF(x, y, d, d))
    painter.setPen(QPen(QColor("white"), 1.3))
    cx, cy, r = x + d / 2, y + d / 2, d * 0.22
    if mark == BISECT_PASS:
        painter.drawLine(QPointF(cx - r, cy), QPointF(cx - r * 0.2, cy + r * 0.8))
        painter.drawLine(QPointF(cx - r * 0.2, cy + r * 0.8), QPointF(cx + r, cy - r * 0.8))
    elif mark == BISECT_FAIL:
        painter.drawLine(QPointF(cx - r, cy - r), QPointF(cx + r, cy + r))
        painter.drawLine(QPointF(cx - r, cy + r), QPointF(cx + r, cy - r))
    else:
        painter.drawLine(QPointF(cx - r, cy), QPointF(cx + r, cy))


def culprit_icon(size: int = 16) -> QIcon:
    """The icon of the breaking step a bisection found: a violet disc with a white exclamation mark."""
    def draw(painter: QPainter) -> None:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QBrush(QColor(CULPRIT_COLOUR)))
        painter.drawEllipse(QRectF(1, 1, size - 2, size - 2))
        painter.setPen(QPen(QColor("white"), max(1.8, size / 8)))
        c = size / 2.0
        painter.drawLine(QPointF(c, size * 0.24), QPointF(c, size * 0.58))
        painter.drawPoint(QPointF(c, size * 0.76))

    return _painted_icon(("culprit|" + QApplication.palette().color(QPalette.ColorRole.Base).name(), size), size, draw)


def _painted_icon(key: tuple[str, int], size: int, draw: Callable[[QPainter], None], ratio: int = 2) -> QIcon:
    """The icon cached under ``key``, else one ``draw`` paints (antialiased) on a transparent ``size`` pixmap."""
    cached = _icon_cache.get(key)
    if cached is None:
        pix = QPixmap(size * ratio, size * ratio)
        pix.setDevicePixelRatio(ratio)
        pix.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pix)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        draw(painter)
        painter.end()
        cached = _icon_cache[key] = QIcon(pix)
    return cached


def state_icon(state: str, size: int = 16, badge: Optional[str] = None) -> QIcon:
    """A small icon for a step state: a disc (filled for changed/failed/running, hollow otherwise); ``badge``
    (a bisect mark, ``"pass"`` / ``"fail"`` / ``"skip"``) adds a small corner disc."""
    palette = QApplication.palette()
    key = (state + "|" + (badge or "") + "|" + palette.color(QPalette.ColorRole.Base).name()
           + palette.color(QPalette.ColorRole.Text).name(), size)

    def draw(painter: QPainter) -> None:
        colour = state_colour(state, palette)
        pen = QPen(colour, 1.6)
        painter.setPen(pen)
        margin = 2.5
        w = size - 2 * margin
        if state in (CHANGED, FAILED, RUNNING, CANCELLED):
            painter.setBrush(QBrush(colour))
        else:
            painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawEllipse(int(margin), int(margin), int(w), int(w))
        glyph_pen = QPen(QColor("white") if state in (CHANGED, FAILED, RUNNING, CANCELLED) else colour, 1.6)
        painter.setPen(glyph_pen)
        c = size / 2.0
        if state == CHANGED:  # a dot-centre "delta" mark: small triangle
            painter.drawLine(int(c - 3), int(c + 2), int(c), int(c - 3))
            painter.drawLine(int(c), int(c - 3), int(c + 3), int(c + 2))
            painter.drawLine(int(c - 3), int(c + 2), int(c + 3), int(c + 2))
        elif state == FAILED:  # cross
            painter.drawLine(int(c - 3), int(c - 3), int(c + 3), int(c + 3))
            painter.drawLine(int(c - 3), int(c + 3), int(c + 3), int(c - 3))
        elif state == RUNNING:  # play triangle
            painter.setBrush(QColor("white"))
            from PySide6.QtCore import QPointF
            from PySide6.QtGui import QPolygonF

            painter.drawPolygon(QPolygonF([QPointF(c - 2, c - 3.5), QPointF(c + 3.5, c), QPointF(c - 2, c + 3.5)]))
        elif state == UNCHANGED:  # equals sign
            painter.drawLine(int(c - 3), int(c - 1.5), int(c + 3), int(c - 1.5))
            painter.drawLine(int(c - 3), int(c + 1.5), int(c + 3), int(c + 1.5))
        elif state == SKIPPED:  # slash
            painter.drawLine(int(c - 3), int(c + 3), int(c + 3), int(c - 3))
        elif state == CANCELLED:
            painter.drawLine(int(c - 3), int(c), int(c + 3), int(c))
        if badge:
            _draw_badge(painter, badge, size)

    return _painted_icon(key, size, draw)


def state_label(state: str) -> str:
    """A step state (``pipeline_model.engine.results``) in the interface's language."""
    return QCoreApplication.translate("QtPipelineModel", STATE_LABELS[state]) if state in STATE_LABELS else state


def not_run_after_failure_label() -> str:
    """Label of a step the engine did not run because an earlier step failed."""
    return QCoreApplication.translate("QtPipelineModel", "not run (an earlier step failed)")


def format_ms(ms: float) -> str:
    """A compact duration label (:func:`widgets.units.format_duration_ms`): ``0.4 ms``, ``12 ms``, ``13.0 s``."""
    return format_duration_ms(ms)


def _result_line(pass_id: str, report: Any) -> str:
    """What a step produced in one line, by its pass kind ("" when it has nothing to add)."""
    from pipeline_model.passkinds import step_result_line

    return step_result_line(pass_id, report)


def _kind_is_composite(pass_id: str) -> bool:
    """Default composite test (before the catalogue arrives): the pass kind's answer."""
    from pipeline_model.passkinds import kind_for

    kind = kind_for(pass_id)
    return bool(kind is not None and kind.is_composite(pass_id))


class QtPipelineModel(QAbstractListModel):
    """List model over ``document.steps`` plus the latest engine result of each step.

    Signals are requests; the model never changes the document:

    - ``add_requested(pass_id, row)``: a pass was dropped at ``row`` (``-1`` = append).
    - ``move_requested(uids, row)``: steps were dragged to ``row`` (an index in the current list,
      insertion point before the move).
    - ``toggle_requested(uid, enabled)``: the enabled checkbox was clicked.
    """

    add_requested = Signal(str, int)
    move_requested = Signal(list, int)
    toggle_requested = Signal(str, bool)

    def __init__(self, document: Optional[PipelineDocument] = None, parent=None) -> None:
        super().__init__(parent)
        self._doc = document or PipelineDocument()
        self._results: dict[str, StepResult] = {}
        self._running_uid: Optional[str] = None
        self._title_for: Callable[[str], str] = lambda pass_id: pass_id
        self._composite: Callable[[str], bool] = _kind_is_composite
        #: Marks of the last Find Breaking Step: uid -> (mark, tooltip line); cleared by any edit.
        self._bisect: dict[str, tuple[str, str]] = {}

    # ---- document / results ---------------------------------------------------------------
    @property
    def document(self) -> PipelineDocument:
        """The document shown (read only here)."""
        return self._doc

    def set_document(self, document: PipelineDocument) -> None:
        """Show another document; drops all results."""
        self.beginResetModel()
        self._doc = document
        self._results.clear()
        self._bisect.clear()
        self._running_uid = None
        self.endResetModel()

    def set_title_lookup(self, title_for: Callable[[str], str], composite: Optional[Callable[[str], bool]] = None) -> None:
        """Set how a pass id maps to a title (from the catalogue) and whether a pass is composite."""
        self._title_for = title_for
        if composite is not None:
            self._composite = composite
        self.refresh_data()

    def refresh(self) -> None:
        """Re-read the document's step list (after an insert/remove/move)."""
        self.beginResetModel()
        live = {s.uid for s in self._doc.steps}
        for uid in list(self._results):
            if uid not in live:
                del self._results[uid]
        self.endResetModel()

    def refresh_data(self) -> None:
        """Repaint all rows (step data or results changed, rows did not)."""
        if self._doc.steps:
            self.dataChanged.emit(self.index(0), self.index(len(self._doc.steps) - 1))

    def _row_of(self, uid: str) -> int:
        for i, step in enumerate(self._doc.steps):
            if step.uid == uid:
                return i
        return -1

    def step_changed(self, uid: str) -> None:
        """Repaint one step's row."""
        row = self._row_of(uid)
        if row >= 0:
            self.dataChanged.emit(self.index(row), self.index(row))

    def set_result(self, result: StepResult) -> None:
        """Record the engine's result for a step (matched by uid)."""
        self._results[result.uid] = result
        if self._running_uid == result.uid:
            self._running_uid = None
        self.step_changed(result.uid)

    def set_bisect_marks(self, marks: dict[str, tuple[str, str]]) -> None:
        """Mark steps with a bisection's findings: uid -> (``"culprit"`` / ``"pass"`` / ``"fail"`` / ``"skip"``,
        a tooltip line); replaces the earlier marks."""
        self._bisect = {uid: (str(mark), str(tip)) for uid, (mark, tip) in marks.items()}
        self.refresh_data()

    def clear_bisect_marks(self) -> None:
        """Forget the bisection's marks (the pipeline was edited: they may no longer hold)."""
        if self._bisect:
            self._bisect.clear()
            self.refresh_data()

    def bisect_mark(self, uid: str) -> Optional[str]:
        """Step ``uid``'s bisect mark (``None`` when none)."""
        mark = self._bisect.get(uid)
        return mark[0] if mark is not None else None

    def result(self, uid: str) -> Optional[StepResult]:
        """The latest result for step ``uid``, if any."""
        return self._results.get(uid)

    def set_running(self, uid: Optional[str]) -> None:
        """Mark step ``uid`` as running (``None``: none is)."""
        old = self._running_uid
        self._running_uid = uid
        if old:
            self.step_changed(old)
        if uid:
            self.step_changed(uid)

    def clear_results(self, from_index: int = 0) -> None:
        """Forget results of the steps at ``from_index`` and after (they must re-run)."""
        for step in self._doc.steps[max(0, from_index):]:
            self._results.pop(step.uid, None)
        self._running_uid = None
        self.refresh_data()

    def state_of(self, row: int) -> str:
        """The display state of the step at ``row``."""
        step = self._doc.steps[row]
        if step.uid == self._running_uid:
            return RUNNING
        result = self._results.get(step.uid)
        if result is not None:
            return result.state
        if not step.runnable:
            return SKIPPED
        return NOT_RUN

    def after_failure(self, row: int) -> bool:
        """True when a step before ``row`` failed in the latest results (so ``row`` was not run because of it)."""
        for step in self._doc.steps[:row]:
            result = self._results.get(step.uid)
            if result is not None and result.state == FAILED:
                return True
        return False

    # ---- Qt model API ----------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._doc.steps)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._doc.steps):
            return None
        row = index.row()
        step = self._doc.steps[row]
        result = self._results.get(step.uid)
        state = self.state_of(row)
        title = self._title_for(step.pass_id) or step.pass_id
        bisect = self._bisect.get(step.uid)
        if bisect is not None:
            marked = self._bisect_data(role, bisect, state)
            if marked is not None:
                return marked
        if role == Qt.ItemDataRole.DisplayRole:
            extra = self.tr(STATE_LABELS.get(state, state))
            if state == NOT_RUN and result is not None and self.after_failure(row):
                extra = not_run_after_failure_label()
            if result is not None and state in (CHANGED, UNCHANGED, FAILED, CANCELLED):
                extra += f" · {format_ms(result.elapsed_ms)}"
                if result.cached:
                    extra += " · " + self.tr("cached")
                produced = _result_line(step.pass_id, result.report)
                if produced:  # what the step produced, by its kind (a tuning step's records and best schedules)
                    extra += " · " + produced
            if step.placeholder:
                extra = self.tr("unknown pass")
            if bisect is not None:
                extra = self.tr(BISECT_LABELS[bisect[0]]) + " · " + extra if bisect[0] == BISECT_CULPRIT \
                    else extra + " · " + self.tr(BISECT_LABELS.get(bisect[0], bisect[0]))
            return f"{row + 1}. {title}\n{step.pass_id} — {extra}"
        if role == TitleRole:
            return title
        if role == PassIdRole:
            return step.pass_id
        if role == EnabledRole:
            return step.enabled
        if role == StateRole:
            return state
        if role == ElapsedRole:
            return result.elapsed_ms if result is not None else None
        if role == CachedRole:
            return bool(result.cached) if result is not None else False
        if role == ErrorRole:
            return result.error if result is not None else (step.placeholder or None)
        if role == NestedRole:
            return list(result.nested) if result is not None else []
        if role == UidRole:
            return step.uid
        if role == ResultRole:
            return result
        if role == StepRole:
            return step
        if role == CompositeRole:
            return bool(self._composite(step.pass_id))
        if role == Qt.ItemDataRole.CheckStateRole:
            return Qt.CheckState.Checked if step.enabled else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.DecorationRole:
            return state_icon(state)
        if role == Qt.ItemDataRole.ToolTipRole:
            label = (not_run_after_failure_label() if state == NOT_RUN and result is not None and self.after_failure(row)
                     else self.tr(STATE_LABELS.get(state, state)))
            lines = [f"<b>{title}</b> <code>{step.pass_id}</code>", self.tr("state: {state}").format(state=label)]
            if bisect is not None and bisect[1]:
                lines.insert(1, ("<b>{0}</b>" if bisect[0] == BISECT_CULPRIT else "{0}").format(bisect[1]))  # rich text
            if result is not None and result.elapsed_ms:
                lines.append(self.tr("time: {time}").format(time=format_ms(result.elapsed_ms))
                             + (self.tr(" (cached)") if result.cached else ""))
            if step.params:
                lines.append(self.tr("params: {params}").format(params="<code>" + _html_escape(
                    ", ".join(f"{k}={v!r}" for k, v in step.params.items())[:300]) + "</code>"))
            if step.placeholder:
                lines.append(f"<i>{unknown_pass_html(step.placeholder)}</i>")
            if result is not None and result.error:
                lines.append("<span style='white-space:pre'>" + self.tr("error: {message}").format(
                    message=error_html(result.error)) + "</span>")
            return "<br>".join(lines)
        if role == Qt.ItemDataRole.ForegroundRole:
            if not step.runnable:
                return QApplication.palette().brush(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
            if state == FAILED:
                return QBrush(status_colour("error"))  # text: the palette's readable error shade
            return None
        if role == Qt.ItemDataRole.BackgroundRole:
            if state == FAILED:
                colour = QColor(state_colour(FAILED))
                colour.setAlpha(40)
                return QBrush(colour)
            if state == RUNNING:
                colour = QColor(state_colour(RUNNING))
                colour.setAlpha(36)
                return QBrush(colour)
            return None
        return None

    def _bisect_data(self, role: int, bisect: tuple[str, str], state: str) -> Any:
        """The roles a bisect mark changes (``None``: the plain step's value)."""
        mark = bisect[0]
        if role == BisectRole:
            return mark
        if role == Qt.ItemDataRole.DecorationRole:
            return culprit_icon() if mark == BISECT_CULPRIT else state_icon(state, badge=mark)
        if mark != BISECT_CULPRIT:
            return None
        if role == Qt.ItemDataRole.BackgroundRole:
            colour = QColor(CULPRIT_COLOUR)
            colour.setAlpha(56)
            return QBrush(colour)
        if role == Qt.ItemDataRole.FontRole:
            font = QFont(QApplication.font())
            font.setBold(True)
            return font
        return None

    def setData(self, index: QModelIndex | QPersistentModelIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if role == Qt.ItemDataRole.CheckStateRole and index.isValid():
            step = self._doc.steps[index.row()]
            checked = value in (Qt.CheckState.Checked, Qt.CheckState.Checked.value, 2, True)
            if checked != step.enabled:
                self.toggle_requested.emit(step.uid, checked)
            return False  # the app edits the document through an undo command
        return False

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.ItemIsDropEnabled
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemIsDragEnabled
            | Qt.ItemFlag.ItemIsUserCheckable
        )

    def supportedDropActions(self) -> Qt.DropAction:  # noqa: N802
        return Qt.DropAction.CopyAction | Qt.DropAction.MoveAction

    def supportedDragActions(self) -> Qt.DropAction:  # noqa: N802
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:  # noqa: N802
        return [MIME_PASS, MIME_STEP]

    def mimeData(self, indexes: list[QModelIndex]) -> QMimeData:  # noqa: N802
        rows = sorted({i.row() for i in indexes if i.isValid()})
        return step_mime_data([self._doc.steps[r].uid for r in rows])

    def canDropMimeData(self, data: QMimeData, action: Qt.DropAction, row: int, column: int, parent) -> bool:  # noqa: N802
        return data.hasFormat(MIME_PASS) or data.hasFormat(MIME_STEP)

    def dropMimeData(self, data: QMimeData, action: Qt.DropAction, row: int, column: int, parent) -> bool:  # noqa: N802
        """Turn a drop into a request; ``row`` -1 on the empty area means "append"."""
        if action == Qt.DropAction.IgnoreAction:
            return True
        if parent is not None and parent.isValid() and row < 0:
            row = parent.row()  # dropped onto an item: insert before it
        if row < 0 or row > len(self._doc.steps):
            row = len(self._doc.steps)
        pass_id = parse_pass_mime(data)
        if pass_id is not None:
            self.add_requested.emit(pass_id, row)
            return True
        uids = parse_step_mime(data)
        if uids is not None:
            self.move_requested.emit(uids, row)
            # Accepted; the view's follow-up removeRows() of the source rows is a no-op here
            # (QAbstractItemModel.removeRows returns False), the app moved the steps already.
            return True
        return False


def _html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = [
    "MIME_PASS",
    "MIME_STEP",
    "QtPipelineModel",
    "Step",
    "pass_mime_data",
    "step_mime_data",
    "parse_pass_mime",
    "parse_step_mime",
    "state_icon",
    "state_colour",
    "culprit_icon",
    "BisectRole",
    "format_ms",
]
