"""``RunPanel``: build and run the pipeline's module on a local device (issue 4, GUI side).

The panel is a view: it holds the controls (target/device, which module, inputs, tolerances, timing
settings), emits requests, and shows results it is given as plain dicts (the JSON of
``pipeline_model.build_api`` results). It never talks to the engine itself (``app.run_controller``
does) and never imports ``app``.
"""

from __future__ import annotations

import html
from typing import Any, Callable, Optional

from PySide6.QtCore import QCoreApplication, QEvent, QLocale, Qt, Signal
from PySide6.QtGui import QDoubleValidator
from PySide6.QtWidgets import (
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
    QSizePolicy,
    QSpinBox,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from pipeline_model.i18n import QT_TRANSLATE_NOOP
from pipeline_model.document import target_label
from pipeline_model.latency_stats import FASTER, SAME_BUILD, SLOWER, Comparison, compare_runs
from widgets.compare_view import latency_bar, verdict_label
from widgets.latency_chart import LatencyChart, format_us
from widgets.target_picker import TargetPicker
from widgets.theme import status_css
from widgets.units import format_duration_ms

#: Module choices of the "Module" combo (data values).
MODULE_FINAL = "final"
MODULE_SELECTED = "selected"

INPUT_FILTER = "NumPy arrays (*.npy *.npz);;All files (*)"


def shown_label(label: Any) -> str:
    """An engine build label as the user reads it: the engine's fixed labels ("baseline (model as loaded)",
    "pipeline 'name'") translated, anything else as it is."""
    import re

    text = str(label or "")
    if text == "baseline (model as loaded)":
        return QCoreApplication.translate("RunPanel", "baseline (model as loaded)")
    if text == "pipeline":
        return QCoreApplication.translate("RunPanel", "pipeline")
    match = re.fullmatch(r"pipeline (['\"])(.*)\1", text, re.S)
    if match:
        return QCoreApplication.translate("RunPanel", "pipeline '{0}'").format(match.group(2))
    return text


def shown_text(value: Any) -> str:
    """A fixed text the engine sends with a build for display (where the weights and inputs came from, what the
    check compared with, the tolerance's scale) as the user reads it: translated; anything else as it is."""
    import re

    text = str(value if value is not None else "")
    fixed = {
        "model": QCoreApplication.translate("RunPanel", "the model's"),
        "random": QCoreApplication.translate("RunPanel", "random"),
        "file": QCoreApplication.translate("RunPanel", "file"),
        "output": QCoreApplication.translate("RunPanel", "output"),
        "absolute": QCoreApplication.translate("RunPanel", "absolute"),
        "model as loaded, tvm.compile default pipeline, llvm":
            QCoreApplication.translate("RunPanel", "model as loaded, tvm.compile default pipeline, llvm"),
    }
    if text in fixed:
        return fixed[text]
    match = re.fullmatch(r"random\(seed=(-?\d+)\)", text)
    if match:
        return QCoreApplication.translate("RunPanel", "random (seed {0})").format(match.group(1))
    return text


#: The fixed framing of the engine's build errors (a pattern of the first line, its text for people); what the groups
#: hold (TVM's words, a file, a step) is shown as it is.
ERROR_FORMS = (
    (r"tvm\.compile for (\S+) failed: (.*)", QT_TRANSLATE_NOOP("RunPanel", "tvm.compile for {0} failed: {1}")),
    (r"running (\S+) failed: (.*)", QT_TRANSLATE_NOOP("RunPanel", "running {0} failed: {1}")),
    (r"the pipeline failed at step (\d+) \(([^)]*)\): (.*)",
     QT_TRANSLATE_NOOP("RunPanel", "the pipeline failed at step {0} ({1}): {2}")),
    (r"the pipeline run failed: (.*)", QT_TRANSLATE_NOOP("RunPanel", "the pipeline run failed: {0}")),
    (r"invalid target (.*?): (.*)", QT_TRANSLATE_NOOP("RunPanel", "invalid target {0}: {1}")),
    (r"inputs file (.*): no such file", QT_TRANSLATE_NOOP("RunPanel", "inputs file {0}: no such file")),
    (r"export_library to (.*) failed: (.*)", QT_TRANSLATE_NOOP("RunPanel", "export_library to {0} failed: {1}")),
    (r"(?:module|snapshot) '[^']*' is not in the engine's cache.*",
     QT_TRANSLATE_NOOP("RunPanel", "The engine was restarted and no longer holds this module; Run (F5) makes it "
                                   "again.")),
    (r"cancelled", QT_TRANSLATE_NOOP("RunPanel", "cancelled")),
)


def shown_error(message: str) -> str:
    """A build error the engine sent (its own sentence around TVM's words) as the user reads it: the app's fixed
    framing (:data:`ERROR_FORMS`) translated, what TVM or the file said kept as it is (never translated)."""
    import re

    text = str(message or "")
    head, sep, rest = text.partition("\n")
    for pattern, template in ERROR_FORMS:
        match = re.fullmatch(pattern, head, re.S)
        if match:
            return QCoreApplication.translate("RunPanel", template).format(*match.groups()) + sep + rest
    return text


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
            verdict = (f"<span style='color:{status_css('error')}'><b>{esc(not_checked)}</b>: {esc(str(failure))}</span>")
        elif check.get("error"):
            verdict = (f"<span style='color:{status_css('error')}'><b>{esc(failed_text)}</b>: {esc(str(check['error']))}</span>")
        elif check.get("passed"):
            verdict = f"<span style='color:{status_css('ok')}'><b>{esc(passed_text)}</b></span>"
        else:
            verdict = f"<span style='color:{status_css('error')}'><b>{esc(fail_text)}</b></span>"
        detail = QCoreApplication.translate("RunPanel", "max abs error {abs}, max rel error {rel} (rtol {rtol}, atol {atol}) vs {reference}").format(
            abs=_fmt(check.get("max_abs")), rel=_fmt(check.get("max_rel")), rtol=_fmt(check.get("rtol")), atol=_fmt(check.get("atol")),
            reference=esc(shown_text(check.get("reference") or QCoreApplication.translate("RunPanel", "the unoptimized model"))))
        if failure and check.get("max_abs") is not None:
            detail += "; " + esc(QCoreApplication.translate(
                "RunPanel", "the default-pipeline reference failed ({failure}), so this is the fallback").format(
                    failure=failure))
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
        parts.append("".join(f"<p style='color:{colour}'><b>⚠ {word}:</b> {html.escape(w)}</p>" for w in warnings))
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
        rows.append(f"<p>{esc(same)}: max abs {_fmt(check.get('max_abs'))}, max rel {_fmt(check.get('max_rel'))}</p>")
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

    def _build_target_row(self) -> QHBoxLayout:
        """Target chooser, "Advanced…" (the target as JSON) and "detect devices again"."""
        self.target_combo = TargetPicker(self)
        self.target_combo.setObjectName("runTarget")
        self.target_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
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
                                              "instrumentation (Profile panel, heat overlay on the graph)"))
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
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.results = QTextBrowser(self)
        self.results.setObjectName("runResults")
        self.results.setOpenLinks(False)
        self.results.setPlaceholderText(self.tr("Build & Run (Ctrl+B) to see outputs, latency and the numerical check."))
        self.results.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.chart = LatencyChart(self)

    # ---- targets --------------------------------------------------------------------------
    def set_devices(self, devices: list[dict[str, Any]], current: dict[str, Any],
                    presets: Optional[list[dict[str, Any]]] = None) -> None:
        """Fill the target list from the engine's ``devices`` reply (CPU first) and, when given, the picker's
        presets with whether each compiles and runs here (:class:`widgets.target_picker.TargetPicker`), then
        select ``current``."""
        self._syncing = True
        try:
            self.target_combo.set_choices(devices, list(presets or []))
        finally:
            self._syncing = False
        self.show_target(current)

    def show_target(self, target: dict[str, Any]) -> None:
        """Select ``target`` in the list (added as a custom entry when it is not there)."""
        self._syncing = True
        try:
            self.target_combo.show_target(target)
        finally:
            self._syncing = False

    def _on_target_activated(self, index: int) -> None:
        target = self.target_combo.itemData(index)
        if not self._syncing and isinstance(target, dict):
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
            self.status.setText(message)

    def clear_results(self, message: str = "") -> None:
        """Forget the shown results (they describe another document, model or target); ``message`` says why."""
        self.last_build = self.last_compare = self.last_export = None
        self.last_error = None
        self._results_render = None
        self.set_busy(False)
        self.results.clear()
        self.chart.clear()
        self.status.setText(message)

    def show_progress(self, message: str) -> None:
        """A ``build_progress`` line."""
        self.status.setText(message[:300])

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
        self.status.setText(" · ".join(parts))
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
        self.status.setText(self.tr("Compared with the baseline: {verdict}").format(verdict=headline))
        last_build = self.last_build

        def render() -> str:
            previous = build_run_html(last_build) if last_build else ""
            return compare_html(result) + ("<hr><p><i>" + self.tr("Last Build &amp; Run") + "</i></p>" + previous if previous else "")

        self._set_results(render)

    def _set_results(self, render: Callable[[], str]) -> None:
        """Show ``render()``'s HTML; it is rendered again when the palette changes (status colours)."""
        self._results_render = render
        self.results.setHtml(render())

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
        self.status.setText(self.tr("Exported {library}; run it with: python {script}").format(
            library=result.get("library"), script=result.get("deploy_script")))
        self.results.setHtml(
            "<p><b>" + self.tr("Exported") + "</b></p><ul>"
            + "".join(f"<li>{html.escape(label)}: <code>{html.escape(str(result.get(k)))}</code></li>" for k, label in (
                ("library", self.tr("library")), ("weights", self.tr("weights")), ("metadata", self.tr("metadata")),
                ("deploy_script", self.tr("deploy script"))))
            + "</ul><p>" + self.tr("Run it: {command}").format(
                command=f"<code>python {html.escape(str(result.get('deploy_script')))} [inputs.npz]</code>") + "</p>"
        )

    def show_error(self, message: str) -> None:
        """A failed request (e.g. the GPU refusal naming the unscheduled PrimFuncs), shown plainly."""
        self.last_error = message
        self._results_render = None
        self.set_busy(False)
        message = shown_error(message)  # the app's framing translated, TVM's words as they are
        first = message.strip().splitlines()[0] if message.strip() else self.tr("failed")
        self.status.setText(f"✗ {first[:400]}")
        self.results.setPlainText(message)


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
