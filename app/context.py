"""The application context every controller receives (never the window).

:class:`AppContext` bundles what controllers share: the document controller (document, undo stack,
revision), the engine worker (``submit_*`` returns one request handle per engine request), the
settings, the pass catalogue (:class:`CatalogueService`), the consent service
(:class:`app.consent_service.ConsentService`) and a widget to parent
dialogs on. Document events (``document_replaced``, ``model_changed``, ``edited``, ...) are signals of
the document controller (``ctx.document``), their one owner. Controllers talk back to the window only
through the context's signals (``status_message``, ``banner_message``) and their own.
"""

from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QWidget

from app.document_controller import DocumentController
from app.engine_worker import QtEngineWorker
from app.pass_kinds import is_composite
from app.pass_texts import translate_catalogue
from app.consent_service import ConsentService


class CatalogueService(QObject):
    """The pass catalogue the GUI shows (from the cache, then from the engine); ``changed`` when replaced."""

    changed = Signal()

    def __init__(self, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.catalogue: Any = None

    def set_json(self, data: dict) -> Optional[str]:
        """Replace the catalogue by ``data`` (catalogue JSON); returns an error message when unreadable."""
        from pipeline_model.catalogue import Catalogue

        try:
            catalogue = Catalogue.from_json(data)
        except Exception as exc:  # noqa: BLE001 - a bad cache must not stop the app
            return f"Could not read the pass catalogue: {exc}"
        translate_catalogue(catalogue)  # the app's own passes in the interface's language
        self.catalogue = catalogue
        self.changed.emit()
        return None

    def get(self, pass_id: str) -> Any:
        """The ``PassSpec`` of ``pass_id``, or ``None`` (unknown or no catalogue yet)."""
        return self.catalogue.get(pass_id) if self.catalogue is not None else None

    def title_for(self, pass_id: str) -> str:
        """The pass's title, or its id when unknown."""
        spec = self.get(pass_id)
        return spec.title if spec is not None else pass_id

    def is_composite(self, pass_id: str) -> bool:
        """True for named pipelines / backend stages (see :func:`app.pass_kinds.is_composite`)."""
        return is_composite(pass_id, self.catalogue)

    def known_ids(self) -> Optional[set[str]]:
        """Ids of the known passes (``None`` before the catalogue arrived: every id is accepted)."""
        return set(self.catalogue.ids()) if self.catalogue is not None else None


class AppContext(QObject):
    """Shared services of one main window; see the module docstring."""

    #: ``(message, timeout_ms)`` for the status bar.
    status_message = Signal(str, int)
    #: ``(message, kind)`` for the dismissable banner (``warning``, ``error``).
    banner_message = Signal(str, str)

    def __init__(self, document: DocumentController, engine: QtEngineWorker, settings: QSettings,
                 dialog_parent: Optional[QWidget] = None, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.document = document
        self.engine = engine
        self.settings = settings
        self.dialog_parent = dialog_parent
        self.catalogue = CatalogueService(self)
        self.consent = ConsentService(lambda: self.document.doc, lambda: self.dialog_parent, granted=engine.consent)
        #: Older name of :attr:`consent` (tests and helpers set ``trust.override``).
        self.trust = self.consent

    @property
    def doc(self) -> Any:
        """The live ``PipelineDocument``."""
        return self.document.doc

    @property
    def undo_stack(self) -> QUndoStack:
        """The document's undo stack (every edit is a command pushed here)."""
        return self.document.undo_stack

    def status(self, message: str, timeout_ms: int = 0) -> None:
        """Show ``message`` in the status bar."""
        self.status_message.emit(message, timeout_ms)

    def banner(self, message: str, kind: str = "warning") -> None:
        """Show ``message`` in the window's banner."""
        self.banner_message.emit(message, kind)
