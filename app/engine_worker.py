"""``QtEngineWorker``: a QThread that owns the ``EngineClient`` and talks to the engine process.

The GUI thread never blocks on the engine: it queues requests here and gets Qt signals back
(delivered queued, in the GUI thread). Run requests carry the document *revision* they were made
for; results of a revision older than the current one (see :meth:`QtEngineWorker.set_revision`)
are dropped, and a newer run request cancels an older in-flight run. If the engine process dies
during a run, ``engine_crashed`` carries a message naming the step that was running; the client
restarts the engine on the next request and the document is never touched here.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from PySide6.QtCore import QThread, Signal

from pipeline_model.document import PipelineDocument
from pipeline_model.engine.results import NestedPassResult, RunResult, StepResult

_ROOT = Path(__file__).resolve().parent.parent


@dataclass
class _Job:
    kind: str  # "run", "graph", "prim_func", "snapshot", "catalogue", "ping", "call", "fn"
    args: dict[str, Any] = field(default_factory=dict)
    tag: Any = None
    revision: int = 0


def catalogue_source_hash() -> str:
    """Hash of the app-side catalogue code: part of the catalogue cache key (dev edits invalidate it)."""
    digest = hashlib.sha256()
    for name in ("catalogue.py", "catalogue_tvm.py"):
        path = _ROOT / "pipeline_model" / name
        try:
            digest.update(path.read_bytes())
        except OSError:
            pass
    return digest.hexdigest()[:16]


def load_cached_catalogue(cache_dir: str) -> tuple[Optional[str], Optional[dict]]:
    """``(key, catalogue_json)`` from the cache file in ``cache_dir``, or ``(None, None)``."""
    path = os.path.join(cache_dir, "catalogue.json")
    try:
        with open(path, "r", encoding="utf-8") as handle:
            data = json.load(handle)
        if data.get("source") != catalogue_source_hash():
            return None, None
        return str(data["key"]), dict(data["catalogue"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, None


def save_cached_catalogue(cache_dir: str, key: str, catalogue: dict) -> None:
    """Write the catalogue cache atomically."""
    os.makedirs(cache_dir, exist_ok=True)
    path = os.path.join(cache_dir, "catalogue.json")
    tmp = path + f".{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump({"key": key, "source": catalogue_source_hash(), "catalogue": catalogue}, handle)
    os.replace(tmp, path)


class QtEngineWorker(QThread):
    """Queue of engine requests served by one ``EngineClient`` in a background thread.

    Signals (all emitted from the worker thread; connect normally, Qt queues them):

    - ``state_changed(state, message)``: ``starting``, ``ready``, ``busy``, ``crashed``, ``stopped``.
    - ``ping_ready(dict)``: versions and pid of the engine.
    - ``catalogue_ready(dict, int)``: catalogue JSON; 1 when it came from the cache.
    - ``run_started(revision, until)``; ``step_started(revision, index, uid)``;
      ``nested_finished(revision, index, NestedPassResult)``; ``step_finished(revision, StepResult)``;
      ``run_event(revision, name, data)`` for handler events (``tuning_progress`` ...);
      ``run_finished(revision, RunResult)`` - only for the current revision.
    - ``reply_ready(kind, tag, value)`` for graph / prim_func / snapshot / generic calls.
    - ``call_event(kind, tag, name, data)``: events of a generic call (``build_progress``, ``tuning_progress`` ...).
    - ``request_failed(kind, tag, message)``.
    - ``engine_crashed(message)``: the engine process died; message names the step when in a run.
    """

    state_changed = Signal(str, str)
    ping_ready = Signal(dict)
    catalogue_ready = Signal(dict, int)
    run_started = Signal(int, object)
    step_started = Signal(int, int, str)
    nested_finished = Signal(int, int, object)
    step_finished = Signal(int, object)
    run_event = Signal(int, str, object)
    run_finished = Signal(int, object)
    reply_ready = Signal(str, object, object)
    call_event = Signal(str, object, str, object)
    request_failed = Signal(str, object, str)
    engine_crashed = Signal(str)

    def __init__(
        self,
        cache_dir: Optional[str] = None,
        client_factory: Optional[Callable[[], Any]] = None,
        cached_catalogue_key: Optional[str] = None,
        parent=None,
        close_client: bool = True,
    ) -> None:
        super().__init__(parent)
        self._close_client = close_client
        self._cache_dir = cache_dir
        self._client_factory = client_factory
        self._cached_key = cached_catalogue_key
        self._lock = threading.Condition()
        self._jobs: deque[_Job] = deque()
        self._pending_run: Optional[_Job] = None
        self._current: Optional[_Job] = None
        self._revision = 0
        self._stopping = False
        self._client: Any = None
        self.busy = False
        self.tvm_version: Optional[str] = None

    # ---- GUI-thread API --------------------------------------------------------------------
    @property
    def revision(self) -> int:
        """The document revision results must match to be delivered."""
        return self._revision

    def set_revision(self, revision: int) -> None:
        """The document is now at ``revision``: older results are dropped, an older run is cancelled."""
        with self._lock:
            self._revision = revision
            current = self._current
        if current is not None and current.kind == "run" and current.revision < revision:
            self._cancel_client()

    def request_run(self, doc: PipelineDocument, revision: int, until: Optional[int] = None, trust_custom_code: bool = False) -> None:
        """Run ``doc`` (a copy is taken now) up to step ``until`` (inclusive; ``None`` = all)."""
        job = _Job("run", {"doc": doc.clone(), "until": until, "trust": trust_custom_code}, revision=revision)
        with self._lock:
            self._revision = max(self._revision, revision)
            self._pending_run = job  # latest run wins
            current = self._current
            self._lock.notify_all()
        if current is not None and current.kind == "run":
            self._cancel_client()

    def request_graph(self, key: str, function: Optional[str] = None, tag: Any = None) -> None:
        """Ask for the graph JSON of cached module ``key``; answer: ``reply_ready("graph", tag, json)``."""
        self._submit(_Job("graph", {"key": key, "function": function}, tag=tag), replace_tag=True)

    def request_prim_func(self, key: str, name: str, tag: Any = None) -> None:
        """Ask for the TensorIR text of PrimFunc ``name`` in module ``key``."""
        self._submit(_Job("prim_func", {"key": key, "name": name}, tag=tag))

    def request_snapshot(self, key: str, tag: Any = None) -> None:
        """Ask for the TVMScript of cached module ``key``."""
        self._submit(_Job("snapshot", {"key": key}, tag=tag))

    def request_call(self, cmd: str, args: dict, tag: Any = None) -> None:
        """A generic engine request; answer ``reply_ready("call:<cmd>", tag, reply)``."""
        self._submit(_Job("call", {"cmd": cmd, "args": dict(args)}, tag=tag))

    def request_fn(self, name: str, fn: Callable[[Any, Callable[[str, dict], None]], Any], tag: Any = None) -> None:
        """Run ``fn(client, on_event)`` in the worker thread (typed wrappers such as ``build_api.build_run``).

        Answer: ``reply_ready("fn:<name>", tag, value)``; events: ``call_event("fn:<name>", tag, event, data)``;
        an engine error: ``request_failed("fn:<name>", tag, message)``. ``cancel()`` stops it.
        """
        self._submit(_Job("fn", {"name": name, "fn": fn}, tag=tag))

    def request_catalogue(self) -> None:
        """Fetch the catalogue from the engine again (ignores the cache)."""
        self._submit(_Job("catalogue", {"force": True}))

    def cancel(self) -> None:
        """Stop the in-flight run (between passes) and drop a queued one."""
        with self._lock:
            self._pending_run = None
        self._cancel_client()

    def stop_tuning(self) -> None:
        """End the MetaSchedule tuning in flight early; unlike :meth:`cancel` the run goes on (the
        tuning step keeps what was measured and a later apply step uses it)."""
        client = self._client
        if client is None:
            return
        stop = getattr(client, "stop_tuning", None)
        try:
            if stop is not None:
                stop()
            else:  # a client without stop_tuning: cancelling is the closest thing
                client.cancel()
        except Exception:  # noqa: BLE001
            pass

    def cancel_request(self) -> None:
        """Stop the in-flight request (a build, a tuning call ...) without dropping a queued run."""
        self._cancel_client()

    def shutdown(self, timeout_ms: int = 5000) -> None:
        """Stop the thread and close the engine process."""
        with self._lock:
            self._stopping = True
            self._pending_run = None
            self._jobs.clear()
            self._lock.notify_all()
        self._cancel_client()
        if not self.wait(timeout_ms):
            client = self._client
            if client is not None and self._close_client:
                try:
                    client.close()
                except Exception:  # noqa: BLE001 - best effort on exit
                    pass
            self.wait(2000)

    def _submit(self, job: _Job, replace_tag: bool = False) -> None:
        with self._lock:
            if replace_tag and job.tag is not None:
                self._jobs = deque(j for j in self._jobs if not (j.kind == job.kind and j.tag == job.tag))
            self._jobs.append(job)
            self._lock.notify_all()

    def _cancel_client(self) -> None:
        client = self._client
        if client is not None:
            try:
                client.cancel()
            except Exception:  # noqa: BLE001
                pass

    # ---- worker thread ---------------------------------------------------------------------
    def _make_client(self) -> Any:
        if self._client_factory is not None:
            return self._client_factory()
        from pipeline_model.engine.client import EngineClient

        return EngineClient()

    def _next_job(self) -> Optional[_Job]:
        with self._lock:
            while not self._stopping and not self._jobs and self._pending_run is None:
                self._lock.wait(0.5)
            if self._stopping:
                return None
            # Small requests first (graphs, prim funcs): they are quick and the user is looking.
            if self._jobs:
                job = self._jobs.popleft()
            else:
                job = self._pending_run
                self._pending_run = None
            self._current = job
            return job

    def run(self) -> None:  # noqa: D401 - QThread API
        """Thread body: start the engine, fetch versions and the catalogue, then serve requests."""
        self.state_changed.emit("starting", "Starting engine…")
        try:
            self._client = self._make_client()
            self._startup()
        except Exception as exc:  # noqa: BLE001 - report, keep serving (requests will retry)
            self.state_changed.emit("crashed", f"Engine failed to start: {exc}")
        while True:
            job = self._next_job()
            if job is None:
                break
            self.busy = True
            try:
                self._serve(job)
            except Exception as exc:  # noqa: BLE001 - never let the thread die
                self.request_failed.emit(_job_kind(job), job.tag, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
            finally:
                with self._lock:
                    self._current = None
                    idle = not self._jobs and self._pending_run is None
                self.busy = False
                if idle and not self._stopping:
                    self.state_changed.emit("ready", "Engine ready" + (f" (TVM {self.tvm_version})" if self.tvm_version else ""))
        client = self._client
        self._client = None
        if client is not None and self._close_client:
            try:
                client.close()
            except Exception:  # noqa: BLE001
                pass
        self.state_changed.emit("stopped", "Engine stopped")

    def _startup(self) -> None:
        info = self._client.ping()
        self.tvm_version = str(info.get("tvm", "?"))
        self.ping_ready.emit(dict(info))
        self._fetch_catalogue(force=False, info=info)
        self.state_changed.emit("ready", f"Engine ready (TVM {self.tvm_version})")

    def _fetch_catalogue(self, force: bool, info: Optional[dict] = None) -> None:
        info = info or self._client.ping()
        key = f"{info.get('tvm', '?')}|{info.get('tvm_ffi', '?')}"
        if not force and self._cached_key == key:
            return  # the GUI already shows this catalogue from the cache
        data = self._client.catalogue()
        if self._cache_dir:
            try:
                save_cached_catalogue(self._cache_dir, key, data)
            except OSError:
                pass
        self._cached_key = key
        self.catalogue_ready.emit(data, 0)

    def _event_forwarder(self, kind: str, tag: Any) -> Callable[[str, dict], None]:
        def on_event(name: str, data: dict) -> None:
            self.call_event.emit(kind, tag, str(name), data)

        return on_event

    def _is_current(self, revision: int) -> bool:
        return revision == self._revision

    def _serve(self, job: _Job) -> None:
        from pipeline_model.engine.client import EngineCrashed, EngineError  # noqa: F401 - TVM-free

        if job.kind == "run":
            self._serve_run(job)
            return
        self.state_changed.emit("busy", f"Engine: {job.kind}…")
        try:
            if job.kind == "graph":
                value = self._client.graph(job.args["key"], job.args.get("function"))
            elif job.kind == "prim_func":
                value = self._client.prim_func(job.args["key"], job.args["name"])
            elif job.kind == "snapshot":
                value = self._client.snapshot(job.args["key"])
            elif job.kind == "catalogue":
                self._fetch_catalogue(force=bool(job.args.get("force")))
                return
            elif job.kind == "call":
                kind = "call:" + job.args["cmd"]
                value = self._client.request(job.args["cmd"], job.args["args"], self._event_forwarder(kind, job.tag))
                self.reply_ready.emit(kind, job.tag, value)
                return
            elif job.kind == "fn":
                kind = "fn:" + job.args["name"]
                self.state_changed.emit("busy", f"Engine: {job.args['name']}…")
                value = job.args["fn"](self._client, self._event_forwarder(kind, job.tag))
                self.reply_ready.emit(kind, job.tag, value)
                return
            else:
                raise ValueError(f"unknown job kind {job.kind!r}")
        except EngineCrashed as exc:
            message = f"The engine crashed during a {job.kind} request: {_message(exc)}"
            self.engine_crashed.emit(message)
            self.request_failed.emit(_job_kind(job), job.tag, message)
            self._confirm_engine_up()
            return
        except EngineError as exc:
            self.request_failed.emit(_job_kind(job), job.tag, _message(exc))
            return
        self.reply_ready.emit(job.kind, job.tag, value)

    def _serve_run(self, job: _Job) -> None:
        from pipeline_model.engine.client import EngineCrashed, EngineError

        revision = job.revision
        if not self._is_current(revision):
            return  # superseded before it started
        doc: PipelineDocument = job.args["doc"]
        until = job.args.get("until")
        self.state_changed.emit("busy", "Running pipeline…")
        self.run_started.emit(revision, until)
        running: dict[str, Any] = {"index": None, "uid": None}

        def on_event(name: str, data: dict) -> None:
            if name == "step_started":
                running["index"], running["uid"] = data.get("index"), data.get("uid")
            if not self._is_current(revision):
                return
            if name == "step_started":
                self.step_started.emit(revision, int(data.get("index", -1)), str(data.get("uid", "")))
            elif name == "step_finished":
                step = data.get("step")
                result = step if isinstance(step, StepResult) else StepResult.from_json(step)
                self.step_finished.emit(revision, result)
            elif name == "nested":
                nested = data.get("nested")
                if isinstance(nested, dict):
                    nested = NestedPassResult(**nested)
                self.nested_finished.emit(revision, int(data.get("index", -1)), nested)
            else:
                self.run_event.emit(revision, name, data)

        started = time.perf_counter()
        restarts_before = int(getattr(self._client, "restarts", 0))
        try:
            result: RunResult = self._client.run(doc, until=until, trust_custom_code=bool(job.args.get("trust")), on_event=on_event)
        except EngineCrashed as exc:
            message = self._crash_message(doc, running, _message(exc))
            result = RunResult(error=message, total_ms=(time.perf_counter() - started) * 1000)
            self.engine_crashed.emit(message)
            self._confirm_engine_up()
        except EngineError as exc:
            result = RunResult(error=_message(exc), total_ms=(time.perf_counter() - started) * 1000)
        else:
            if int(getattr(self._client, "restarts", 0)) > restarts_before:
                # The client restarted the engine during this run: a step crashed or hung.
                crash = _failed_step_error(result) or result.error or "the engine process died"
                self.engine_crashed.emit(crash)
                self._confirm_engine_up()
        if self._is_current(revision):
            self.run_finished.emit(revision, result)

    @staticmethod
    def _crash_message(doc: PipelineDocument, running: dict, detail: str) -> str:
        index = running.get("index")
        if index is not None and 0 <= int(index) < len(doc.steps):
            step = doc.steps[int(index)]
            return f"The engine crashed while running step {int(index) + 1} ({step.pass_id}): {detail}"
        return f"The engine crashed: {detail}"

    def _confirm_engine_up(self) -> None:
        """After the client restarted a crashed engine: wait until the fresh one answers."""
        self.state_changed.emit("crashed", "Engine crashed; restarted…")
        try:
            info = self._client.ping()
            self.tvm_version = str(info.get("tvm", self.tvm_version))
        except Exception as exc:  # noqa: BLE001
            self.state_changed.emit("crashed", f"Engine restart failed: {exc}")


def _failed_step_error(result: RunResult) -> Optional[str]:
    """The error of the failed step of ``result`` (the client's crash message names the step)."""
    if result.failed_index is None:
        return None
    for step in result.steps:
        if step.index == result.failed_index and step.error:
            return step.error
    return None


def _job_kind(job: _Job) -> str:
    """The kind a reply/failure of ``job`` is reported under (``call:<cmd>``, ``fn:<name>``, ``graph`` ...)."""
    if job.kind == "call":
        return "call:" + str(job.args.get("cmd"))
    if job.kind == "fn":
        return "fn:" + str(job.args.get("name"))
    return job.kind


def _message(exc: BaseException) -> str:
    return str(getattr(exc, "message", None) or exc)
