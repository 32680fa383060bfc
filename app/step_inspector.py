"""``StepInspector``: what the selected step did — diff, graph (with its cache), node details,
the step's report, TensorIR of a callee, and errors in the user's own code.

Graph and TensorIR come from the engine through one request handle each
(``ctx.engine.submit_graph`` / ``submit_prim_func``); the graph cache is keyed by
``(snapshot key, function)``. Results come from the run session's signals.

Module texts are printed by the engine on demand: runs carry snapshot keys, not TVMScript, and the
diff of the selected step asks ``ctx.engine.submit_snapshot(key)`` for the texts it lacks (the diff
view says "loading…" meanwhile); texts are kept by key (:data:`TEXT_CACHE_BYTES`).
"""

from __future__ import annotations

import collections
import gc
import html
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QMessageBox

from app.i18n import tr
from app.code_dialogs import show_code_dialog
from app.context import AppContext
from app.panels import GraphArea, PipelinePanel
from app.pass_kinds import fusion_call_node_ids, highlights_fusion, step_report_html, user_code_files
from app.step_reports import details_placeholder_html, fused_node_ids, group_details_html, node_details_html
from pipeline_model.document import Step
from pipeline_model.engine.results import CANCELLED, CHANGED, FAILED, NOT_RUN, SKIPPED, UNCHANGED, RunResult, StepResult
from widgets.diff_view import DiffView
from widgets.error_trace import ErrorLocation, locate_user_error
from widgets.step_model import QtPipelineModel, format_ms
from widgets.theme import muted_colour

#: Most graphs kept in the cache (oldest dropped first).
GRAPH_CACHE_SIZE = 64
# Bytes of module texts (TVMScript by snapshot key) kept for diffs (oldest dropped first).
TEXT_CACHE_BYTES = 128 * 1024 * 1024



class StepInspector(QObject):
    """Shows the selected step: diff, graph, details/report; follows selection, edits and results."""

    #: The diff/graph for the selected step is on screen (used by the benchmark).
    step_shown = Signal(str)

    def __init__(self, ctx: AppContext, area: GraphArea, panel: PipelinePanel, diff_view: DiffView,
                 step_model: QtPipelineModel) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self.area = area
        self.panel = panel
        self.diff_view = diff_view
        self.step_model = step_model
        self.view = panel.pipeline_view
        self.input_script: Optional[str] = None
        self.input_key: Optional[str] = None
        self.last_good_script: Optional[str] = None
        self.graph_cache: dict[tuple[Optional[str], Optional[str]], dict] = {}
        # Module texts by snapshot key (keys are content hashes), fetched when a diff needs them.
        self._texts: "collections.OrderedDict[str, str]" = collections.OrderedDict()
        self._texts_bytes = 0
        self._text_requests: dict[str, Any] = {}
        # The diff waiting for texts: (snapshot keys with the scripts already known, show(texts)).
        self._pending_diff: Optional[tuple[list[tuple[Optional[str], Optional[str]]], Callable[[list[Optional[str]]], None]]] = None
        self._graph_requests: dict[tuple[str, Optional[str]], Any] = {}
        self._shown_graph: Optional[tuple[str, Optional[str]]] = None
        self._shown_before_key: Optional[str] = None
        self._current_function: Optional[str] = None
        self._fitted_for: Optional[tuple[Any, Any]] = None  # (model, function) last fitted to the view
        self._refit_pending = False
        self._caption = ""
        self._shown_pass_id: Optional[str] = None
        self._shown_report: dict = {}
        self._changed_functions: set[str] = set()  # functions whose text the shown step changed
        self.details_kind = "placeholder"  # or "node" (a node's details) or "report" (a step's report)
        self.prim_func_dialog: Any = None
        self.user_file_dialog: Any = None
        self.user_file_editor: Any = None
        self.show_details_placeholder()
        area.details.anchorClicked.connect(self._on_details_link)
        area.function_picker.activated.connect(self._on_function_picked)
        gv = area.graph_view
        gv.node_selected.connect(self._on_node_selected)
        gv.node_activated.connect(self._on_node_activated)
        gv.graph_shown.connect(self._on_graph_shown)
        gv.function_requested.connect(self.show_function)
        find = area.find_bar
        find.search.connect(gv.find)
        find.next_requested.connect(gv.find_next)
        find.previous_requested.connect(gv.find_previous)
        find.closed.connect(gv.setFocus)
        gv.find_changed.connect(find.set_count)
        diff_view.location_activated.connect(self.show_error_location)
        self.view.current_step_changed.connect(lambda uid: self.show_step(uid))
        self.view.nested_selected.connect(self._on_nested_selected)

    # ---- document and results -------------------------------------------------------------
    def on_document_replaced(self) -> None:
        """A new document: forget the model input and the graphs."""
        self.input_script = self.input_key = None
        self.last_good_script = None
        self.graph_cache.clear()
        self.show_details_placeholder()  # a report (DLight rules, fusion) of the old document
        self._fitted_for = None
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
        if self.details_kind == "placeholder":
            self.show_details_placeholder()
        elif self.details_kind == "node":
            self._on_graph_shown()
        elif self.details_kind == "report":
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
        if self.details_kind == "report":
            self.show_details_placeholder()  # the previous step's report; this step's follows
        title = tr("Step {0}: {1}").format(index + 1, self.ctx.catalogue.title_for(step.pass_id))
        self._shown_pass_id = None
        self._shown_report = {}
        self._changed_functions = set()
        if result is None or result.state != FAILED:
            self._mark_source_error(uid, None)
        if result is None:
            self._diff_message(tr("{0} has not run yet.").format(title) if step.runnable else tr("{0} is disabled (skipped).").format(title))
            self._show_graph(before_key, None, tr("{0} — not run yet; showing its input").format(title))
            return
        if result.state == FAILED:
            location = self.error_location(index, result)
            self._mark_source_error(uid, location)
            fallback = self.last_good_script or self.input_script

            def show_error(texts: list[Optional[str]]) -> None:
                self.diff_view.set_error(title, result.error or "unknown error", texts[0] or "",
                                         traceback=result.traceback or "", location=location)

            self._show_graph(before_key, None, tr("{0} failed — showing the last good module").format(title))
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
        self._shown_pass_id = step.pass_id
        self._shown_report = dict(result.report or {})
        self._show_step_report(index, step, result)
        label = tr("changed the module") if result.state == CHANGED else (tr("changed nothing") if result.state == UNCHANGED else result.state)
        changed = result.state == CHANGED

        def show_diff(texts: list[Optional[str]]) -> None:
            before_text = texts[0]
            after_text = texts[1] if changed else (result.script if result.script is not None else before_text)
            self.diff_view.set_snapshots(before_text, after_text, before_title=tr("Before {0}").format(title),
                                         after_title=tr("After {0}").format(title) + f" — {label} ({format_ms(result.elapsed_ms)})")
            functions = changed_function_names(self.diff_view.module_diff) if changed else set()
            if functions != self._changed_functions:
                self._changed_functions = functions
                self._render_graph()  # callers of changed PrimFuncs light up (a cached layout)
            self.step_shown.emit(uid)

        # An unchanged (or skipped) step's module prints as its input: only the "before" text is needed.
        wanted = [(before_key, before)] + ([(result.snapshot_key, result.script)] if changed else [])
        self._show_graph(result.snapshot_key or before_key, before_key if changed else None, f"{title} — {label}")
        self._with_texts(wanted, show_diff)

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
        self._show_graph(before_key, None, caption)
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
        self._show_graph(self.input_key, None, tr("Model input"))  # asked first: the engine serves in order
        if self.input_script or self.input_key:
            def show(texts: list[Optional[str]]) -> None:
                text = texts[0] or ""
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
            self.area.details.setHtml(f"<h3 style='margin:0'>{title}</h3>" + text)
            self.details_kind = "report"

    # ---- errors in the user's own code ------------------------------------------------------
    def error_location(self, index: int, result: StepResult) -> Optional[ErrorLocation]:
        """The line of the user's code that step ``index``'s failure points at, if any."""
        files = user_code_files(self.ctx.doc, index)
        if not files or result.state != FAILED:
            return None
        return locate_user_error(result.error or "", result.traceback or "", files)

    def source_editor(self, uid: Optional[str] = None) -> Any:
        """The code editor of the shown step's ``source`` parameter (custom step), or ``None``."""
        if uid is not None and uid != self.view.current_uid():
            return None
        editor = self.panel.param_editor
        if "source" not in editor.names():
            return None
        return getattr(editor.editor("source"), "editor", None)

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
        import os

        self.user_file_dialog, self.user_file_editor = show_code_dialog(
            self.ctx.dialog_parent, tr("{0} — line {1}").format(os.path.basename(location.file), location.line), text,
            caption=f"{location.file}\n" + tr("line {0}: {1}").format(location.line, location.message),
            mark=(location.line, location.message), size=(760, 520))

    # ---- graph -----------------------------------------------------------------------------
    def on_engine_restarted(self) -> None:
        """The engine crashed and restarted: graphs asked of the old engine are forgotten."""
        self.graph_cache.clear()
        self._graph_requests.clear()
        self.area.graph_view.clear_cache()

    def _show_graph(self, key: Optional[str], before_key: Optional[str], caption: str) -> None:
        self.area.graph_caption.setText(caption)
        self._caption = caption
        self._shown_graph = (key, self._current_function) if key else None
        self._shown_before_key = before_key
        if not key:
            self.area.graph_view.clear_graph(tr("Run the pipeline (F5) to see the model as a graph"))
            return
        for k in (key, before_key):
            if k:
                self._request_graph(k, self._current_function)
        self._render_graph()

    def _request_graph(self, key: str, function: Optional[str]) -> None:
        wanted = (key, function)
        if wanted in self.graph_cache or wanted in self._graph_requests:
            return
        request = self.ctx.engine.submit_graph(key, function)
        self._graph_requests[wanted] = request
        request.finished.connect(lambda value: self._on_graph(wanted, value))
        request.failed.connect(lambda message: self._on_graph_failed(wanted, message))

    def _on_graph(self, wanted: tuple[str, Optional[str]], value: Any) -> None:
        self._graph_requests.pop(wanted, None)
        self.graph_cache[wanted] = value if isinstance(value, dict) else {"graph": None}
        if len(self.graph_cache) > GRAPH_CACHE_SIZE:
            self.graph_cache.pop(next(iter(self.graph_cache)))
        # A graph reply is ~10^5 long-lived objects. Left to the cyclic GC, each full collection walks
        # them all again on whichever thread allocates next, holding the GIL (100-200 ms GUI stalls at
        # 128 layers). Frozen, they are skipped by collections and still freed by reference counting.
        gc.freeze()
        self._render_graph()

    def _on_graph_failed(self, wanted: tuple[str, Optional[str]], message: str) -> None:
        self._graph_requests.pop(wanted, None)
        self.area.graph_caption.setText(tr("Graph unavailable: {0}").format(message.splitlines()[0][:200] if message else ""))

    def _render_graph(self) -> None:
        if not self._shown_graph:
            return
        key, function = self._shown_graph
        reply = self.graph_cache.get((key, function))
        if reply is None:
            return
        before_reply = self.graph_cache.get((self._shown_before_key, function)) if self._shown_before_key else None
        if self._shown_before_key and before_reply is None:
            return  # wait for the "before" graph to highlight changes
        data = reply.get("graph")
        self._update_function_picker(reply)
        caption = self._caption
        if reply.get("missing") and reply.get("function"):
            caption += "  " + tr("('{0}' is not in this module; showing {1})").format(reply.get("requested"), reply["function"])
        self.area.graph_caption.setText(caption)
        if not data:
            self.area.graph_view.clear_graph(tr("This module has no Relax function"))
            self.area.graph_caption.setText(caption + tr(" (no Relax function)"))
            return
        # Change detection against the step's input runs in the graph view's worker (before=...).
        before = None
        if before_reply is not None and before_reply.get("function") == reply.get("function"):
            before = before_reply.get("graph")
        extra: set[str] = set()
        if before is not None:
            # A step that changed only a PrimFunc leaves the Relax binding as it was: its callers light up.
            extra |= callee_changed_node_ids(data, self._changed_functions)
        if self._shown_pass_id is not None and highlights_fusion(self._shown_report):
            # The bindings fused into composite/offloaded functions by this step: the calls the
            # step's fusion report names (by var name), and any call of a composite function.
            extra |= fused_node_ids(data) | fusion_call_node_ids(data, self._shown_report)
        identity = (self.ctx.doc.model, reply.get("function"))
        if identity != self._fitted_for:
            self._fitted_for = identity
            self._refit_pending = True  # a new model or function: fit it when it is on screen
        self.area.find_bar.forget_matches()
        self.area.graph_view.set_graph(data, extra, key=(key, reply.get("function")), before=before)

    def _update_function_picker(self, reply: dict) -> None:
        picker = self.area.function_picker
        names = [str(n) for n in reply.get("functions") or []]
        current = reply.get("function")
        if reply.get("missing") and current:
            # The function asked for is not in this module (another model, a fused function of a
            # later step): follow the one shown, so the next steps ask for it.
            self._current_function = str(current)
        picker.blockSignals(True)
        picker.clear()
        for name in names or ([str(current)] if current else []):
            picker.addItem(name)
        if current:
            picker.setCurrentText(str(current))
        picker.setEnabled(len(names) > 1)
        picker.blockSignals(False)

    def _on_function_picked(self, index: int) -> None:
        self.show_function(self.area.function_picker.itemText(index))

    def show_function(self, name: str) -> None:
        """Show Relax function ``name`` of the selected step's module (picker, or opening a fused call)."""
        self._current_function = name or None
        self.show_step(self.view.current_uid())

    def open_find(self) -> None:
        """Edit > Find in Graph (Ctrl+F)."""
        self.area.find_bar.open_bar()

    def find_next(self, backwards: bool = False) -> None:
        """F3 / Shift+F3: the next (previous) match; opens the find bar when nothing was searched yet."""
        bar = self.area.find_bar
        if not bar.isVisible() or bar.searched is None:
            bar.open_bar()
            if bar.edit.text().strip():
                bar.searched = bar.edit.text().strip()
                self.area.graph_view.find(bar.searched)
            return
        if backwards:
            self.area.graph_view.find_previous()
        else:
            self.area.graph_view.find_next()

    def shown_graph(self) -> Optional[tuple[str, Optional[str]]]:
        """``(snapshot key, function)`` of the graph shown (``None`` when none; function ``None`` = the
        engine's default, the entry function)."""
        if not self._shown_graph:
            return None
        key, function = self._shown_graph
        reply = self.graph_cache.get(self._shown_graph) or {}
        return key, (reply.get("function") or function)

    def fit_graph(self) -> None:
        """View > Fit Graph."""
        self.area.graph_view.fit_to_view()

    # ---- node details, TensorIR ---------------------------------------------------------------
    def _shown_graph_data(self) -> dict:
        return self.area.graph_view.graph_json() or {}

    def _graph_node(self, node_id: str) -> Optional[dict]:
        """The node of the graph shown with this id: a node of the function, of an inlined callee
        (``<call id>/<node id>``), or of the view (a collapsed group, a stub)."""
        return self._node_and_graph(node_id)[0]

    def _node_and_graph(self, node_id: str) -> tuple[Optional[dict], dict]:
        gv = self.area.graph_view
        full = gv.graph_json() or {}
        view = gv.view_json() or {}
        view_node = next((n for n in view.get("nodes", []) if n.get("id") == node_id), None)
        if view_node is not None and view_node.get("kind") == "group":
            return view_node, view
        if view_node is not None and view_node.get("stub_of") is not None:
            node_id = str(view_node["stub_of"])
        node = next((n for n in full.get("nodes", []) if n.get("id") == node_id), None)
        if node is not None:
            return node, full
        call_id, _sep, inner = node_id.partition("/")
        call = next((n for n in full.get("nodes", []) if n.get("id") == call_id), None) if inner else None
        callee = ((full.get("graph") or {}).get("callees") or {}).get(call.get("callee")) if call else None
        if callee:
            node = next((n for n in callee.get("nodes", []) if n.get("id") == inner), None)
            if node is not None:
                return node, callee
        return (view_node, view) if view_node is not None else (None, {})

    def _on_node_selected(self, info: Any) -> None:
        node_id = str(info.get("id", "")) if isinstance(info, dict) else str(info or "")
        node, graph = self._node_and_graph(node_id) if node_id else (None, {})
        if node is None:
            self.show_details_placeholder()
            return
        if node.get("kind") == "group":
            self.area.details.setHtml(group_details_html(node, graph, self.area.graph_view.groups()))
        else:
            text = node_details_html(node, graph)
            view_node = next((n for n in (self.area.graph_view.view_json() or {}).get("nodes", []) if n.get("id") == node_id), None)
            if view_node is not None and view_node.get("stub_of") is not None:
                text += "<p><i>" + html.escape(tr("Shown again next to this use (a stub): the value is defined once.")) + "</i></p>"
            self.area.details.setHtml(text)
        self.details_kind = "node"

    def show_details_placeholder(self) -> None:
        """The node details panel's hint (wrapped, in the palette's placeholder colour)."""
        color = muted_colour(QApplication.palette(), 0.45).name()  # PlaceholderText may be translucent
        self.area.details.setHtml(details_placeholder_html(color))
        self.details_kind = "placeholder"

    def _on_graph_shown(self) -> None:
        """A new graph is on screen: node details must describe a node of this graph; a new model or
        function is fitted to the view."""
        gv = self.area.graph_view
        if self._refit_pending and gv.graph_json() is not None:
            self._refit_pending = False
            gv.fit_to_view()
        if self.details_kind == "report":
            return
        selected = self.area.graph_view.selected_node()
        if selected is not None and self._graph_node(selected) is not None:
            self._on_node_selected({"id": selected})
        else:
            self.show_details_placeholder()

    def _on_details_link(self, url: Any) -> None:
        text = url.toString()
        if text.startswith("primfunc:"):
            self.request_prim_func(text[len("primfunc:"):])

    def _on_node_activated(self, info: Any) -> None:
        node = self._graph_node(str(info.get("id", "")) if isinstance(info, dict) else str(info or ""))
        if node and node.get("callee") and node.get("callee_kind") == "prim_func":
            self.request_prim_func(str(node["callee"]))

    def request_prim_func(self, name: str) -> None:
        """Ask the engine for the TensorIR of ``name`` in the shown module; a dialog shows it."""
        if not self._shown_graph:
            return
        request = self.ctx.engine.submit_prim_func(self._shown_graph[0], name)
        request.finished.connect(lambda value: self._show_prim_func(name, value))
        request.failed.connect(lambda message: QMessageBox.warning(self.ctx.dialog_parent, tr("TensorIR"), message))

    def _show_prim_func(self, name: str, value: Any) -> None:
        text = str(value if not isinstance(value, dict) else value.get("text", ""))
        self.prim_func_dialog, _editor = show_code_dialog(self.ctx.dialog_parent, tr("TensorIR — {0}").format(name), text)


def changed_function_names(diff: Any) -> set[str]:
    """Names of the functions whose text differs in ``diff`` (a :class:`pipeline_model.diff.ModuleDiff`;
    ``None``: none)."""
    if diff is None:
        return set()
    from pipeline_model.diff import CHANGED as TEXT_CHANGED

    return set(diff.by_status(TEXT_CHANGED))


def callee_changed_node_ids(graph: dict, functions: set[str]) -> set[str]:
    """Ids of the call nodes of ``graph`` (call_tir, calls of Relax functions) whose callee is one of
    ``functions``."""
    if not functions:
        return set()
    return {str(n["id"]) for n in graph.get("nodes", []) if n.get("callee") and str(n["callee"]) in functions}


def _has_focus_within(widget: Any) -> bool:
    focus = QApplication.focusWidget()
    while focus is not None:
        if focus is widget:
            return True
        focus = focus.parentWidget()
    return False
