"""The texts the engine sends with a build, as the user reads them (issue 33): the labels of built modules, the
fixed words of a ``build_run`` reply (where weights and inputs came from, what the check compared with), and the
engine's build errors, progress lines and check warnings read back as message ids (``widgets.engine_texts``). TVM's
and Python's words are never translated: they are shown in a code font. Context ``RunPanel`` (the Build & Run
panel shows them)."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QCoreApplication

from pipeline_model.i18n import QT_TRANSLATE_NOOP
from widgets.engine_texts import code, match_form, shown_html, shown_plain
from widgets.path_texts import shown_path_error


def shown_label(label: Any) -> str:
    """An engine build label as the user reads it: the engine's fixed labels ("baseline (model as loaded)",
    "pipeline 'name'") translated, anything else as it is."""
    import re

    text = str(label or "")
    if text == "baseline (model as loaded)":
        return QCoreApplication.translate("RunPanel", "baseline (model as loaded)")
    if text == "pipeline":
        return QCoreApplication.translate("RunPanel", "pipeline")
    if text == "the reference (model as loaded, default pipeline, CPU)":  # engine.build.reference.REFERENCE_LABEL
        return QCoreApplication.translate("RunPanel", "the reference (TVM's default pipeline on the model as loaded, CPU)")
    match = re.fullmatch(r"pipeline (['\"])(.*)\1", text, re.S)
    if match:
        name = match.group(2)
        if name == "Untitled pipeline":  # the document's default name (pipeline_model.document)
            name = QCoreApplication.translate("", "Untitled pipeline")
        return QCoreApplication.translate("RunPanel", "pipeline '{0}'").format(name)
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
        # scriptlib.quant_reference.QUANT_REFERENCE: a quantized model's reference
        "model as loaded, each op in float64 rounded to float32, tvm.compile default pipeline, llvm":
            QCoreApplication.translate("RunPanel", "model as loaded, each op in float64 rounded to float32, "
                                                   "tvm.compile default pipeline, llvm"),
    }
    if text in fixed:
        return fixed[text]
    match = re.fullmatch(r"model as loaded, tvm\.compile default pipeline, (.+)", text)
    if match:  # engine.build.reference.TVM_REFERENCE on another target
        return QCoreApplication.translate("RunPanel", "model as loaded, tvm.compile default pipeline, {0}").format(
            match.group(1))
    match = re.fullmatch(r"random\(seed=(-?\d+)\)", text)
    if match:
        return QCoreApplication.translate("RunPanel", "random (seed {0})").format(match.group(1))
    return text


#: The fixed framing of the engine's build errors (a pattern of the first line, its text for people); what the groups
#: hold (TVM's words, a file, a step) is shown as it is.
ERROR_FORMS = (
    (r"tvm\.compile for (\S+) failed: (.*)", QT_TRANSLATE_NOOP("RunPanel", "tvm.compile for {0} failed: {1}")),
    (r"running (\S+) failed: (.*)", QT_TRANSLATE_NOOP("RunPanel", "running {0} failed: {1}")),
    (r"the pipeline failed at step (\d+) \(([^)]*)\): (?:step \d+ \([^)]*\) failed: )?(.*)",
     QT_TRANSLATE_NOOP("RunPanel", "the pipeline failed at step {0} ({1}): {2}")),
    (r"the pipeline run failed: (.*)", QT_TRANSLATE_NOOP("RunPanel", "the pipeline run failed: {0}")),
    (r"invalid target (.*?): (.*)", QT_TRANSLATE_NOOP("RunPanel", "invalid target {0}: {1}")),
    (r"inputs file (.*): no such file", QT_TRANSLATE_NOOP("RunPanel", "inputs file {0}: no such file")),
    (r"export_library to (.*) failed: (.*)", QT_TRANSLATE_NOOP("RunPanel", "export_library to {0} failed: {1}")),
    (r"(?:module|snapshot) '[^']*' is not in the engine's cache.*",
     QT_TRANSLATE_NOOP("RunPanel", "The engine was restarted and no longer holds this module; Run (F5) makes it "
                                   "again.")),
    (r"cancelled", QT_TRANSLATE_NOOP("RunPanel", "cancelled")),
    (r"refusing to build for (\S+): (\d+) PrimFunc\(s\) have no GPU thread binding and would run unscheduled: (.*)\. "
     r"Fix: add a DLight step \(dlight\.ApplyDefaultSchedule with gpu rules such as gpu\.Matmul, gpu\.GEMV, "
     r"gpu\.Reduction, gpu\.GeneralReduction, gpu\.Fallback\) or a MetaSchedule tuning step after legalization",
     QT_TRANSLATE_NOOP("RunPanel", "refusing to build for {0}: {1} PrimFunc(s) have no GPU thread binding and would "
                                   "run unscheduled: {2}. Fix: add a DLight step (dlight.ApplyDefaultSchedule with gpu "
                                   "rules such as gpu.Matmul, gpu.GEMV, gpu.Reduction, gpu.GeneralReduction, "
                                   "gpu.Fallback) or a MetaSchedule tuning step after legalization")),
)


#: The engine's progress lines of a build (``pipeline_model.engine.build``): the module a line names is shown as
#: :func:`shown_label` reads it.
PROGRESS_FORMS = (
    (r"building and running the reference \(model as loaded, default pipeline, CPU\)",
     QT_TRANSLATE_NOOP("RunPanel", "building and running the reference (TVM's default pipeline on the model as "
                                   "loaded, CPU)")),
    (r"building the reference \(model as loaded, default pipeline, CPU\)",
     QT_TRANSLATE_NOOP("RunPanel", "building the reference (TVM's default pipeline on the model as loaded, CPU)")),
    (r"the reference failed", QT_TRANSLATE_NOOP("RunPanel", "the reference failed")),
    (r"reference ready", QT_TRANSLATE_NOOP("RunPanel", "reference ready")),
    (r"building (.+) for (.+)", QT_TRANSLATE_NOOP("RunPanel", "building {0} for {1}")),
    (r"testing the model as loaded", QT_TRANSLATE_NOOP("RunPanel", "testing the model as loaded")),  # bisect
    (r"testing the module after step (\d+) \(([^)]*)\)",
     QT_TRANSLATE_NOOP("RunPanel", "testing the module after step {0} ({1})")),
    (r"testing the pipeline without step (\d+) \(([^)]*)\)",
     QT_TRANSLATE_NOOP("RunPanel", "testing the pipeline without step {0} ({1})")),
    (r"running the pipeline \((\d+) steps\)", QT_TRANSLATE_NOOP("RunPanel", "running the pipeline ({0} steps)")),
    (r"running the pipeline", QT_TRANSLATE_NOOP("RunPanel", "running the pipeline")),
    (r"running the original model in its framework",
     QT_TRANSLATE_NOOP("RunPanel", "running the original model in its framework")),
    (r"running (.+)", QT_TRANSLATE_NOOP("RunPanel", "running {0}")),
    (r"timing (\d+) modules in turn \(warmed up\)", QT_TRANSLATE_NOOP("RunPanel", "timing {0} modules in turn (warmed up)")),
    (r"warming up (\d+) modules", QT_TRANSLATE_NOOP("RunPanel", "warming up {0} modules")),
    (r"timing (.+)", QT_TRANSLATE_NOOP("RunPanel", "timing {0}")),
    (r"profiling (.+) \(time of every call\)", QT_TRANSLATE_NOOP("RunPanel", "profiling {0} (time of every call)")),
    (r"comparing outputs", QT_TRANSLATE_NOOP("RunPanel", "comparing outputs")),
    (r"loading model (.+)", QT_TRANSLATE_NOOP("RunPanel", "loading model {0}")),
    (r"writing (.+)", QT_TRANSLATE_NOOP("RunPanel", "writing {0}")),
)

#: The check's warnings (``pipeline_model.scriptlib.outputs.compare_outputs``).
WARNING_FORMS = (
    (r"output (\d+): the reference is all zeros: the check cannot tell a right result from a wrong one \(use real "
     r"inputs/weights\)",
     QT_TRANSLATE_NOOP("RunPanel", "output {0}: the reference is all zeros: the check cannot tell a right result from "
                                   "a wrong one (use real inputs/weights)")),
    (r"output (\d+): the reference is tiny \(max \|ref\| = (\S+) < (\S+)\): the check compares rounding noise "
     r"\(use real inputs/weights\)",
     QT_TRANSLATE_NOOP("RunPanel", "output {0}: the reference is tiny (max |ref| = {1} < {2}): the check compares "
                                   "rounding noise (use real inputs/weights)")),
)


def shown_progress(message: str) -> str:
    """A progress line as rich text: the engine's (:data:`PROGRESS_FORMS`) translated, the module it names as
    :func:`shown_label` reads it, other values as code; a line of the app's own (already translated) as it is."""
    if match_form(message, PROGRESS_FORMS) is None:
        return html.escape(message, quote=False)

    def arg(value: str) -> str:
        label = shown_label(value)
        return html.escape(label) if label != value else code(value)

    return shown_html(message, PROGRESS_FORMS, "RunPanel", arg)


def shown_error(message: str) -> str:
    """A build error the engine sent (its own sentence around TVM's words) as the user reads it: the app's fixed
    framing (:data:`ERROR_FORMS`) translated, what TVM or the file said kept as it is (never translated)."""
    text = str(message or "")
    head, sep, rest = text.partition("\n")
    return shown_plain(head, ERROR_FORMS, "RunPanel") + sep + rest


def shown_error_html(message: str) -> tuple[str, str]:
    """A build error as rich text: its first line (the app's framing translated, the step, target, file and what
    TVM said in a code font; a line no form knows as code under a translated "The engine reported an error") and
    the lines after it (a traceback, TVM's further words) for a code block."""
    text = str(message or "")
    head, _sep, rest = text.partition("\n")
    if match_form(head, ERROR_FORMS) is None:
        refused = shown_path_error(head)  # an export folder the engine may not write
        if refused is not None:
            return refused, rest
        return html.escape(QCoreApplication.translate("RunPanel", "The engine reported an error:")) + " " + code(head), rest
    return shown_html(head, ERROR_FORMS, "RunPanel"), rest
