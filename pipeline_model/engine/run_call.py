"""The ``run`` call of the engine client (TVM-free): its arguments, the texts it keeps, and its result
when the engine died during it.

:func:`run_args` is the ``run`` request of a document (the build requests nest it as ``run``);
:class:`ScriptCache` remembers the TVMScript texts received by snapshot key (keys are content hashes,
valid across engine restarts) so the engine need not send them again; :class:`RunProgress` records the
events of a run in flight, and :func:`crashed_run` makes the :class:`RunResult` of a run whose engine
crashed or was killed (the step that was running FAILED or CANCELLED, the ones after it NOT_RUN).
Consent is no argument here: the client attaches its :class:`pipeline_model.consent.Consent` to the request.
"""

from __future__ import annotations

import collections
import os
from typing import Callable, Optional

from pipeline_model.document import PipelineDocument
from pipeline_model.engine import protocol
from pipeline_model.engine.errors import EngineCrashed
from pipeline_model.engine.results import CANCELLED, FAILED, NOT_RUN, RunResult, StepResult

EventCallback = Callable[[str, dict], None]
#: States of a step whose module is cached under its snapshot key.
_HAS_MODULE = ("changed", "unchanged", "skipped")


def run_args(doc: PipelineDocument, until: Optional[int] = None, trust_custom_code: bool = False,
             scripts: bool = True) -> dict:
    """The ``run`` request arguments for a document (``scripts``: print and send every step's text;
    the build requests turn it off for the runs they make, which need modules, not texts).

    They carry no consent: the client attaches its own to the request. ``trust_custom_code`` is for the
    engine side only, which re-creates run arguments from the ``document`` form of a build request whose
    consent was already checked."""
    base_dir = doc.model_path_base()
    steps = []
    for step in doc.steps:
        item = step.to_dict()
        item["placeholder"] = step.placeholder
        steps.append(item)
    args = {
        "model": doc.model,
        "base_dir": base_dir,
        "target": dict(doc.target),
        "steps": steps,
        "until": until,
        "pipeline_path": os.path.abspath(doc.path) if doc.path else None,
        "work_dir": tuning_work_dir(doc),
        "pass_context": dict(doc.pass_context or {}),
        "scripts": bool(scripts),
    }
    if trust_custom_code:
        args.update(trust_custom_code=True, trust_all=True)
    return args


def tuning_work_dir(doc: PipelineDocument) -> str:
    """The default tuning work directory of ``doc``'s MetaSchedule steps: ``build.work_dir`` (relative
    to the pipeline file's folder), else :func:`pipeline_model.work_dirs.default_work_dir` —
    ``<pipeline stem>.tuning`` next to the file, so a re-run reuses its database."""
    from pipeline_model.work_dirs import document_work_dir

    return document_work_dir(doc)


class ScriptCache:
    """TVMScript texts received, by snapshot key, up to ``max_bytes`` and ``max_entries`` (least recently used
    dropped first; a dropped text is simply sent again by the engine when asked for).

    The bounds keep the client flat in a long session (``bench/soak_workspace.py``: with only a 256 MiB byte
    bound the GUI client grew ~1.1 MiB per 100 varied runs, +27 % after warm-up over 1,000 runs)."""

    #: Default bounds: texts (characters) and entries.
    MAX_BYTES = 64 * 1024 * 1024
    MAX_ENTRIES = 256

    def __init__(self, max_bytes: int = MAX_BYTES, max_entries: int = MAX_ENTRIES) -> None:
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self._texts: "collections.OrderedDict[str, str]" = collections.OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._texts)

    def known_keys(self, limit: int = 4000) -> list[str]:
        """The newest ``limit`` keys (a run's ``known_keys``: the engine leaves those texts out)."""
        return list(self._texts)[-limit:]

    def fill(self, key: Optional[str], script: Optional[str]) -> Optional[str]:
        """Remember a received script, or supply the one the engine left out because we have it."""
        if not key:
            return script
        if script is not None:
            if key not in self._texts:
                self._texts[key] = script
                self._bytes += len(script)
                while (self._bytes > self.max_bytes or len(self._texts) > self.max_entries) and len(self._texts) > 1:
                    _old, text = self._texts.popitem(last=False)
                    self._bytes -= len(text)
            else:
                self._texts.move_to_end(key)
            return script
        known = self._texts.get(key)
        if known is not None:
            self._texts.move_to_end(key)
        return known

    def fill_step(self, step: dict) -> None:
        """Fill (or remember) the texts of a ``StepResult`` JSON and its nested passes."""
        if step.get("state") in _HAS_MODULE:
            step["script"] = self.fill(step.get("snapshot_key"), step.get("script"))
        for item in step.get("nested") or []:
            if item.get("changed"):
                item["script"] = self.fill(item.get("snapshot_key"), item.get("script"))

    def fill_reply(self, reply: dict) -> RunResult:
        """The :class:`RunResult` of a ``run`` reply, texts filled in."""
        reply["input_script"] = self.fill(reply.get("input_key"), reply.get("input_script"))
        for step in reply.get("steps") or []:
            self.fill_step(step)
        return RunResult.from_json(reply)

    def forget(self, keys: Optional[list[str]] = None) -> None:
        """Forget texts (all, or those of ``keys``)."""
        for key in list(self._texts) if keys is None else keys:
            text = self._texts.pop(key, None)
            if text is not None:
                self._bytes -= len(text)


class RunProgress:
    """The events of a run in flight (its input and finished steps, texts filled from ``scripts``),
    passed on to ``on_event``."""

    def __init__(self, scripts: ScriptCache, on_event: Optional[EventCallback]) -> None:
        self.scripts = scripts
        self.on_event = on_event
        self.finished: dict[int, dict] = {}
        self.input_script: Optional[str] = None
        self.input_key: Optional[str] = None

    def listen(self, name: str, data: dict) -> None:
        """The request's event listener."""
        if name == protocol.EV_MODEL_LOADED:
            data["input_script"] = self.scripts.fill(data.get("input_key"), data.get("input_script"))
            self.input_script, self.input_key = data.get("input_script"), data.get("input_key")
        elif name == protocol.EV_STEP_FINISHED:
            step = data.get("step") or {}
            self.scripts.fill_step(step)
            self.finished[int(step.get("index", -1))] = step
        if self.on_event is not None:
            self.on_event(name, data)

    def report_failed_step(self, result: RunResult, exc: EngineCrashed) -> None:
        """Send ``step_finished`` for the step the crash (or forced cancel) ended, as the engine would have."""
        if self.on_event is None or exc.last_step is None:
            return
        index = result.failed_index
        if index is None and exc.cancelled:
            index = int(exc.last_step.get("index", -1))
        failed = result.steps[index] if index is not None and 0 <= index < len(result.steps) else None
        if failed is not None:
            try:
                self.on_event(protocol.EV_STEP_FINISHED, {"step": failed.to_json()})
            except Exception:  # noqa: BLE001
                pass


def crashed_run(doc: PipelineDocument, exc: EngineCrashed, seen: RunProgress, titles: dict[str, str]) -> RunResult:
    """The result of a run of ``doc`` that ended with ``exc``: finished steps as reported, the running
    one FAILED (or CANCELLED), the rest NOT_RUN; a crash outside a step is the run's error."""
    result = RunResult(input_script=seen.input_script, input_key=seen.input_key)
    failed_index = None
    if exc.last_step is not None:
        try:
            failed_index = int(exc.last_step.get("index"))  # type: ignore[arg-type]  # None: TypeError below
        except (TypeError, ValueError):
            failed_index = None
    last_good = seen.input_script
    for i, step in enumerate(doc.steps):
        data = seen.finished.get(i)
        if data is not None:
            res = StepResult.from_json(data)
            if res.script is not None and res.state != FAILED:
                last_good = res.script
        else:
            res = StepResult(index=i, uid=step.uid, pass_id=step.pass_id,
                             title=titles.get(step.pass_id, step.pass_id), state=NOT_RUN)
        if i == failed_index and exc.cancelled:
            res.state = CANCELLED
            result.cancelled = True
        elif i == failed_index:
            res.state = FAILED
            res.error = str(exc.message).split("\nengine stderr", 1)[0]
            res.traceback = f"engine stderr (last lines):\n{exc.stderr_tail}" if exc.stderr_tail else None
            result.failed_index = i
            result.last_good_script = last_good
        result.steps.append(res)
    if failed_index is None:
        if exc.cancelled:
            result.cancelled = True
        else:
            result.error = exc.message
    return result


def catalogue_titles(catalogue: Optional[dict]) -> dict[str, str]:
    """Pass id -> title of a catalogue JSON (empty when there is none)."""
    if not catalogue:
        return {}
    titles = {}
    passes = catalogue.get("passes")
    for item in passes if isinstance(passes, list) else []:
        if isinstance(item, dict) and "id" in item:
            titles[str(item["id"])] = str(item.get("title") or item["id"])
    return titles


def last_good_key(prefix: RunResult, failed_index: int) -> Optional[str]:
    """The snapshot key of the module before step ``failed_index`` in a re-run of the steps before it."""
    key = prefix.input_key
    for step in prefix.steps[:failed_index]:
        if step.snapshot_key and step.state in _HAS_MODULE:
            key = step.snapshot_key
    return key
