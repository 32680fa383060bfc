"""The pass palette: catalogue categories and passes, a search box, a doc pane; drag passes out.

``QtPassPaletteModel`` is a tree model (category → pass) built from a
:class:`pipeline_model.catalogue.Catalogue`. ``PassPalette`` is the dock widget: search on id,
title and doc, unavailable passes greyed with the reason as tooltip, the pass doc shown for the
selected/hovered pass, and drags carrying ``application/x-rps-pass``.
"""

from __future__ import annotations

import html
from typing import Any, Optional

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QMimeData, QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel, QTextOption
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLineEdit,
    QSplitter,
    QTextBrowser,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from pipeline_model.passkinds.custom_python import PASS_ID as CUSTOM_PASS_ID
from widgets.doc_text import doc_html, is_own, own_html, tvm_doc_heading
from widgets.step_model import MIME_PASS, pass_mime_data

#: The catalogue's category names (``pipeline_model.catalogue.CATEGORY_ORDER``), marked for translation;
#: shown through :func:`category_label` (an unknown category is shown as it is).
CATEGORY_LABELS = (
    QT_TRANSLATE_NOOP("PassCategory", "Lowering"), QT_TRANSLATE_NOOP("PassCategory", "Fusion"),
    QT_TRANSLATE_NOOP("PassCategory", "Scheduling (DLight)"), QT_TRANSLATE_NOOP("PassCategory", "Tuning (MetaSchedule)"),
    QT_TRANSLATE_NOOP("PassCategory", "Named pipelines"), QT_TRANSLATE_NOOP("PassCategory", "Backend stages"),
    QT_TRANSLATE_NOOP("PassCategory", "Optimization"), QT_TRANSLATE_NOOP("PassCategory", "Layout & precision"),
    QT_TRANSLATE_NOOP("PassCategory", "Memory & runtime"), QT_TRANSLATE_NOOP("PassCategory", "Analysis & utility"),
    QT_TRANSLATE_NOOP("PassCategory", "Custom"),
)


def category_label(category: str) -> str:
    """The category's name in the UI language."""
    return QCoreApplication.translate("PassCategory", category)

PassIdRole = Qt.ItemDataRole.UserRole + 1
SearchTextRole = Qt.ItemDataRole.UserRole + 2
AvailableRole = Qt.ItemDataRole.UserRole + 3
IsCategoryRole = Qt.ItemDataRole.UserRole + 4


class QtPassPaletteModel(QStandardItemModel):
    """Tree of categories → passes from a catalogue (any object with the ``Catalogue`` API)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._catalogue: Any = None
        self.setHorizontalHeaderLabels([self.tr("Pass")])

    @property
    def catalogue(self) -> Any:
        """The catalogue shown (``None`` before one is set)."""
        return self._catalogue

    def set_catalogue(self, catalogue: Any) -> None:
        """Rebuild the tree from ``catalogue`` (``categories()``, ``specs_in(category)``)."""
        self._catalogue = catalogue
        self.blockSignals(True)
        try:
            self.clear()
            self.setHorizontalHeaderLabels([self.tr("Pass")])
            if catalogue is not None:
                for category in catalogue.categories():
                    specs = list(catalogue.specs_in(category))
                    cat_item = QStandardItem(f"{category_label(category)}  ({len(specs)})")
                    cat_item.setData(category, SearchTextRole)
                    cat_item.setData(True, IsCategoryRole)
                    cat_item.setFlags(Qt.ItemFlag.ItemIsEnabled)
                    font = cat_item.font()
                    font.setBold(True)
                    cat_item.setFont(font)
                    for spec in specs:
                        cat_item.appendRow(self._pass_item(spec))
                    self.appendRow(cat_item)
        finally:
            self.blockSignals(False)
        # Views saw nothing while the tree was rebuilt silently: tell them to re-read it all.
        self.beginResetModel()
        self.endResetModel()

    @staticmethod
    def _pass_item(spec: Any) -> QStandardItem:
        item = QStandardItem(spec.title or spec.id)
        item.setData(spec.id, PassIdRole)
        item.setData(search_text(spec), SearchTextRole)
        item.setData(bool(spec.available), AvailableRole)
        item.setData(False, IsCategoryRole)
        if spec.available:
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsDragEnabled)
            first = (spec.doc or "").strip().split("\n\n")[0].strip()
            item.setToolTip(f"<b>{html.escape(spec.title)}</b> <code>{html.escape(spec.id)}</code><br>"
                            + (own_html(first[:400]) if is_own(spec.doc or "") else doc_html(first[:400])))
        else:
            # Selectable (so the doc pane can explain) but greyed and not draggable.
            item.setFlags(Qt.ItemFlag.ItemIsSelectable)
            reason = spec.unavailable_reason or QCoreApplication.translate("QtPassPaletteModel", "not available in this TVM build")
            item.setToolTip(QCoreApplication.translate("QtPassPaletteModel", "<b>{title}</b> — unavailable: {reason}").format(
                title=html.escape(spec.title), reason=html.escape(reason)))
        return item

    def mimeTypes(self) -> list[str]:  # noqa: N802
        return [MIME_PASS]

    def mimeData(self, indexes: list[QModelIndex]) -> QMimeData:  # noqa: N802
        for index in indexes:
            pass_id = index.data(PassIdRole)
            if pass_id:
                return pass_mime_data(pass_id)
        return QMimeData()

    def supportedDragActions(self) -> Qt.DropAction:  # noqa: N802
        return Qt.DropAction.CopyAction

    def index_of_pass(self, pass_id: str) -> QModelIndex:
        """The model index of ``pass_id`` (invalid when absent)."""
        for r in range(self.rowCount()):
            cat = self.index(r, 0)
            for c in range(self.rowCount(cat)):
                idx = self.index(c, 0, cat)
                if idx.data(PassIdRole) == pass_id:
                    return idx
        return QModelIndex()


def bundled_custom_passes() -> list[tuple[str, str]]:
    """``(file name, first docstring line)`` of the custom passes shipped in ``resources/custom_passes/``."""
    import ast

    from pipeline_model.resources import resource_path

    out = []
    folder = resource_path("custom_passes")
    for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        try:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        except (OSError, SyntaxError, UnicodeDecodeError):
            doc = ""
        out.append((path.name, doc.strip().splitlines()[0] if doc.strip() else ""))
    return out


def search_text(spec: Any) -> str:
    """What the palette search looks in for a pass (lower case): id, title, doc, and each parameter's name,
    doc, choices and their notes (so "cublas" finds the pattern-table pass); for the custom Python pass, the
    bundled custom passes' file names and first docstring lines."""
    parts = [spec.id, spec.title, spec.doc or ""]
    for p in spec.params or []:
        parts += [p.name, p.doc or ""] + [str(c) for c in p.choices or []]
        parts += [f"{k} {v}" for k, v in (p.choice_notes or {}).items()]
    if spec.id == CUSTOM_PASS_ID:
        parts += [f"{name} {line}" for name, line in bundled_custom_passes()]
    return "\n".join(parts).lower()


class QtPassFilterProxy(QSortFilterProxyModel):
    """Filters passes on :func:`search_text` (all words must match); categories stay when a child matches."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._words: list[str] = []
        self.setRecursiveFilteringEnabled(True)

    def set_text(self, text: str) -> None:
        """Filter on ``text`` (whitespace-separated words, case-insensitive)."""
        self.beginFilterChange() if hasattr(self, "beginFilterChange") else None
        self._words = [w for w in text.lower().split() if w]
        if hasattr(self, "endFilterChange"):
            self.endFilterChange()
        else:  # pragma: no cover - older Qt
            self.invalidateFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex) -> bool:  # noqa: N802
        if not self._words:
            return True
        index = self.sourceModel().index(source_row, 0, source_parent)
        if index.data(IsCategoryRole):
            return False  # shown through recursive filtering when a child matches
        text = index.data(SearchTextRole) or ""
        return all(w in text for w in self._words)


class PassPalette(QWidget):
    """Search box + category tree + doc pane. Emits ``pass_activated(pass_id)`` on double-click."""

    pass_activated = Signal(str)
    pass_selected = Signal(str)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.model = QtPassPaletteModel(self)
        self.proxy = QtPassFilterProxy(self)
        self.proxy.setSourceModel(self.model)

        self.search = QLineEdit(self)
        self.search.setPlaceholderText(self.tr("Search passes (id, title, doc)…"))
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._on_search)

        self.tree = QTreeView(self)
        self.tree.setObjectName("passPaletteTree")
        self.tree.setModel(self.proxy)
        self.tree.setHeaderHidden(True)
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.tree.setDefaultDropAction(Qt.DropAction.CopyAction)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setMouseTracking(True)
        self.tree.setUniformRowHeights(True)
        self.tree.entered.connect(self._on_hover)
        self.tree.doubleClicked.connect(self._on_double_click)
        self.tree.selectionModel().currentChanged.connect(lambda cur, _prev: self._show_doc(cur))

        self.doc = QTextBrowser(self)
        self.doc.setObjectName("passDoc")
        self.doc.setOpenExternalLinks(True)
        self.doc.setPlaceholderText(self.tr("Select or hover a pass to read its documentation. Drag it into the pipeline."))
        # Lines break between words only: a parameter's name (max_trials_global) is never cut mid-identifier.
        self.doc.setWordWrapMode(QTextOption.WrapMode.WordWrap)

        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.doc)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        self.splitter = splitter

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.search)
        layout.addWidget(splitter, 1)

    def set_catalogue(self, catalogue: Any) -> None:
        """Show ``catalogue`` (keeps the search text)."""
        self.model.set_catalogue(catalogue)
        self._on_search(self.search.text())

    def _on_search(self, text: str) -> None:
        self.proxy.set_text(text)
        if text.strip():
            self.tree.expandAll()
        else:
            self.tree.collapseAll()
            # Open the most used categories by default.
            for r in range(self.proxy.rowCount()):
                idx = self.proxy.index(r, 0)
                if r < 2:
                    self.tree.expand(idx)

    def visible_pass_ids(self) -> list[str]:
        """Pass ids currently shown by the filter (for tests and keyboard navigation)."""
        out: list[str] = []
        for r in range(self.proxy.rowCount()):
            cat = self.proxy.index(r, 0)
            for c in range(self.proxy.rowCount(cat)):
                pass_id = self.proxy.index(c, 0, cat).data(PassIdRole)
                if pass_id:
                    out.append(pass_id)
        return out

    def _on_hover(self, index: QModelIndex) -> None:
        if index.data(PassIdRole):
            self._show_doc(index)

    def _on_double_click(self, index: QModelIndex) -> None:
        pass_id = index.data(PassIdRole)
        if pass_id and index.data(AvailableRole):
            self.pass_activated.emit(pass_id)

    def show_pass_doc(self, pass_id: str) -> None:
        """Show the doc of ``pass_id`` in the doc pane."""
        self.doc.setHtml(self.doc_html(pass_id))

    def doc_html(self, pass_id: str) -> str:
        """HTML doc for ``pass_id`` (title, id, availability, doc, parameters)."""
        catalogue = self.model.catalogue
        spec = None
        if catalogue is not None:
            try:
                spec = catalogue.get(pass_id)
            except (KeyError, LookupError):
                spec = None
        if spec is None:
            return self.tr("<p><code>{id}</code> is not in the catalogue.</p>").format(id=html.escape(pass_id))
        parts = [f"<h3 style='margin:0'>{html.escape(spec.title)}</h3>", f"<p><code>{html.escape(spec.id)}</code> · {html.escape(category_label(spec.category))}</p>"]
        if not spec.available:
            parts.append(self.tr("<p><b>Unavailable:</b> {reason}</p>").format(
                reason=html.escape(spec.unavailable_reason or self.tr("not in this TVM build"))))
        if getattr(spec, "needs_trust", False):
            parts.append(self.tr("<p><i>Runs your own Python code: the app asks before running it.</i></p>"))
        doc = (spec.doc or "").strip()
        if doc:
            paras = [p.strip() for p in doc.split("\n\n") if p.strip()]
            if is_own(spec.doc or ""):
                parts.extend(f"<p>{own_html(p)}</p>" for p in paras[:6])
            else:  # TVM's docstring: its own words, in a code font (widgets.doc_text)
                parts.append(f"<p><i>{html.escape(tvm_doc_heading())}</i></p>")
                parts.extend(f"<p>{doc_html(p)}</p>" for p in paras[:6])
        if spec.id == CUSTOM_PASS_ID and bundled_custom_passes():
            items = "".join(f"<li><code>{html.escape(name)}</code> — {doc_html(line)}</li>"
                            for name, line in bundled_custom_passes())
            parts.append(self.tr("<p><b>Bundled custom passes</b> (files in the app's resources/custom_passes "
                                 "folder: paste one into a Custom Python step):</p>") + f"<ul>{items}</ul>")
        if spec.params:
            rows = []
            for p in spec.params:
                default = p.default if not isinstance(p.default, str) or len(p.default) < 60 else p.default[:57] + "…"
                rows.append(
                    f"<tr><td><code>{html.escape(p.name)}</code></td><td><code>{html.escape(p.kind)}</code></td>"
                    f"<td><code>{html.escape(repr(default))}</code></td><td>{doc_html((p.doc or '')[:200])}</td></tr>"
                )
            parts.append(self.tr("<p><b>Parameters</b></p>") + "<table cellspacing='4'>" + "".join(rows) + "</table>")
        return "".join(parts)

    def _show_doc(self, index: QModelIndex) -> None:
        pass_id = index.data(PassIdRole) if index.isValid() else None
        if pass_id:
            self.show_pass_doc(pass_id)
            self.pass_selected.emit(pass_id)
