"""The bisect report's words in the interface's language (issue 33).

The engine writes its verdict (``pipeline_model.engine.debugging.bisect_tvm``: ``report.message``) as fixed English
sentences around values; each is read back here as a message id (``widgets.engine_texts``): the step numbers,
pass ids and what TVM said are shown in a code font, the sentence translated."""

from __future__ import annotations

import html

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from pipeline_model.debugging.bisect import FAIL, PASS, SKIP
from widgets.engine_texts import shown_html

_STEP_ERROR = r"(?:step \d+ \([^)]*\) failed: )?"  # the engine's own framing of a step's error, left out

#: The verdicts of ``bisect_tvm`` (context ``BisectReport``).
VERDICT_FORMS = (
    (r"step (\d+) \(([^)]*)\) failed while the pipeline ran: " + _STEP_ERROR + r"(.*)",
     QT_TRANSLATE_NOOP("BisectReport", "step {0} ({1}) failed while the pipeline ran: {2}")),
    (r"culprit: step (\d+) \(([^)]*)\) produced IR that is not well-formed: (.*); step (\d+) \(([^)]*)\) failed on "
     r"it: " + _STEP_ERROR + r"(.*)",
     QT_TRANSLATE_NOOP("BisectReport", "culprit: step {0} ({1}) produced IR that is not well-formed: {2}; step {3} "
                                       "({4}) failed on it: {5}")),
    (r"no step changed the module: nothing to bisect \(the model as loaded builds and runs\)",
     QT_TRANSLATE_NOOP("BisectReport", "no step changed the module: nothing to bisect (the model as loaded builds and "
                                       "runs)")),
    (r"no step changed the module, and the model as loaded gives a wrong result even with no step \(TVM's default "
     r"pipeline: a TVM bug\): (.*)",
     QT_TRANSLATE_NOOP("BisectReport", "no step changed the module, and the model as loaded gives a wrong result even "
                                       "with no step (TVM's default pipeline: a TVM bug): {0}")),
    (r"the model does not build even with no step \(TVM's default pipeline fails on it: a TVM bug\); no step to "
     r"blame: (.*)",
     QT_TRANSLATE_NOOP("BisectReport", "the model does not build even with no step (TVM's default pipeline fails on "
                                       "it: a TVM bug); no step to blame: {0}")),
    (r"the model does not run even with no step \(TVM's default pipeline fails on it: a TVM bug\); no step to "
     r"blame: (.*)",
     QT_TRANSLATE_NOOP("BisectReport", "the model does not run even with no step (TVM's default pipeline fails on "
                                       "it: a TVM bug); no step to blame: {0}")),
    (r"the model crashes even with no step \(TVM's default pipeline fails on it: a TVM bug\); no step to blame: (.*)",
     QT_TRANSLATE_NOOP("BisectReport", "the model crashes even with no step (TVM's default pipeline fails on it: a TVM "
                                       "bug); no step to blame: {0}")),
    (r"the final module builds and runs; its numbers could not be checked \(no reference\)",
     QT_TRANSLATE_NOOP("BisectReport", "the final module builds and runs; its numbers could not be checked (no "
                                       "reference)")),
    (r"the pipeline is correct: the final module matches the reference \(max \|diff\|/max \|ref\| = (\S+)\)",
     QT_TRANSLATE_NOOP("BisectReport", "the pipeline is correct: the final module matches the reference (max "
                                       "|diff|/max |ref| = {0})")),
    (r"TVM's default pipeline fails on the model as loaded, and leaving single steps out of the pipeline does not "
     r"help: no step to blame \((.*)\)",
     QT_TRANSLATE_NOOP("BisectReport", "TVM's default pipeline fails on the model as loaded, and leaving single steps "
                                       "out of the pipeline does not help: no step to blame ({0})")),
    (r"every module fails, the model as loaded \(completed with the stock lowering\) too, and leaving single steps "
     r"out does not help: no step to blame \((.*)\)",
     QT_TRANSLATE_NOOP("BisectReport", "every module fails, the model as loaded (completed with the stock lowering) "
                                       "too, and leaving single steps out does not help: no step to blame ({0})")),
    (r"the failure starts in steps (\d+)\.\.(\d+); the modules between could not be completed \(skipped\), and "
     r"leaving single steps out did not isolate one",
     QT_TRANSLATE_NOOP("BisectReport", "the failure starts in steps {0}..{1}; the modules between could not be "
                                       "completed (skipped), and leaving single steps out did not isolate one")),
    (r"culprit: step (\d+) \(([^)]*)\): the first step after which the result is wrong or the build fails \((.*)\)",
     QT_TRANSLATE_NOOP("BisectReport", "culprit: step {0} ({1}): the first step after which the result is wrong or "
                                       "the build fails ({2})")),
    (r"culprit: step (\d+) \(([^)]*)\): leaving it out makes the pipeline pass \((.*)\)",
     QT_TRANSLATE_NOOP("BisectReport", "culprit: step {0} ({1}): leaving it out makes the pipeline pass ({2})")),
)


def verdict_html(message: str) -> str:
    """The engine's verdict as rich text in the interface's language (a stopped bisection says so first)."""
    cancelled = message.startswith("cancelled; ")
    rest = message[len("cancelled; "):] if cancelled else message
    if rest == "no verdict yet":
        shown = html.escape(QCoreApplication.translate("BisectReport", "no verdict yet"))
    else:
        shown = shown_html(rest, VERDICT_FORMS, "BisectReport")
    return (html.escape(QCoreApplication.translate("BisectReport", "cancelled;")) + " " if cancelled else "") + shown


def outcome_label(outcome: str) -> str:
    """A tested module's outcome (``pass`` / ``fail`` / ``skip``) in the interface's language."""
    labels = {PASS: QT_TRANSLATE_NOOP("BisectReport", "pass"), FAIL: QT_TRANSLATE_NOOP("BisectReport", "fail"),
              SKIP: QT_TRANSLATE_NOOP("BisectReport", "skipped")}
    return QCoreApplication.translate("BisectReport", labels[outcome]) if outcome in labels else outcome
