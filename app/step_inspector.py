"""``StepInspector``: what the selected step did — diff, module texts on demand, the step's report,
and errors in the user's own code. The graph of the step's module (cache, picker, find, node details,
TensorIR) is the :class:`app.graph_controller.GraphController`'s: the inspector tells it which snapshot
to show (``graphs.show``), the step's report and the functions the diff found changed; it shows the
selected step again on ``graphs.function_chosen``. Results come from the run session's signals.

Module texts are printed by the engine on demand: runs carry snapshot keys, not TVMScript, and the
diff of the selected step asks ``ctx.engine.submit_snapshot(key)`` for the texts it lacks (the diff
view says "loading…" meanwhile); texts are kept by key (:data:`TEXT_CACHE_BYTES`).
"""

from __future__ import annotations

import collections
import html
import os
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QMessageBox

from app.i18n import tr
from app.code_dialogs import show_code_dialog
from app.context import AppContext
from app.graph_controller import GraphController
from app.panels import PipelinePanel
from app.pass_kinds import step_report_html, user_code_files
from pipeline_model.document import Step
from pipeline_model.engine.results import CANCELLED, CHANGED, FAILED, NOT_RUN, SKIPPED, UNCHANGED, RunResult, StepResult
from widgets.diff_view import DiffView
from widgets.error_trace import ErrorLocation, engine_step_words, locate_user_error
from widgets.step_model import QtPipelineModel, format_ms, state_label

# Bytes of module texts (TVMScript by snapshot key) kept for diffs (oldest dropped first).
TEXT_CACHE_BYTES = 128 * 1024 * 1024



class StepInspector(QObject):
    """Shows the selected step: diff, report, the graph to show; follows selection, edits and results."""

    #: The diff/graph for the selected step is on screen (used by the benchmark).
    step_shown = Signal(str)

    def __init__(self, ctx: AppContext, graphs: GraphController, panel: PipelinePanel, diff_view: DiffView,
                 step_model: QtPipelineModel) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self.graphs = graphs
        self.panel = panel
        self.diff_view = diff_view
        self.step_model = step_model
        self.view = panel.pipeline_view
        self.input_script: Optional[str] = None
        self.input_key: Optional[str] = None
        self.last_good_script: Optional[str] = None
        # Module texts by snapshot key (keys are content hashes), fetched when a diff needs them.
        self._texts: "collections.OrderedDict[str, str]" = collections.OrderedDict()
        self._texts_bytes = 0
        self._text_requests: dict[str, Any] = {}
        # The diff waiting for texts: (snapshot keys with the scripts already known, show(texts)).
        self._pending_diff: Optional[tuple[list[tuple[Optional[str], Optional[str]]], Callable[[list[Optional[str]]], None]]] = None
        self.user_file_dialog: Any = None
        self.user_file_editor: Any = None
        graphs.function_chosen.connect(lambda: self.show_step(self.view.current_uid()))
        diff_view.location_activated.connect(self.show_error_location)
        # Whether the diff shown is of a step that changed the module: when its diff is computed (at once,
        # or on the diff view's worker for a large module), the callers of changed PrimFuncs light up.
        self._diff_of_changed_step = False
        diff_view.diff_ready.connect(self._on_diff_ready)
        self.view.current_step_changed.connect(lambda uid: self.show_step(uid))
        self.view.nested_selected.connect(self._on_nested_selected)

    # ---- document and results -------------------------------------------------------------
    def on_document_replaced(self) -> None:
        """A new document: forget the model input and the graphs."""
        self.input_script = self.input_key = None
        self.last_good_script = None
        self.graphs.on_document_replaced()  # also a report (DLight rules, fusion) of the old document
        if not self.ctx.doc.steps:
            self.show_step("")

    def on_edited(self, first_index: int) -> None:
        """An edit: the input is stale when everything re-runs; show the selection again."""
        if first_index == 0:
            self.input_script = self.input_key = None
        self.show_step(self.view.current_uid())

    def on_input_loaded(self, script: Optional[str], key: Optional[str]) -> None:
        """The run session's ``model_loaded`` event: the model before any step."""
        if key and key != self.input_key:
            self.input_script = script  # another model: its text comes with the event or on demand
        else:
            self.input_script = script or self.input_script
        self.input_key = key or self.input_key
        if not self.view.current_uid():
            self.show_input()

    def on_step_result(self, result: StepResult) -> None:
        """A step finished: refresh when it is the one shown."""
        if result.uid == self.view.current_uid():
            self.show_step(result.uid)

    def on_run_finished(self, result: RunResult) -> None:
        """The run ended: keep its input and last good module, go to a failure in user code."""
        if result.input_key and (result.input_key != self.input_key or result.input_script is not None):
            self.input_script = result.input_script  # None: fetched by key when shown
            self.input_key = result.input_key
        self.last_good_script = result.last_good_script
        self._select_failed_user_code(result)
        self.show_step(self.view.current_uid())

    def refresh_colours(self) -> None:
        """Redo the rich text that keeps the colours it was made with (palette change)."""
        if self.graphs.details_kind != "report":
            self.graphs.refresh_colours()
        else:
            uid = self.view.current_uid()
            result = self.step_model.result(uid) if uid else None
            if result is not None:
                index = self.ctx.doc.index_of(uid)
                self._show_step_report(index, self.ctx.doc.steps[index], result)

    # ---- the selected step ------------------------------------------------------------------
    def _before_of(self, index: int) -> tuple[Optional[str], Optional[str]]:
        """(script, snapshot key) of the module a step at ``index`` received."""
        for step in reversed(self.ctx.doc.steps[:index]):
            res = self.step_model.result(step.uid)
            if res is not None and (res.script is not None or res.snapshot_key) and res.state in (CHANGED, UNCHANGED, SKIPPED):
                return res.script, res.snapshot_key
            if res is None and step.runnable:
                return None, None  # an earlier step has not run (yet)
        return self.input_script, self.input_key

    def show_step(self, uid: str) -> None:
        """Diff, graph and report of step ``uid`` (the model input when ``uid`` is empty)."""
        self._pending_diff = None  # texts still on their way for an earlier selection are not shown
        if not uid:
            self.show_input()
            return
        try:
            index = self.ctx.doc.index_of(uid)
        except ValueError:
            return
        step = self.ctx.doc.steps[index]
        result = self.step_model.result(uid)
        before, before_key = self._before_of(index)
        if self.graphs.details_kind == "report":
            self.graphs.show_details_placeholder()  # the previous step's report; this step's follows
        title = tr("Step {0}: {1}").format(index + 1, self.ctx.catalogue.title_for(step.pass_id))
        self.graphs.set_step_report(None)
        if result is None or result.state != FAILED:
            self._mark_source_error(uid, None)
        if result is None:
            self._diff_message(tr("{0} has not run yet.").format(title) if step.runnable else tr("{0} is disabled (skipped).").format(title))
            self.graphs.show(before_key, None, tr("{0} — not run yet; showing its input").format(title))
            return
        if result.state == FAILED:
            location = self.error_location(index, result)
            self._mark_source_error(uid, location)
            fallback = self.last_good_script or self.input_script

            def show_error(texts: list[Optional[str]]) -> None:
                # What TVM or Python said (the engine's own "step N (id) failed:" framing is the title's)
                error = engine_step_words(result.error or "") or result.error or tr("unknown error")
                self.diff_view.set_error(title, error, texts[0] or "",
                                         traceback=result.traceback or "", location=location)

            self.graphs.show(before_key, None, tr("{0} failed — showing the last good module").format(title))
            # The error shows at once; the last good module's text follows when the engine printed it.
            known = self.module_text(before_key, before)
            show_error([known if known is not None or before_key else fallback])
            self.step_shown.emit(uid)
            if known is None and before_key:
                self._pending_diff = ([(before_key, None)], show_error)
                self._drop_text_requests(keep={before_key})
                self._request_text(before_key)
            return
        if result.state in (NOT_RUN, CANCELLED):
            self._show_not_run(index, title, result, before_key)
            return
        self.graphs.set_step_report(dict(result.report or {}))
        self._show_step_report(index, step, result)
        label = tr("changed the module") if result.state == CHANGED else (tr("changed nothing") if result.state == UNCHANGED
                                                                          else state_label(result.state))
        changed = result.state == CHANGED

        def show_diff(texts: list[Optional[str]]) -> None:
            before_text = texts[0]
            after_text = texts[1] if changed else (result.script if result.script is not None else before_text)
            self._diff_of_changed_step = changed
            if not changed:
                self.graphs.set_changed_functions(set())
            self.diff_view.set_snapshots(before_text, after_text, before_title=tr("Before {0}").format(title),
                                         after_title=tr("After {0}").format(title) + f" — {label} ({format_ms(result.elapsed_ms)})")
            self.step_shown.emit(uid)

        # An unchanged (or skipped) step's module prints as its input: only the "before" text is needed.
        wanted = [(before_key, before)] + ([(result.snapshot_key, result.script)] if changed else [])
        self.graphs.show(result.snapshot_key or before_key, before_key if changed else None, f"{title} — {label}")
        self._with_texts(wanted, show_diff)

    def _on_diff_ready(self) -> None:
        """The diff of the step shown is computed: callers of the PrimFuncs it changed light up (the graph
        recolours a cached layout)."""
        if self._diff_of_changed_step and self.diff_view.module_diff is not None:
            self.graphs.set_changed_functions(changed_function_names(self.diff_view.module_diff))

    def _show_not_run(self, index: int, title: str, result: StepResult, before_key: Optional[str]) -> None:
        """A step the engine did not run: after a failure, say which step failed; no diff, and the graph
        of the last good module without highlights (there is no "after" module to compare)."""
        failed = self._failed_before(index)
        if failed is not None:
            self.diff_view.set_not_run(title, failed)
            caption = tr("{0} — not run (an earlier step failed); showing the last good module").format(title)
        elif result.state == CANCELLED:
            self._diff_message(tr("{0} did not finish: the run was stopped.").format(title))
            caption = tr("{0} — stopped; showing its input").format(title)
        else:
            self._diff_message(tr("{0} has not run yet.").format(title))
            caption = tr("{0} — not run yet; showing its input").format(title)
        self.graphs.show(before_key, None, caption)
        self.step_shown.emit(result.uid)

    def _failed_before(self, index: int) -> Optional[str]:
        """``step N (pass id)`` of the failed step before ``index`` in the latest results, if any."""
        for i, step in enumerate(self.ctx.doc.steps[:index]):
            res = self.step_model.result(step.uid)
            if res is not None and res.state == FAILED:
                return tr("step {0} ({1})").format(i + 1, step.pass_id)
        return None

    def show_input(self) -> None:
        """The model as loaded (before any step)."""
        self.graphs.show(self.input_key, None, tr("Model input"))  # asked first: the engine serves in order
        if self.input_script or self.input_key:
            def show(texts: list[Optional[str]]) -> None:
                text = texts[0] or ""
                self._diff_of_changed_step = False
                self.diff_view.set_snapshots(text, text, before_title=tr("Model input"), after_title=tr("Model input"))

            self._with_texts([(self.input_key, self.input_script)], show)
        else:
            self._pending_diff = None
            self._diff_message(tr("Run the pipeline (F5) to see what each step does.") if self.ctx.doc.steps else
                               tr("The pipeline is empty: drag passes from the Passes panel into the Pipeline list."))

    def _on_nested_selected(self, uid: str, nested_index: int) -> None:
        result = self.step_model.result(uid)
        if result is None or not 0 <= nested_index < len(result.nested):
            return
        self._pending_diff = None
        index = self.ctx.doc.index_of(uid)
        before, before_key = self._before_of(index)
        for n in result.nested[:nested_index]:
            if n.changed and (n.script is not None or n.snapshot_key):
                before, before_key = n.script, n.snapshot_key
        target = result.nested[nested_index]
        wanted = [(before_key, before)]
        if target.changed and (target.script is not None or target.snapshot_key):
            wanted.append((target.snapshot_key, target.script))

        def show(texts: list[Optional[str]]) -> None:
            after = texts[1] if len(texts) > 1 and texts[1] is not None else texts[0]
            self._diff_of_changed_step = False  # a nested pass's diff: the graph stays the step's
            self.diff_view.set_snapshots(texts[0], after, before_title=tr("Before {0}").format(target.name),
                                         after_title=tr("Step {0}").format(index + 1) + f" › {target.name} ({format_ms(target.elapsed_ms)})")

        self._with_texts(wanted, show)

    # ---- module texts on demand -------------------------------------------------------------
    def module_text(self, key: Optional[str], script: Optional[str] = None) -> Optional[str]:
        """The text of snapshot ``key`` if known here (``script``, when given, is remembered)."""
        if script is not None:
            if key and key not in self._texts:
                self._texts[key] = script
                self._texts_bytes += len(script)
                while self._texts_bytes > TEXT_CACHE_BYTES and len(self._texts) > 1:
                    _old, text = self._texts.popitem(last=False)
                    self._texts_bytes -= len(text)
            return script
        if not key:
            return None
        text = self._texts.get(key)
        if text is not None:
            self._texts.move_to_end(key)
        return text

    def _with_texts(self, wanted: list[tuple[Optional[str], Optional[str]]],
                    show: Callable[[list[Optional[str]]], None]) -> None:
        """Call ``show(texts)`` with the texts of ``wanted`` ``(snapshot key, script or None)``: now when
        all are known, else once the engine has printed the missing ones (the diff says "loading…"
        meanwhile; a newer selection replaces this one)."""
        texts = [self.module_text(key, script) for key, script in wanted]
        missing = [key for (key, _script), text in zip(wanted, texts) if text is None and key]
        if not missing:
            self._pending_diff = None
            self._drop_text_requests(keep=set())
            show(texts)
            return
        self._pending_diff = (wanted, show)
        self._diff_message(tr("Loading the module text…"))
        self._drop_text_requests(keep=set(missing))
        for key in missing:
            self._request_text(key)

    def _drop_text_requests(self, keep: set[str]) -> None:
        """Texts asked for an earlier selection and not started yet are dropped: they would delay this
        selection's graph and texts (the engine serves one request at a time)."""
        for key, request in list(self._text_requests.items()):
            if key not in keep and getattr(request, "drop_if_queued", None) is not None and request.drop_if_queued():
                self._text_requests.pop(key, None)

    def _request_text(self, key: str) -> None:
        if key in self._text_requests:
            return
        request = self.ctx.engine.submit_snapshot(key)
        self._text_requests[key] = request
        request.finished.connect(lambda value, k=key: self._on_text(k, value))
        request.failed.connect(lambda message, k=key: self._on_text_failed(k, message))

    def _on_text(self, key: str, value: Any) -> None:
        self._text_requests.pop(key, None)
        self.module_text(key, str(value.get("script", "")) if isinstance(value, dict) else str(value))
        pending = self._pending_diff
        if pending is None:
            return
        wanted, show = pending
        texts = [self.module_text(k, s) for k, s in wanted]
        if all(text is not None or not k for (k, _s), text in zip(wanted, texts)):
            self._pending_diff = None
            show(texts)

    def _on_text_failed(self, key: str, message: str) -> None:
        self._text_requests.pop(key, None)
        pending = self._pending_diff
        if pending is not None and any(k == key for k, _s in pending[0]):
            self._pending_diff = None
            if "not in the engine's cache" in message:  # the engine was restarted: its modules are gone
                self._diff_message(tr("The engine was restarted and no longer holds this module; Run (F5) makes it "
                                      "again."))
                return
            first = message.splitlines()[0][:300] if message else ""
            self._diff_message(tr("The module text could not be fetched: {0}").format(first))

    def _diff_message(self, text: str) -> None:
        self.diff_view.clear()
        self.diff_view.left_title.setText(text)
        self.diff_view.right_title.setText("")

    def _show_step_report(self, index: int, step: Step, result: StepResult) -> None:
        """The step's report (DLight rules per PrimFunc, fused groups, tuning summary) in the details pane."""
        text = step_report_html(step.pass_id, result.report or {}, self.ctx.doc.target)
        if text:
            title = html.escape(tr("Step {0}: {1}").format(index + 1, self.ctx.catalogue.title_for(step.pass_id)))
            self.graphs.show_report(f"<h3 style='margin:0'>{title}</h3>" + text)

    # ---- errors in the user's own code ------------------------------------------------------
    def error_location(self, index: int, result: StepResult) -> Optional[ErrorLocation]:
        """The line of the user's code that step ``index``'s failure points at, if any."""
        files = user_code_files(self.ctx.doc, index)
        if not files or result.state != FAILED:
            return None
        return locate_user_error(result.error or "", result.traceback or "", files)

    def source_editor(self, uid: Optional[str] = None, name: str = "source") -> Any:
        """The code editor of the shown step's ``source`` parameter (custom step; another code parameter by
        ``name``), or ``None`` when that step is not shown."""
        if uid is not None and uid != self.view.current_uid():
            return None
        editor = self.panel.param_editor
        if name not in editor.names():
            return None
        return getattr(editor.editor(name), "editor", None)

    def _mark_source_error(self, uid: str, location: Optional[ErrorLocation]) -> None:
        editor = self.source_editor(uid)
        if editor is None or not hasattr(editor, "mark_error_line"):
            return
        if location is not None and location.is_custom_source:
            # While the user types there the cursor stays put; otherwise scroll to the line.
            scroll = not editor.hasFocus()
            editor.mark_error_line(location.line, location.message, scroll=scroll)
            if scroll:
                self.panel.param_scroll.ensureWidgetVisible(editor, 0, 0)
        else:
            editor.clear_error()

    def _select_failed_user_code(self, result: RunResult) -> None:
        """After a run whose failure points into the user's code: select that step (unless the user
        is typing in another step's parameters), so its source shows the marked line."""
        index = result.failed_index
        if index is None or not 0 <= index < len(result.steps) or index >= len(self.ctx.doc.steps):
            return
        failed = result.steps[index]
        if failed.uid == self.view.current_uid() or _has_focus_within(self.panel.param_editor):
            return
        if self.error_location(index, failed) is not None:
            self.view.select_uids([failed.uid])

    def show_error_location(self, location: ErrorLocation) -> None:
        """Go to the line an error points at: the custom step's source editor, or the pattern file
        (shown read-only with the line marked)."""
        if location.is_custom_source:
            editor = self.source_editor()
            if editor is None:
                return
            dock = self.panel.parentWidget()
            if dock is not None:
                dock.show()
                dock.raise_()
            self.panel.param_scroll.ensureWidgetVisible(editor)
            editor.setFocus()
            editor.mark_error_line(location.line, location.message)
            return
        try:
            with open(location.file, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            QMessageBox.warning(self.ctx.dialog_parent, tr("Cannot show the file"), f"{location.file}: {exc.strerror or exc}")
            return
        self.user_file_dialog, self.user_file_editor = show_code_dialog(
            self.ctx.dialog_parent, tr("{0} — line {1}").format(os.path.basename(location.file), location.line), text,
            caption=f"{location.file}\n" + tr("line {0}: {1}").format(location.line, location.message),
            mark=(location.line, location.message), size=(760, 520))


def changed_function_names(diff: Any) -> set[str]:
    """Names of the functions whose text differs in ``diff`` (a :class:`pipeline_model.diff.ModuleDiff`;
    ``None``: none)."""
    if diff is None:
        return set()
    from pipeline_model.diff import CHANGED as TEXT_CHANGED

    return set(diff.by_status(TEXT_CHANGED))


def _has_focus_within(widget: Any) -> bool:
    focus = QApplication.focusWidget()
    while focus is not None:
        if focus is widget:
            return True
        focus = focus.parentWidget()
    return False
