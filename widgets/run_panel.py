"""``RunPanel``: build and run the pipeline's module on a local device (issue 4, GUI side).

The panel is a view: it holds the controls (target/device, which module, inputs, tolerances, timing
settings), emits requests, and shows results it is given as plain dicts (the JSON of
``pipeline_model.build_api`` results). It never talks to the engine itself (``app.run_controller``
does) and never imports ``app``.
"""

from __future__ import annotations

import html
from typing import Any, Callable, Optional

from PySide6.QtCore import QCoreApplication, QEvent, QLocale, QPoint, Qt, Signal
from PySide6.QtGui import QDoubleValidator
from PySide6.QtWidgets import (
    QBoxLayout,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from pipeline_model.document import target_label
from pipeline_model.latency_stats import FASTER, SAME_BUILD, SLOWER, Comparison, compare_runs
from widgets.compare_view import latency_bar, verdict_label
from widgets.doc_text import labelled
from widgets.build_texts import WARNING_FORMS, shown_error_html, shown_label, shown_progress, shown_text
from widgets.engine_texts import code, shown_html
from widgets.latency_chart import LatencyChart, format_us
from widgets.target_picker import TargetPicker
from widgets.theme import status_css
from widgets.units import format_duration_ms

#: Module choices of the "Module" combo (data values).
MODULE_FINAL = "final"
MODULE_SELECTED = "selected"

INPUT_FILTER = "NumPy arrays (*.npy *.npz);;All files (*)"


def _fmt(value: Optional[float], digits: int = 4) -> str:
    return "–" if value is None else f"{value:.{digits}g}"


def _warm_ms(latency: dict[str, Any]) -> str:
    if not latency.get("warmup_ms"):
        return ""
    return " " + QCoreApplication.translate("RunPanel", "({time} of warm-up)").format(
        time=format_duration_ms(latency["warmup_ms"]))


def build_run_html(result: dict[str, Any]) -> str:
    """HTML summary of a ``build_run`` reply: outputs, latency and the numerical check (translated)."""
    esc = html.escape
    head = QCoreApplication.translate("RunPanel", "{label} — {function} on {device}, target {target}; built in {time}; weights: {weights}").format(
        label=f"<b>{esc(shown_label(result.get('label', '')))}</b>", function=f"<code>{esc(str(result.get('function', '')))}</code>",
        device=esc(str(result.get("device", ""))), target=f"<code>{esc(target_label(result.get('target') or {}))}</code>",
        time=format_duration_ms(result.get("build_ms")), weights=esc(shown_text(result.get("weights", ""))))
    rows = [f"<p>{head}</p>"]
    check = result.get("check")
    if check:
        failed_text = QCoreApplication.translate("RunPanel", "✗ check failed")
        passed_text = QCoreApplication.translate("RunPanel", "✓ check passed")
        fail_text = QCoreApplication.translate("RunPanel", "✗ check FAILED")
        failure = check.get("reference_failure")  # the default-pipeline reference crashed or failed
        if failure and check.get("max_abs") is None:
            not_checked = QCoreApplication.translate(
                "RunPanel", "✗ not checked: the reference (TVM's default pipeline on the model as loaded) failed; "
                "this module built and ran")
            verdict = (f"<span style='color:{status_css('error')}'><b>{esc(not_checked)}</b>: {code(str(failure))}</span>")
        elif check.get("error"):
            verdict = (f"<span style='color:{status_css('error')}'><b>{esc(failed_text)}</b>: {code(str(check['error']))}</span>")
        elif check.get("passed"):
            verdict = f"<span style='color:{status_css('ok')}'><b>{esc(passed_text)}</b></span>"
        else:
            verdict = f"<span style='color:{status_css('error')}'><b>{esc(fail_text)}</b></span>"
        detail = QCoreApplication.translate("RunPanel", "max abs error {abs}, max rel error {rel} (rtol {rtol}, atol {atol}) vs {reference}").format(
            abs=_fmt(check.get("max_abs")), rel=_fmt(check.get("max_rel")), rtol=_fmt(check.get("rtol")), atol=_fmt(check.get("atol")),
            reference=esc(shown_text(check.get("reference") or QCoreApplication.translate("RunPanel", "the unoptimized model"))))
        if failure and check.get("max_abs") is not None:
            detail += "; " + esc(QCoreApplication.translate(
                "RunPanel", "the default-pipeline reference failed ({failure}), so this is the fallback")).format(
                    failure=code(str(failure)))
        if check.get("quant_step"):
            detail += "; " + esc(QCoreApplication.translate("RunPanel", "int8 model: tolerance = 1 quantization step "
                                                            "({step})").format(step=_fmt(check["quant_step"])))
        elif check.get("tolerance_dtype"):
            detail += "; " + esc(QCoreApplication.translate("RunPanel", "tolerance chosen for {dtype}, the module's lowest "
                                                            "precision").format(dtype=check["tolerance_dtype"]))
        rows.append(f"<p>{verdict} — {detail}</p>")
        rows.append(check_scale_html(check))
    latency = result.get("latency")
    latency_title = QCoreApplication.translate("RunPanel", "Latency")
    outputs_title = QCoreApplication.translate("RunPanel", "Outputs")
    inputs_title = QCoreApplication.translate("RunPanel", "Inputs")
    if latency:
        spread = float(latency["max_us"]) - float(latency["min_us"])
        text = QCoreApplication.translate("RunPanel", "median {median}, spread {spread} (min {min}, max {max}, std {std}); {repeat} repeats × "
                              "{number} runs after {warmup} warm-up runs").format(
            median=format_us(float(latency["median_us"])), spread=format_us(spread),
            min=format_us(float(latency["min_us"])), max=format_us(float(latency["max_us"])),
            std=format_us(float(latency["std_us"])), repeat=latency.get("repeat"), number=latency.get("number"),
            warmup=latency.get("warmup"))
        rows.append(f"<p><b>{esc(latency_title)}</b> {text}{_warm_ms(latency)}</p>")
    if result.get("profile_note"):  # profiling on the RPC device failed; the run and its timing stand
        rows.append("<p>" + esc(QCoreApplication.translate(
            "RunPanel", "No profile: timing the kernels on the RPC device failed ({error}).")).format(
                error=code(str(result["profile_note"]))) + "</p>")
    outs = result.get("outputs") or []
    if outs:
        items = []
        for o in outs:
            stats = "" if o.get("mean") is None else " " + QCoreApplication.translate("RunPanel", "min {min}, max {max}, mean {mean}, std {std}").format(
                min=_fmt(o.get("min")), max=_fmt(o.get("max")), mean=_fmt(o.get("mean")), std=_fmt(o.get("std")))
            bad = (", <b>" + QCoreApplication.translate("RunPanel", "{nan} NaN, {inf} Inf").format(nan=o.get("nan"), inf=o.get("inf")) + "</b>"
                   if (o.get("nan") or o.get("inf")) else "")
            name = QCoreApplication.translate("RunPanel", "output {index}").format(index=o.get("index"))
            items.append(f"<li>{name}: <code>{list(o.get('shape') or [])}</code> {esc(str(o.get('dtype')))}{stats}{bad}</li>")
        rows.append(f"<p style='margin-bottom:0'><b>{esc(outputs_title)}</b></p><ul style='margin-top:0'>"
                    + "".join(items) + "</ul>")
    args = result.get("arguments") or []
    if args:
        inputs = [a for a in args if not a.get("weight")]
        rows.append(f"<p><b>{esc(inputs_title)}</b> " + ", ".join(
            f"<code>{esc(str(a.get('name')))}</code> {list(a.get('shape') or [])} ({esc(shown_text(a.get('source')))})" for a in inputs
        ) + "</p>")
    return "".join(rows)


def check_scale_html(check: dict[str, Any]) -> str:
    """The part of a check that says whether it means something: max |diff| / max |ref| (the figure to
    read when the tolerance is scaled to the output) and the check's warnings (outputs too small, all
    zeros …), in the warning colour."""
    parts = []
    if check.get("max_abs_over_ref") is not None:
        ratio = QCoreApplication.translate("RunPanel", "max |diff| / max |ref| = {ratio} (max |ref| {ref}; tolerance scaled to the {scale})")
        scale = shown_text(check.get("scale") or "output")
        parts.append("<p>" + html.escape(ratio.format(ratio=_fmt(check.get("max_abs_over_ref"), 3),
                                                      ref=_fmt(check.get("max_ref"), 3), scale=scale)) + "</p>")
    warnings = [str(w) for w in check.get("warnings") or [] if w]
    if warnings:
        colour = status_css("warning")
        word = html.escape(QCoreApplication.translate("RunPanel", "Warning"))
        parts.append("".join(f"<p style='color:{colour}'><b>⚠ {word}:</b> {shown_html(w, WARNING_FORMS, 'RunPanel')}</p>"
                             for w in warnings))
    return "".join(parts)


def compare_verdict(result: dict[str, Any]) -> Optional[Comparison]:
    """The pipeline against the baseline: the engine's ``comparison``, or one computed from both sides'
    repeats; ``None`` when the reply holds no repeats (then there is no spread to judge by)."""
    cmp = Comparison.from_json(result.get("comparison"))
    if cmp is not None:
        return cmp
    a = (result.get("a") or {}).get("latency") or {}
    b = (result.get("b") or {}).get("latency") or {}
    if a.get("runs_us") and b.get("runs_us"):
        return compare_runs(a["runs_us"], b["runs_us"])
    return None


def compare_headline(result: dict[str, Any]) -> str:
    """The pipeline against the baseline in words: the verdict (never a bare speed-up for the same build or
    a difference inside the spread), or the ratio of the medians when no repeats came with the reply."""
    cmp = compare_verdict(result)
    if cmp is not None:
        return verdict_label(cmp)
    speedup = float(result.get("speedup") or 0.0)
    return QCoreApplication.translate("RunPanel", "ratio of the medians {value}× (no repeats: the spread is unknown)").format(
        value=f"{speedup:.2f}")


def compare_html(result: dict[str, Any]) -> str:
    """HTML summary of a ``compare`` reply: the verdict, then each side's median and spread."""
    esc = html.escape
    a, b = result.get("a") or {}, result.get("b") or {}
    head = QCoreApplication.translate("RunPanel", "{pipeline} against {baseline}: {verdict}").format(
        pipeline=esc(shown_label(b.get("label"))), baseline=esc(shown_label(a.get("label"))), verdict=esc(compare_headline(result)))
    rows = [f"<p><b>{head}</b></p>"]
    cmp = compare_verdict(result)
    if cmp is not None and cmp.verdict != SAME_BUILD:
        how = (QCoreApplication.translate("RunPanel", "median of the per-round ratios, timed in turn") if cmp.paired
               else QCoreApplication.translate("RunPanel", "ratio of the medians"))
        rows.append("<p>" + esc(QCoreApplication.translate("RunPanel", "latency pipeline / baseline {ratio} ({how}); {level} % interval "
                                  "{low} – {high} over {n} repeats; differences under {effect} % are not called "
                                  "significant").format(ratio=f"{cmp.ratio:.3f}", how=how,
                                                        level=int(round(cmp.level * 100)), low=f"{cmp.low:.3f}",
                                                        high=f"{cmp.high:.3f}", n=min(cmp.n_a, cmp.n_b),
                                                        effect=f"{cmp.min_effect * 100:.0f}")) + "</p>")
    for side in (a, b):
        lat = side.get("latency") or {}
        spread = (QCoreApplication.translate("RunPanel", "IQR {low} – {high}").format(low=format_us(float(lat["q1_us"])), high=format_us(float(lat["q3_us"])))
                  if lat.get("q1_us") is not None and lat.get("q3_us") is not None else "")
        line = QCoreApplication.translate("RunPanel", "{label}: median {median} {spread} (min {min}, max {max}); built in {time}").format(
            label=esc(shown_label(side.get("label"))), median=format_us(float(lat.get("median_us", 0))), spread=spread,
            min=format_us(float(lat.get("min_us", 0))), max=format_us(float(lat.get("max_us", 0))),
            time=format_duration_ms(side.get("build_ms")))
        rows.append(f"<p>{line}</p>")
    check = result.get("check")
    if check:
        ok = check.get("passed")
        same = QCoreApplication.translate("RunPanel", "✓ same results") if ok else QCoreApplication.translate("RunPanel", "✗ results differ")
        rows.append("<p>" + esc(QCoreApplication.translate("RunPanel", "{0}: max abs {1}, max rel {2}").format(
            same, _fmt(check.get("max_abs")), _fmt(check.get("max_rel")))) + "</p>")
    return "".join(rows)


class RunPanel(QWidget):
    """Controls and results of Build & Run, Compare with baseline and Export library."""

    target_chosen = Signal(dict)
    advanced_target_requested = Signal()
    build_requested = Signal()
    compare_requested = Signal()
    export_requested = Signal(str)
    stop_requested = Signal()
    refresh_devices_requested = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("runPanel")
        self._syncing = False
        self.last_build: Optional[dict[str, Any]] = None
        self.last_compare: Optional[dict[str, Any]] = None
        self.last_export: Optional[dict[str, Any]] = None
        self.last_error: Optional[str] = None
        self.remote: Optional[dict[str, Any]] = None  # the RPC device chosen in the picker ({"tracker", "key"})
        target_row = self._build_target_row()
        module_combo = self._build_module_combo()
        inputs_row = self._build_inputs_row()
        check_row = self._build_check_row()
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow(self.tr("Target"), target_row)
        form.addRow(self.tr("Module"), module_combo)
        form.addRow(self.tr("Inputs"), inputs_row)
        form.addRow(self.tr("Check"), check_row)
        actions = self._build_actions()
        self._build_results()
        left = QVBoxLayout()
        left.addLayout(form)
        left.addLayout(actions)
        left.addWidget(self.status)
        left.addWidget(self.chart)
        left.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(left, 3)
        layout.addWidget(self.results, 2)
        self._left, self._layout = left, layout

    def fit_width(self, width: int) -> None:
        """Results beside the controls when ``width`` (the panel's room) holds both, else below them (a narrow
        window: side by side they would need a horizontal scroll and squeeze the results to a few letters)."""
        both = self._left.minimumSize().width() + self.results.minimumWidth() + 24
        direction = QBoxLayout.Direction.LeftToRight if width >= both else QBoxLayout.Direction.TopToBottom
        if self._layout.direction() != direction:
            self._layout.setDirection(direction)
            self.results.setMinimumHeight(0 if direction == QBoxLayout.Direction.LeftToRight else
                                          12 * self.results.fontMetrics().height())

    def eventFilter(self, watched, event) -> bool:  # noqa: N802, ANN001 - Qt API
        if watched is self.parentWidget() and event.type() == QEvent.Type.Resize:
            self.fit_width(watched.width())  # the scroll area's viewport: the room the panel has
        return super().eventFilter(watched, event)

    def showEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        parent = self.parentWidget()
        if parent is not None:
            parent.removeEventFilter(self)
            parent.installEventFilter(self)
            self.fit_width(parent.width())
        super().showEvent(event)

    def _build_target_row(self) -> QHBoxLayout:
        """Target chooser, "Advanced…" (the target as JSON) and "detect devices again"."""
        self.target_combo = TargetPicker(self)
        self.target_combo.setObjectName("runTarget")
        # Not as wide as its longest entry: at 1024 px that squeezed the results to a column of single letters.
        self.target_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.target_combo.setMinimumContentsLength(24)
        self.target_combo.setToolTip(self.tr("Device and target to build for (devices detected by the engine)"))
        self.target_combo.activated.connect(self._on_target_activated)
        self.advanced_button = QToolButton(self)
        self.advanced_button.setText(self.tr("Advanced…"))
        self.advanced_button.setToolTip(self.tr("Edit the target as JSON (checked by the engine)"))
        self.advanced_button.clicked.connect(self.advanced_target_requested)
        self.refresh_button = QToolButton(self)
        self.refresh_button.setText("⟳")
        self.refresh_button.setToolTip(self.tr("Detect devices again"))
        self.refresh_button.clicked.connect(self.refresh_devices_requested)
        target_row = QHBoxLayout()
        target_row.addWidget(self.target_combo, 1)
        target_row.addWidget(self.advanced_button)
        target_row.addWidget(self.refresh_button)
        return target_row

    def _build_module_combo(self) -> QComboBox:
        """Which module to build: the final one or the one after the selected step."""
        self.module_combo = QComboBox(self)
        self.module_combo.addItem(self.tr("Final module (all steps)"), MODULE_FINAL)
        self.module_combo.addItem(self.tr("Module after the selected step"), MODULE_SELECTED)
        return self.module_combo

    def _build_inputs_row(self) -> QHBoxLayout:
        """Inputs: random with a seed, or arrays from a file."""
        self.random_radio = QRadioButton(self.tr("Random, seed"), self)
        self.random_radio.setChecked(True)
        self.file_radio = QRadioButton(self.tr("File"), self)
        group = QButtonGroup(self)
        group.addButton(self.random_radio)
        group.addButton(self.file_radio)
        self.seed_spin = QSpinBox(self)
        self.seed_spin.setRange(0, 2**31 - 1)
        self.input_path = QLineEdit(self)
        self.input_path.setPlaceholderText(self.tr(".npy / .npz (arrays named like the inputs)"))
        self.browse_button = QToolButton(self)
        self.browse_button.setText("…")
        self.browse_button.clicked.connect(self._browse_inputs)
        self.input_path.textEdited.connect(lambda _t: self.file_radio.setChecked(True))
        inputs_row = QHBoxLayout()
        inputs_row.addWidget(self.random_radio)
        inputs_row.addWidget(self.seed_spin)
        inputs_row.addSpacing(8)
        inputs_row.addWidget(self.file_radio)
        inputs_row.addWidget(self.input_path, 1)
        inputs_row.addWidget(self.browse_button)
        return inputs_row

    def _build_check_row(self) -> QHBoxLayout:
        """Numerical check tolerances, timing repeats and the profile box."""
        self.rtol_spin = _sci_spin(self, None)
        self.atol_spin = _sci_spin(self, None)
        for edit in (self.rtol_spin, self.atol_spin):  # empty: the engine picks it from the module's precision
            edit.setPlaceholderText(self.tr("auto"))
            edit.setToolTip(self.tr("Empty: chosen from the lowest floating-point precision in the built module "
                                    "(1e-4 for float32, 1e-2 for float16, 5e-2 for bfloat16)"))
        self.repeat_spin = QSpinBox(self)
        self.repeat_spin.setRange(1, 1000)
        self.repeat_spin.setValue(20)
        self.number_spin = QSpinBox(self)
        self.number_spin.setRange(1, 100000)
        self.number_spin.setValue(5)
        check_row = QHBoxLayout()
        check_row.addWidget(QLabel("rtol", self))
        check_row.addWidget(self.rtol_spin)
        check_row.addWidget(QLabel("atol", self))
        check_row.addWidget(self.atol_spin)
        check_row.addSpacing(12)
        check_row.addWidget(QLabel(self.tr("repeats"), self))
        check_row.addWidget(self.repeat_spin)
        check_row.addWidget(QLabel(self.tr("× runs"), self))
        check_row.addWidget(self.number_spin)
        check_row.addSpacing(12)
        self.profile_check = QCheckBox(self.tr("Profile"), self)
        self.profile_check.setObjectName("runProfile")
        self.profile_check.setToolTip(self.tr("Also time every PrimFunc / packed function call with the VM's "
                                              "instrumentation; on an RPC device every kernel is timed there by "
                                              "itself (Profile panel, heat overlay on the graph)"))
        check_row.addWidget(self.profile_check)
        check_row.addStretch(1)
        return check_row

    def _build_actions(self) -> QHBoxLayout:
        """Build & Run, Compare with Baseline, Export Library…, Stop."""
        self.build_button = QPushButton(self.tr("Build && Run"), self)
        self.build_button.setObjectName("buildRunButton")
        self.build_button.setToolTip(self.tr("Build the module, run it, time it and check it against the unoptimized model (Ctrl+B)"))
        self.build_button.clicked.connect(self.build_requested)
        self.compare_button = QPushButton(self.tr("Compare with Baseline"), self)
        self.compare_button.setToolTip(self.tr("Build the model as loaded (default pipeline) and this pipeline; run both on the same inputs"))
        self.compare_button.clicked.connect(self.compare_requested)
        self.export_button = QPushButton(self.tr("Export Library…"), self)
        self.export_button.setToolTip(self.tr("Build and write model.so, weights.npz, model.json and deploy.py into a folder"))
        self.export_button.clicked.connect(self._choose_export_folder)
        self.stop_button = QPushButton(self.tr("Stop"), self)
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop_requested)
        actions = QHBoxLayout()
        for button in (self.build_button, self.compare_button, self.export_button, self.stop_button):
            actions.addWidget(button)
        actions.addStretch(1)
        return actions

    def _build_results(self) -> None:
        """Status line, results browser and latency chart."""
        self.status = QLabel("", self)
        self.status.setObjectName("runStatus")
        self.status.setTextFormat(Qt.TextFormat.RichText)  # what TVM said in a code font (show_error)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.results = QTextBrowser(self)
        self.results.setObjectName("runResults")
        self.results.setOpenLinks(False)
        self.results.setPlaceholderText(self.tr("Build & Run (Ctrl+B) to see outputs, latency and the numerical check."))
        self.results.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.results.setMinimumWidth(24 * self.results.fontMetrics().averageCharWidth())
        self.chart = LatencyChart(self)

    # ---- targets --------------------------------------------------------------------------
    def set_devices(self, devices: list[dict[str, Any]], current: dict[str, Any],
                    presets: Optional[list[dict[str, Any]]] = None, rpc: Optional[dict[str, Any]] = None) -> None:
        """Fill the target list from the engine's ``devices`` reply (CPU first) and, when given, the picker's
        presets with whether each compiles and runs here (:class:`widgets.target_picker.TargetPicker`) and the
        RPC tracker's devices (``rpc_devices`` reply), then select ``current`` (or the RPC device chosen)."""
        self._syncing = True
        try:
            self.target_combo.set_choices(devices, list(presets or []), rpc)
        finally:
            self._syncing = False
        self.show_target(current)

    def show_target(self, target: dict[str, Any]) -> None:
        """Select ``target`` in the list (added as a custom entry when it is not there); while an RPC device is
        chosen (:attr:`remote`) and listed, that device stays selected."""
        self._syncing = True
        try:
            if self.remote is None or not self.target_combo.show_remote(self.remote):
                self.remote = None
                self.target_combo.show_target(target)
        finally:
            self._syncing = False

    def _on_target_activated(self, index: int) -> None:
        if self._syncing:
            return
        remote = self.target_combo.remote_at(index)
        if remote is not None:  # built here for the pipeline's target, run on that RPC device
            self.remote = remote
            return
        target = self.target_combo.itemData(index)
        if isinstance(target, dict):
            self.remote = None
            self.target_chosen.emit(dict(target))

    # ---- request values -------------------------------------------------------------------
    def module_choice(self) -> str:
        """``final`` or ``selected``."""
        return str(self.module_combo.currentData())

    def inputs(self) -> dict[str, Any]:
        """``{"path": file}`` or ``{"seed": n}``."""
        if self.file_radio.isChecked() and self.input_path.text().strip():
            return {"path": self.input_path.text().strip()}
        return {"seed": int(self.seed_spin.value())}

    def check_tolerances(self) -> tuple[Optional[float], Optional[float]]:
        """``(rtol, atol)`` as typed; ``None`` for an empty field (the engine's default for the module's
        precision). ``ValueError`` naming the field for a bad value."""
        values: list[Optional[float]] = []
        for name, edit in (("rtol", self.rtol_spin), ("atol", self.atol_spin)):
            if not edit.text().strip():
                values.append(None)
                continue
            try:
                value = float(edit.text())
            except ValueError:
                raise ValueError(self.tr("{0} {1} is not a number (e.g. 1e-4)").format(name, repr(edit.text()))) from None
            if value < 0:
                raise ValueError(self.tr("{0} must not be negative").format(name))
            values.append(value)
        return values[0], values[1]

    def tolerances(self) -> tuple[float, float]:
        """``(rtol, atol)`` with float32's default (1e-4) for an empty field (debugging requests need numbers)."""
        rtol, atol = self.check_tolerances()
        return (1e-4 if rtol is None else rtol), (1e-4 if atol is None else atol)

    def set_tolerances(self, rtol: float, atol: float) -> None:
        """Set the check tolerances."""
        self.rtol_spin.setText(f"{rtol:g}")
        self.atol_spin.setText(f"{atol:g}")

    def bench(self) -> dict[str, int]:
        """Timing settings for ``time_evaluator``."""
        return {"warmup": 1, "number": int(self.number_spin.value()), "repeat": int(self.repeat_spin.value())}

    def profile_wanted(self) -> bool:
        """True when Build & Run should also profile the module (the Profile check box)."""
        return self.profile_check.isChecked()

    def _browse_inputs(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Inputs"), self.input_path.text(),
                                              self.tr("NumPy arrays (*.npy *.npz);;All files (*)"))
        if path:
            self.input_path.setText(path)
            self.file_radio.setChecked(True)

    def _choose_export_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Export the built library into"))
        if folder:
            self.export_requested.emit(folder)

    # ---- state and results ----------------------------------------------------------------
    def set_busy(self, busy: bool, message: str = "") -> None:
        """Disable the actions while the engine builds; ``message`` goes to the status line."""
        for button in (self.build_button, self.compare_button, self.export_button):
            button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        if message:
            self.status.setText(html.escape(message, quote=False))

    def clear_results(self, message: str = "") -> None:
        """Forget the shown results (they describe another document, model or target); ``message`` says why."""
        self.last_build = self.last_compare = self.last_export = None
        self.last_error = None
        self._results_render = None
        self.set_busy(False)
        self.results.clear()
        self.chart.clear()
        self.status.setText(html.escape(message, quote=False))

    def show_progress(self, message: str) -> None:
        """A ``build_progress`` line (the engine's, read back by :data:`PROGRESS_FORMS`; the app's own as it is)."""
        self.status.setText(shown_progress(message[:300]))

    def show_build_result(self, result: dict[str, Any]) -> None:
        """Show a ``build_run`` reply."""
        self.last_build, self.last_error = result, None
        self.set_busy(False)
        check = result.get("check") or {}
        lat = result.get("latency") or {}
        parts = [self.tr("Built and ran")]
        if lat:
            parts.append(self.tr("median {time}").format(time=format_us(float(lat["median_us"]))))
        if check:
            parts.append(self.tr("check passed") if check.get("passed") else self.tr("check FAILED"))
            if check.get("warnings"):
                parts.append(self.tr("{count} check warning(s)").format(count=len(check["warnings"])))
        if result.get("profile"):
            parts.append(self.tr("profiled"))
        self.status.setText(html.escape(" · ".join(parts), quote=False))
        self._set_results(lambda: build_run_html(result))

    def show_compare_result(self, result: dict[str, Any]) -> None:
        """Show a ``compare`` reply and its chart."""
        self.last_compare, self.last_error = result, None
        self.set_busy(False)
        a, b = result.get("a") or {}, result.get("b") or {}
        cmp = compare_verdict(result)
        faster = None if cmp is None else cmp.verdict == FASTER
        slower = None if cmp is None else cmp.verdict == SLOWER
        bars = [latency_bar(self.tr("baseline"), a.get("latency") or {}, slower),
                latency_bar(self.tr("pipeline"), b.get("latency") or {}, faster)]
        headline = compare_headline(result)
        self.chart.set_bars(bars, headline)
        self.status.setText(html.escape(self.tr("Compared with the baseline: {verdict}").format(verdict=headline), quote=False))
        last_build = self.last_build

        def render() -> str:
            previous = build_run_html(last_build) if last_build else ""
            return compare_html(result) + ("<hr><p><i>" + self.tr("Last Build &amp; Run") + "</i></p>" + previous if previous else "")

        self._set_results(render)

    def _set_results(self, render: Callable[[], str]) -> None:
        """Show ``render()``'s HTML; it is rendered again when the palette changes (status colours)."""
        self._results_render = render
        self.results.setHtml(render())
        self._reveal_results()

    def _reveal_results(self) -> None:
        """With the results below the controls (:meth:`fit_width`), scroll the panel's area to them."""
        if self._layout.direction() != QBoxLayout.Direction.TopToBottom:
            return
        area = self.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        if area is not None and area.widget() is not None:  # the results' top at the top of the area
            area.verticalScrollBar().setValue(self.results.mapTo(area.widget(), QPoint(0, 0)).y())

    def changeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        """Re-render the results in the new palette's status colours."""
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            render = getattr(self, "_results_render", None)
            if render is not None:
                self.results.setHtml(render())
        super().changeEvent(event)

    def show_export_result(self, result: dict[str, Any]) -> None:
        """Say where the library and ``deploy.py`` were written."""
        self.last_export, self.last_error = result, None
        self._results_render = None
        self.set_busy(False)
        self.status.setText(html.escape(self.tr("Exported {library}; run it with: {command}")).format(
            library=code(str(result.get("library"))), command=code(f"python {result.get('deploy_script')}")))
        self.results.setHtml(
            "<p><b>" + self.tr("Exported") + "</b></p><ul>"
            + "".join(f"<li>{labelled(label, code(str(result.get(k))))}</li>" for k, label in (
                ("library", self.tr("library")), ("weights", self.tr("weights")), ("metadata", self.tr("metadata")),
                ("deploy_script", self.tr("deploy script"))))
            + "</ul><p>" + self.tr("Run it: {command}").format(
                command=f"<code>python {html.escape(str(result.get('deploy_script')))} [inputs.npz]</code>") + "</p>"
        )
        self._reveal_results()

    def show_error(self, message: str, from_engine: bool = True) -> None:
        """A failed request (e.g. the GPU refusal naming the unscheduled PrimFuncs): the engine's framing translated,
        what TVM or Python said in a code font; a message of the app's own (``from_engine`` false) as it is."""
        self.last_error = message
        self._results_render = None
        self.set_busy(False)
        if not message.strip():
            sentence, rest = html.escape(self.tr("failed")), ""
        elif from_engine:
            sentence, rest = shown_error_html(message.strip())
        else:
            sentence, rest = html.escape(message.strip(), quote=False), ""
        self.status.setText(f"✗ {sentence}")
        block = f"<pre style='white-space: pre-wrap'>{html.escape(rest)}</pre>" if rest.strip() else ""
        self.results.setHtml(f"<p>{sentence}</p>{block}")
        self._reveal_results()


def _sci_spin(parent: QWidget, value: Optional[float]) -> QLineEdit:
    edit = QLineEdit("" if value is None else f"{value:g}", parent)
    validator = QDoubleValidator(0.0, 1e6, 12, edit)
    validator.setNotation(QDoubleValidator.Notation.ScientificNotation)
    validator.setLocale(QLocale.c())
    edit.setValidator(validator)
    edit.setMinimumWidth(value_width(edit, ("0.00001", "1e-05", "0.0001")))  # never squeezed to "001"
    edit.setMaximumWidth(max(90, edit.minimumWidth()))
    return edit


def value_width(edit: QLineEdit, samples: tuple[str, ...]) -> int:
    """The width a line edit needs to show each of ``samples`` whole: text, text margins, frame and cursor."""
    fm = edit.fontMetrics()
    margins = edit.textMargins()
    return max(fm.horizontalAdvance(t) for t in samples) + margins.left() + margins.right() + 2 * 6 + 4
