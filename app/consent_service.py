"""The GUI's one consent model for code that files bring (issue 9).

What a run would execute comes from :func:`pipeline_model.consent.code_items` (a model ``.py`` file,
custom step sources, pattern files), each with the SHA-256 of its content. :class:`ConsentService`
asks about the items not consented to yet in a :class:`ConsentDialog` (each item's code, what it is
and why it needs consent), remembers a consent per content hash in a
:class:`pipeline_model.consent.ConsentStore` (so a changed file is asked again) and keeps the engine
client's consent (``granted``, the :class:`pipeline_model.consent.Consent` of the ``QtEngineWorker``'s
client) equal to what was consented to: the client attaches it to every request that may run code, so
requests carry only the consented hashes (``trusted_hashes``) and no caller passes them. Without consent
the engine runs nothing and its message names the file.

The user's own edits do not re-prompt: code typed in the app's custom-pass editor is the user's own;
:meth:`ConsentService.own_edit` consents its new hash for the session (written to the store when
the pipeline is saved, :meth:`ConsentService.remember_own`) when the code it replaces was consented
to. Code a file brought that was never consented to stays unconsented while it is edited: automatic
re-runs do not ask about it (they run without it and show the engine's refusal); Run asks.
"""

from __future__ import annotations

import html
import os
import re
from typing import Any, Callable, Iterable, Optional

from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

from app.i18n import document_name, tr
from pipeline_model import consent, safe_files
from pipeline_model.document import PipelineDocument

#: Largest file shown in the consent dialog (the rest is cut, and the dialog says so).
SHOW_BYTES = 2 * 1024 * 1024


def default_store_path() -> Optional[str]:
    """The consent file: under ``RPS_CONFIG_DIR`` when set (tests), else the user's config dir."""
    folder = os.environ.get("RPS_CONFIG_DIR")
    return os.path.join(folder, "consent.json") if folder else None


def document_items(doc: PipelineDocument, until: Optional[int] = None) -> list[consent.CodeItem]:
    """The code a run of ``doc`` (steps up to ``until``) would execute (see :func:`consent.code_items`)."""
    from pipeline_model.engine.run_call import run_args

    args = run_args(doc, until=until)
    steps = [s for i, s in enumerate(args["steps"]) if until is None or i <= until]
    return consent.code_items(str(args["model"] or ""), args["base_dir"], steps, args.get("work_dir"))


def item_code(item: consent.CodeItem, doc: Optional[PipelineDocument] = None) -> str:
    """The code of ``item`` as the dialog shows it (a file is read with a size cap)."""
    if item.path is None:
        if doc is not None and item.index is not None and 0 <= item.index < len(doc.steps):
            from pipeline_model.passkinds import kind_for

            step = doc.steps[item.index]
            kind = kind_for(step.pass_id)
            for ref in kind.user_code(step, doc.model_path_base(), item.index + 1) if kind is not None else []:
                if ref.path is None:
                    return ref.read()
        return ""
    listing = consent.archive_listing(item) or consent.tuning_listing(item)  # no source: what would run
    if listing is not None:
        return listing
    try:
        return safe_files.read_text(item.path, item.label, SHOW_BYTES)
    except (OSError, ValueError) as exc:
        return f"# {exc}"


class ConsentService:
    """Decides which code a request may execute (asks the user when needed); see the module docstring."""

    def __init__(self, document: Callable[[], PipelineDocument], dialog_parent: Callable[[], Optional[QWidget]],
                 store: Optional[consent.ConsentStore] = None, granted: Optional[consent.Consent] = None) -> None:
        self._document = document
        self._dialog_parent = dialog_parent
        self.store = store if store is not None else consent.ConsentStore(default_store_path())
        #: The engine client's consent (``QtEngineWorker.consent``), kept equal to what was consented to.
        self.granted = granted if granted is not None else consent.Consent()
        #: Tests/screenshots: skip the question; True consents to every item, False to none (nothing is remembered).
        self.override: Optional[bool] = None
        self.dialog: Optional[ConsentDialog] = None
        #: Hashes of code the user typed in the app this session (their own code).
        self._own: set[str] = set()
        #: Hashes refused this session (automatic re-runs do not ask about them again).
        self._refused: set[str] = set()
        #: Step uids whose code the user edited although it was never consented to (not asked on auto re-runs).
        self._edited_unconsented: set[str] = set()
        #: Hashes consented to by ``override`` (tests): granted while it stays true, never remembered.
        self._overridden: set[str] = set()

    # ---- queries ---------------------------------------------------------------------------------
    def items(self, doc: Optional[PipelineDocument] = None, until: Optional[int] = None) -> list[consent.CodeItem]:
        """The code a run of ``doc`` (default: the current document) would execute."""
        return document_items(doc if doc is not None else self._document(), until)

    def is_trusted(self, sha256: str) -> bool:
        """True when the content ``sha256`` is consented to (remembered, or typed in the app)."""
        return bool(sha256) and (sha256 in self._own or self.store.is_trusted(sha256))

    def missing(self, items: Iterable[consent.CodeItem]) -> list[consent.CodeItem]:
        """The items without consent (an unreadable file is never consented to)."""
        return [item for item in items if not self.is_trusted(item.sha256)]

    def hashes(self, items: Iterable[consent.CodeItem]) -> list[str]:
        """The consented hashes of ``items`` (all of them while :attr:`override` is true)."""
        return sorted({i.sha256 for i in items if i.sha256 and (self.override or self.is_trusted(i.sha256))})

    def allow(self, items: Iterable[consent.CodeItem]) -> list[str]:
        """Before a request running ``items``: the client's consent becomes everything consented to (and
        ``items`` while :attr:`override` is true); returns the consented hashes of ``items``."""
        hashes = self.hashes(items)
        if self.override:
            self._overridden.update(hashes)
        self._publish()
        return hashes

    def _publish(self) -> None:
        extra = self._overridden if self.override else set()
        self.granted.replace([*self.store.trusted_hashes(), *self._own, *extra])

    # ---- asking ----------------------------------------------------------------------------------
    def for_run(self, explicit: bool = True, doc: Optional[PipelineDocument] = None,
                until: Optional[int] = None) -> list[str]:
        """Before a request running ``doc`` (default: the current document): asks about the code not
        consented to yet, updates the client's consent (:meth:`allow`) and returns the hashes of the
        consented items.

        ``explicit`` is false for automatic re-runs: code refused this session, and code the user is
        editing that was never consented to, is not asked about again (the engine then refuses it
        and names the file)."""
        shown = doc if doc is not None else self._document()
        items = self.items(shown, until)
        if self.override is not None:  # tests: consent to everything (or nothing), remembering nothing
            return self.allow(items)
        missing = self.missing(items)
        if missing and not explicit:
            missing = [m for m in missing if m.sha256 not in self._refused and not self._edited_code(shown, m)]
        if missing:
            self.ask(missing, shown)
        return self.allow(items)

    def ask(self, items: list[consent.CodeItem], doc: Optional[PipelineDocument] = None) -> bool:
        """Show ``items`` (readable ones can be consented to) and remember the answer; True when consented."""
        shown = doc if doc is not None else self._document()
        codes = [item_code(i, shown) for i in items]
        # Consent is given to what the dialog shows: code held in a step must be exactly the code whose
        # hash is consented to (the engine runs only that hash), else it cannot be consented to here.
        askable = [item for item, code in zip(items, codes)
                   if item.sha256 and (item.path is not None or consent.sha256_text(code) == item.sha256)]
        if self.override is not None:
            if self.override:
                self._overridden.update(item.sha256 for item in askable)
            self._publish()
            return bool(self.override) and bool(askable)
        else:
            dialog = ConsentDialog(items, shown.path or document_name(shown), codes, self._dialog_parent())
            self.dialog = dialog
            ok = dialog.exec() == QDialog.DialogCode.Accepted and bool(askable)
        if ok:
            self.store.grant(askable)
            self._refused.difference_update(i.sha256 for i in askable)
        else:
            self._refused.update(i.sha256 for i in askable)
        self._publish()
        return ok

    def _edited_code(self, doc: PipelineDocument, item: consent.CodeItem) -> bool:
        return item.kind == consent.KIND_CUSTOM and item.index is not None and 0 <= item.index < len(doc.steps) \
            and doc.steps[item.index].uid in self._edited_unconsented

    # ---- the user's own code ---------------------------------------------------------------------
    def shown_error(self, error: Optional[str], index: Optional[int] = None) -> Optional[str]:
        """A step's (``index``) or run's error as the app shows it: an engine refusal for lack of consent (its
        advice is the command line's ``--trust``) becomes what was not allowed and how to allow it here; any
        other error stays as it is."""
        if not error or consent.HOW_TO_CONSENT not in error:
            return error
        try:
            items = [i for i in self.missing(self.items()) if index is None or i.index in (index, None)]
        except Exception:  # noqa: BLE001 - an unreadable document: say it without the list
            items = []
        advice = tr("Run (F5) asks again; choose Trust and Run to allow it.")
        if not items:
            return tr("nothing ran: its code was not allowed to run.") + " " + advice
        # a model file's own reason (what in it runs: a pickle's callables) is the technical why, kept as the core says it
        what = "; ".join(_describe(i) + (f" ({i.reason})" if i.kind == consent.KIND_MODEL and i.reason else "")
                         for i in items)
        return tr("nothing ran: you did not allow this code to run — {0}.").format(what) + " " + advice

    def own_edit(self, uid: str, before: list[consent.CodeItem], after: list[consent.CodeItem]) -> None:
        """Step ``uid``'s code was edited in the app's editor: its code ``before`` and ``after`` the
        edit. When every piece it replaces was consented to (or the step had none), the new code is
        the user's own and consented for the session; else the step stays unconsented (see the
        module docstring)."""
        if all(self.is_trusted(item.sha256) for item in before if item.kind == consent.KIND_CUSTOM) \
                and uid not in self._edited_unconsented:
            self._own.update(item.sha256 for item in after if item.kind == consent.KIND_CUSTOM and item.sha256)
            self._publish()
        else:
            self._edited_unconsented.add(uid)

    def remember_own(self, doc: PipelineDocument) -> None:
        """``doc`` was saved: the user's own code in it is remembered (asked no more after a reopen)."""
        own = [item for item in self.items(doc) if item.sha256 in self._own and not self.store.is_trusted(item.sha256)]
        if own:
            try:
                self.store.grant(own)
            except OSError:
                pass


class ConsentDialog(QDialog):
    """Asks whether code brought by a file may run: each item with what it is, why it needs consent
    and its code. Accepted = run it (its content hash is remembered); rejected = nothing of it runs."""

    def __init__(self, items: list[consent.CodeItem], where: str, codes: list[str],
                 parent: Optional[QWidget] = None) -> None:
        from PySide6.QtWidgets import QDialogButtonBox, QTabWidget

        from widgets.code_editor import CodeEditor

        super().__init__(parent)
        self.items = list(items)
        self.setWindowTitle(tr("Run code from this file?"))
        lines = "".join(f"<li>{html.escape(_describe(item))}</li>" for item in items)
        if items and all(item.kind == consent.KIND_TUNING for item in items):
            text = tr("<b>{where}</b> would compile {count} set(s) of tuning records your own tuning did not "
                      "measure:<ul>{lines}</ul>A tuning record is a schedule replayed on your model and compiled "
                      "into it; records outside the app's allow-list are refused in any case. Use them only if you "
                      "trust where they come from. You are asked again when they change.")
        else:
            text = tr("<b>{where}</b> would run {count} piece(s) of Python code that did not ship with the app:"
                      "<ul>{lines}</ul>Running it executes the code below with your permissions (it can read and "
                      "write your files). Run it only if you trust where it comes from. You are asked again when "
                      "the code changes.")
        intro = QLabel(text.format(where=html.escape(where), count=len(items), lines=lines), self)
        intro.setWordWrap(True)
        self.tabs = QTabWidget(self)
        self.editors: list[Any] = []
        for item, code in zip(items, codes):
            editor = CodeEditor(self, read_only=True)
            editor.set_text(code)
            self.editors.append(editor)
            title = os.path.basename(item.path) if item.path else tr("step {0}").format((item.index or 0) + 1)
            self.tabs.addTab(editor, title)
            self.tabs.setTabToolTip(self.tabs.count() - 1, item.path or _item_label(item))
        #: The code shown for each item, in order (what "Trust and Run" consents to).
        self.codes = list(codes)
        #: All the code shown, one block per item (tests read it).
        self.code_text = "\n\n".join(f"# ---- {item.label} ----\n{code.rstrip()}" for item, code in zip(items, codes))
        buttons = QDialogButtonBox(self)
        self.run_button = buttons.addButton(tr("Trust and Run"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.refuse_button = buttons.addButton(tr("Don't Run"), QDialogButtonBox.ButtonRole.RejectRole)
        self.refuse_button.setDefault(True)
        self.run_button.setEnabled(any(item.sha256 for item in items))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)
        self.resize(760, 520)


def _describe(item: consent.CodeItem) -> str:
    what = {consent.KIND_MODEL: tr("Model file {0}: Python code that runs when the model is loaded"),
            consent.KIND_PATTERN: tr("Pattern file {0}: Python code that runs when the step is built"),
            consent.KIND_CUSTOM: tr("{0}: your custom pass code, run as a pipeline step"),
            consent.KIND_REPRO: tr("Reproducer script {0}: reduce runs it on every smaller module it tries"),
            consent.KIND_TUNING: tr("Tuning records {0}: schedules your own tuning did not measure, compiled into "
                                    "the model")}[item.kind]
    text = what.format(item.path or _item_label(item))
    if not item.sha256 and item.kind != consent.KIND_CUSTOM:
        text += " — " + tr("cannot be checked: {0}").format(item.reason)
    elif item.index is not None and item.kind != consent.KIND_CUSTOM:
        text += " " + tr("(step {0})").format(item.index + 1)
    return text


def _item_label(item: consent.CodeItem) -> str:
    """A step item's label ("step 9 (custom.python)") in the interface's language."""
    match = re.fullmatch(r"step (\d+) \((.+)\)", item.label)
    return tr("step {0} ({1})").format(match.group(1), match.group(2)) if match else item.label
