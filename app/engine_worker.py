"""``QtEngineWorker``: a QThread that owns the ``EngineClient`` and talks to the engine process.

The GUI thread never blocks on the engine: each ``submit_*`` call queues a request here and returns
its handle (:class:`EngineRequest`, :class:`RunRequest`), whose own signals deliver its events and its
answer queued in the GUI thread; ``request.cancel()`` stops it. Run requests carry the document *revision* they were made
for; results of a revision older than the current one (see :meth:`QtEngineWorker.set_revision`)
are dropped, and a newer run request cancels an older in-flight run. If the engine process dies
during a run, ``engine_crashed`` carries a message naming the step that was running; the client
restarts the engine on the next request and the document is never touched here. A run that Stop, an
edit (a newer revision) or Restart Engine ended is never a crash, even when the engine had to be killed
to end it; a graph or text request for a module the killed engine held waits for the queued run.

Consent: :attr:`QtEngineWorker.consent` (a :class:`pipeline_model.consent.Consent`) is the consent of the
client the worker owns; the GUI's consent service grants into it, and the client attaches it to every
request that may run code that came with a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import traceback
from collections import deque
from pathlib import Path
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, QThread, QTimer, Signal

from pipeline_model.consent import Consent
from pipeline_model.document import PipelineDocument
from pipeline_model.engine.results import NestedPassResult, RunResult, StepResult

_ROOT = Path(__file__).resolve().parent.parent


class EngineRequest(QObject):
    """The handle of one engine request (napari's workers / git-cola's tasks are the models).

    Made by :meth:`QtEngineWorker.submit_fn` and friends in the GUI thread; its signals are emitted
    from the worker thread and delivered queued in the GUI thread:

    - ``event(name, data)``: a progress event of the request (``build_progress``, ``tuning_progress`` ...);
    - ``finished(value)``: the reply;
    - ``failed(message)``: an engine error, a crash or a cancel before it started.

    The request is queued from the event loop, so slots connected right after ``submit_*`` (in the
    same GUI-thread call) never miss its answer.

    Exactly one of ``finished``/``failed`` is emitted. ``cancel()`` stops it (a queued request is
    dropped, an in-flight one is cancelled in the engine between passes).
    """

    event = Signal(str, object)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, worker: "QtEngineWorker", kind: str, name: str, args: dict[str, Any]) -> None:
        super().__init__()
        self.kind = kind
        self.name = name
        self.args = args
        self._worker = worker
        self.done = False
        self.cancelled = False
        self.finished.connect(self._release)
        self.failed.connect(self._release)

    def cancel(self) -> None:
        """Stop this request (queued: dropped and ``failed("cancelled")``; in flight: engine cancel)."""
        self._worker._cancel(self)

    def drop_if_queued(self) -> bool:
        """Drop this request if the engine has not started it (``failed("cancelled")``); one in flight
        is left to finish (an engine cancel could cost a restart). True when dropped."""
        return self._worker._drop_if_queued(self)

    def _release(self, *_args: Any) -> None:
        self.done = True
        self._worker._live.discard(self)


class RunRequest(EngineRequest):
    """A pipeline run: typed step events besides ``event`` (handler events such as
    ``model_loaded``/``tuning_progress``) and ``finished(RunResult)``.

    Events and the result are delivered only while ``revision`` is the worker's current one
    (the stale-result guard); a superseded run ends silently.
    """

    started = Signal(object)  # until
    step_started = Signal(int, str)  # index, uid
    nested_finished = Signal(int, object)  # index, NestedPassResult
    step_finished = Signal(object)  # StepResult

    def __init__(self, worker: "QtEngineWorker", args: dict[str, Any], revision: int) -> None:
        super().__init__(worker, "run", "run", args)
        self.revision = revision

    def stop_tuning(self) -> None:
        """End the MetaSchedule tuning in flight early; unlike :meth:`cancel` the run goes on (the
        tuning step keeps what was measured and a later apply step uses it)."""
        self._worker._stop_tuning()


#: How often the idle engine's process is checked (ms): the status bar never says "Engine ready" of a dead one.
ALIVE_CHECK_MS = 1000


def catalogue_source_hash() -> str:
    """Hash of the app-side catalogue code: part of the catalogue cache key (dev edits invalidate it)."""
    digest = hashlib.sha256()
    core = _ROOT / "pipeline_model"
    paths = [core / "catalogue.py", *sorted((core / "passkinds").rglob("*.py"))]
    for path in paths:
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
    """Queue of engine requests served one at a time by one ``EngineClient`` in a background thread.

    Every request is a handle (:class:`EngineRequest`, :class:`RunRequest`) with its own signals;
    the worker itself only reports the engine's life (emitted from the worker thread; Qt queues them):

    - ``state_changed(state, message)``: ``starting``, ``ready``, ``busy``, ``crashed``, ``stopped``.
    - ``ping_ready(dict)``: versions and pid of the engine.
    - ``catalogue_ready(dict, int)``: catalogue JSON; 1 when it came from the cache.
    - ``engine_crashed(message)``: the engine process died; message names the step when in a run.

    Small requests (graphs, prim funcs, calls) are served before a queued run; only the latest run
    request is kept (a newer one replaces a queued one and cancels an in-flight older one).
    """

    state_changed = Signal(str, str)
    ping_ready = Signal(dict)
    catalogue_ready = Signal(dict, int)
    engine_crashed = Signal(str)
    #: The engine process was replaced (crash, Stop of a step that did not return, Restart Engine):
    #: modules of the old one are gone.
    engine_restarted = Signal()
    #: The engine process ended while idle (killed, out of memory): a fresh one is starting and the modules of
    #: the old one are gone (the run session runs the pipeline again to make them).
    engine_lost = Signal()

    def __init__(
        self,
        cache_dir: Optional[str] = None,
        client_factory: Optional[Callable[[], Any]] = None,
        cached_catalogue_key: Optional[str] = None,
        parent=None,
        close_client: bool = True,
        client_options: Optional[Callable[[], dict]] = None,
    ) -> None:
        super().__init__(parent)
        #: ``EngineClient`` keyword arguments (watchdog, memory limit), read when the client is made
        #: and by :meth:`apply_client_options`.
        self._client_options = client_options
        self._restart_requested = False
        self._close_client = close_client
        self._cache_dir = cache_dir
        self._client_factory = client_factory
        self._cached_key = cached_catalogue_key
        self._lock = threading.Condition()
        self._jobs: deque[EngineRequest] = deque()
        self._pending_run: Optional[RunRequest] = None
        self._current: Optional[EngineRequest] = None
        #: Graph / text requests put off until the queued run has made their module (see ``_put_off``).
        self._after_run: list[EngineRequest] = []
        self._live: set[EngineRequest] = set()  # requests whose answer is not delivered yet
        self._revision = 0
        self._stopping = False
        self._client: Any = None
        #: What the user consented to: the consent of every client this worker makes (or is lent).
        self.consent = Consent()
        self._lent_consent: Any = None  # a lent client's own consent, given back when the worker stops
        self.busy = False
        self.tvm_version: Optional[str] = None
        #: The state last announced (``state_changed``), read in the GUI thread.
        self.state = "starting"
        self.state_changed.connect(self._remember_state)
        #: The engine process is watched while idle: "Engine ready" is said only of a process that runs.
        self._alive_timer = QTimer(self)
        self._alive_timer.setInterval(ALIVE_CHECK_MS)
        self._alive_timer.timeout.connect(self.check_engine_alive)
        self._alive_timer.start()

    # ---- GUI-thread API --------------------------------------------------------------------
    def _remember_state(self, state: str, _message: str) -> None:
        self.state = state

    def check_engine_alive(self) -> bool:
        """While the engine is said to be ready: is its process still running? When it ended (killed, out of
        memory) the status says so, a fresh engine starts and ``engine_lost`` is emitted; False then."""
        client = self._client
        if self.state != "ready" or self.busy or self._stopping or client is None or not hasattr(client, "pid"):
            return True
        try:
            if client.pid is not None:
                return True
        except Exception:  # noqa: BLE001 - a client that cannot say is taken as alive
            return True
        self.state_changed.emit("crashed", self.tr("The engine process ended; starting a new one…"))
        self.state = "crashed"
        self._submit(EngineRequest(self, "restart", "restart", {}))
        self.engine_lost.emit()
        return False

    @property
    def revision(self) -> int:
        """The document revision run results must match to be delivered."""
        return self._revision

    def set_revision(self, revision: int) -> None:
        """The document is now at ``revision``: older results are dropped, an older run is cancelled."""
        with self._lock:
            self._revision = revision
            current = self._current
        if isinstance(current, RunRequest) and current.revision < revision:
            self._cancel_client()

    def submit_run(self, doc: PipelineDocument, revision: int, until: Optional[int] = None) -> RunRequest:
        """Run ``doc`` (a copy is taken now) up to step ``until`` (inclusive; ``None`` = all); code that
        came with a file runs only with :attr:`consent` (see :mod:`pipeline_model.consent`)."""
        request = RunRequest(self, {"doc": doc.clone(), "until": until}, revision)
        with self._lock:
            self._live.add(request)
            self._revision = max(self._revision, revision)
        # Queued from the event loop, so that the caller connects its slots first (as with QNetworkReply).
        QTimer.singleShot(0, lambda: self._enqueue_run(request))
        return request

    def _enqueue_run(self, request: RunRequest) -> None:
        with self._lock:
            if request.cancelled or self._stopping:
                self._live.discard(request)
                return
            if self._pending_run is not None:
                self._live.discard(self._pending_run)
            self._pending_run = request  # latest run wins; a replaced one ends silently
            current = self._current
            self._lock.notify_all()
        if isinstance(current, RunRequest):
            self._cancel_client()

    def submit_graph(self, key: str, function: Optional[str] = None, collapsed: bool = False,
                     before: Optional[str] = None, have: Optional[list[str]] = None) -> EngineRequest:
        """The graph JSON of cached module ``key`` (``finished(dict)``). ``collapsed``: a large function
        comes as its collapsed view (changes against module ``before``; see ``EngineClient.graph``), served
        before the requests already queued (it is what the user is waiting to see). ``have``: tokens of
        graphs held here (one of them comes back as its token only)."""
        args: dict[str, Any] = {"key": key, "function": function}
        if collapsed:
            args.update(collapsed=True, before=before)
        if have:
            args["have"] = list(have)
        return self._submit(EngineRequest(self, "graph", "graph", args))

    def submit_prim_func(self, key: str, name: str) -> EngineRequest:
        """The TensorIR text of PrimFunc ``name`` in module ``key`` (``finished(str)``)."""
        return self._submit(EngineRequest(self, "prim_func", "prim_func", {"key": key, "name": name}))

    def submit_snapshot(self, key: str) -> EngineRequest:
        """The TVMScript of cached module ``key`` (``finished(str)``)."""
        return self._submit(EngineRequest(self, "snapshot", "snapshot", {"key": key}))

    def submit_call(self, cmd: str, args: dict) -> EngineRequest:
        """A generic engine command (``finished(reply dict)``, its events on ``event``)."""
        return self._submit(EngineRequest(self, "call", cmd, {"cmd": cmd, "args": dict(args)}))

    def submit_fn(self, name: str, fn: Callable[[Any, Callable[[str, dict], None]], Any]) -> EngineRequest:
        """Run ``fn(client, on_event)`` in the worker thread (typed wrappers such as
        ``build_api.build_run``); its value arrives on ``finished``, ``on_event`` calls on ``event``."""
        return self._submit(EngineRequest(self, "fn", name, {"fn": fn}))

    def request_catalogue(self) -> EngineRequest:
        """Fetch the catalogue from the engine again (ignores the cache); also ``catalogue_ready``."""
        return self._submit(EngineRequest(self, "catalogue", "catalogue", {"force": True}))

    def shutdown(self, timeout_ms: int = 300) -> bool:
        """Stop the thread and close the engine process; bounded (about 3 s at most) also while a
        request is stuck in the engine: the thread is not waited for longer than ``timeout_ms`` before
        the client is closed (the engine killed), which ends the stuck request. True when the thread ended."""
        self._alive_timer.stop()
        with self._lock:
            self._stopping = True
            self._pending_run = None
            self._jobs.clear()
            self._after_run.clear()
            self._lock.notify_all()
        if self._current is None and self.wait(2700):
            return True  # idle: the thread closed the client itself (bounded)
        self._cancel_client()
        if self.wait(timeout_ms):
            return True
        client = self._client
        if client is not None and self._close_client:
            try:
                client.close()  # bounded (~2.5 s); a request waiting in the engine then fails at once
            except Exception:  # noqa: BLE001 - best effort on exit
                pass
        return self.wait(300)

    def restart_engine(self) -> None:
        """Run ▸ Restart Engine: kill the engine process (a request in flight ends; a run keeps the
        steps that finished) and start a fresh one."""
        client = self._client
        if client is None:
            return
        self._restart_requested = True
        if self._current is not None:
            try:
                client.restart()  # the waiting request sees the process end; the client starts a new one
            except Exception:  # noqa: BLE001
                pass
        else:
            self._submit(EngineRequest(self, "restart", "restart", {}))

    def apply_client_options(self) -> None:
        """The watchdog / memory settings changed: set them on the client (the watchdog applies to the
        next request, the memory limit from the next engine start)."""
        client = self._client
        options = self._client_options() if self._client_options is not None else {}
        for name in ("step_timeout_s", "memory_limit"):
            if client is not None and name in options and hasattr(client, name):
                value = options[name]
                setattr(client, name, (int(value) or None) if name == "memory_limit" else float(value))

    def _submit(self, request: EngineRequest) -> EngineRequest:
        self._live.add(request)
        QTimer.singleShot(0, lambda: self._enqueue(request))  # after the caller connected its slots
        return request

    def _enqueue(self, request: EngineRequest) -> None:
        with self._lock:
            if request.cancelled or self._stopping:
                self._live.discard(request)
                return
            if request.kind == "graph" and request.args.get("collapsed"):
                self._jobs.appendleft(request)  # the graph the user waits for, before whole graphs
            else:
                self._jobs.append(request)
            self._lock.notify_all()

    def _cancel(self, request: EngineRequest) -> None:
        """``request.cancel()``: drop it when queued, cancel the engine when it is in flight."""
        with self._lock:
            waiting = not request.cancelled and not request.done and request not in self._jobs \
                and self._pending_run is not request and self._current is not request
            request.cancelled = True
            queued = waiting or request in self._jobs or self._pending_run is request
            if request in self._jobs:
                self._jobs.remove(request)
            if self._pending_run is request:
                self._pending_run = None
            current = self._current is request
        if queued and not isinstance(request, RunRequest):
            request.failed.emit("cancelled")
        elif queued:
            self._live.discard(request)
        if current:
            self._cancel_client()

    def _drop_if_queued(self, request: EngineRequest) -> bool:
        with self._lock:
            if request.cancelled or request.done or self._current is request or isinstance(request, RunRequest):
                return False
            request.cancelled = True
            if request in self._jobs:
                self._jobs.remove(request)
        request.failed.emit("cancelled")
        return True

    def _stop_tuning(self) -> None:
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
            client = self._client_factory()
            if not self._close_client:  # a lent client gets its own consent back when the worker stops
                self._lent_consent = getattr(client, "consent", None)
            client.consent = self.consent
            return client
        from pipeline_model.engine.client import EngineClient

        options = self._client_options() if self._client_options is not None else {}
        return EngineClient(**options, consent=self.consent)

    def _next_job(self) -> Optional[EngineRequest]:
        with self._lock:
            while not self._stopping and not self._jobs and self._pending_run is None:
                self._lock.wait(0.5)
            if self._stopping:
                return None
            # Small requests first (graphs, prim funcs): they are quick and the user is looking.
            job: Optional[EngineRequest]
            if self._jobs:
                job = self._jobs.popleft()
            else:
                job = self._pending_run
                self._pending_run = None
            self._current = job
            return job

    def run(self) -> None:  # noqa: D401 - QThread API
        """Thread body: start the engine, fetch versions and the catalogue, then serve requests."""
        self.state_changed.emit("starting", self.tr("Starting engine…"))
        try:
            self._client = self._make_client()
            self._startup()
        except Exception as exc:  # noqa: BLE001 - report, keep serving (requests will retry)
            self.state_changed.emit("crashed", self.tr("Engine failed to start: {error}").format(error=exc))
        while True:
            job = self._next_job()
            if job is None:
                break
            self.busy = True
            try:
                if isinstance(job, RunRequest):
                    try:
                        self._serve_run(job)
                    finally:
                        self._after_run_retry()
                else:
                    self._serve(job)
            except Exception as exc:  # noqa: BLE001 - never let the thread die
                job.failed.emit(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
            finally:
                with self._lock:
                    self._current = None
                    idle = not self._jobs and self._pending_run is None
                self.busy = False
                if idle and not self._stopping:
                    self.state_changed.emit("ready", self.tr("Engine ready (TVM {version})").format(version=self.tvm_version)
                                            if self.tvm_version else self.tr("Engine ready"))
        client = self._client
        self._client = None
        if client is not None and self._close_client:
            try:
                client.close()
            except Exception:  # noqa: BLE001
                pass
        elif client is not None and self._lent_consent is not None:
            client.consent = self._lent_consent
        self.state_changed.emit("stopped", self.tr("Engine stopped"))

    def _startup(self) -> None:
        info = self._client.ping()
        self.tvm_version = str(info.get("tvm", "?"))
        self.ping_ready.emit(dict(info))
        self._fetch_catalogue(force=False, info=info)
        self.state_changed.emit("ready", self.tr("Engine ready (TVM {version})").format(version=self.tvm_version))

    def _fetch_catalogue(self, force: bool, info: Optional[dict] = None) -> Optional[dict]:
        info = info or self._client.ping()
        key = f"{info.get('tvm', '?')}|{info.get('tvm_ffi', '?')}"
        if not force and self._cached_key == key:
            return None  # the GUI already shows this catalogue from the cache
        data = self._client.catalogue()
        if self._cache_dir:
            try:
                save_cached_catalogue(self._cache_dir, key, data)
            except OSError:
                pass
        self._cached_key = key
        self.catalogue_ready.emit(data, 0)
        return data

    def _is_current(self, revision: int) -> bool:
        return revision == self._revision

    def _serve(self, job: EngineRequest) -> None:
        from pipeline_model.engine.client import EngineCrashed, EngineError  # TVM-free

        def on_event(name: str, data: Any) -> None:
            job.event.emit(str(name), data)

        self.state_changed.emit("busy", self.tr("Engine: {job}…").format(job=job.name))
        client = self._client
        try:
            if job.kind == "graph":
                options: dict[str, Any] = {"collapsed": True, "before": job.args.get("before")} \
                    if job.args.get("collapsed") else {}
                if job.args.get("have"):
                    options["have"] = job.args["have"]
                value = client.graph(job.args["key"], job.args.get("function"), **options)
            elif job.kind == "prim_func":
                value = client.prim_func(job.args["key"], job.args["name"])
            elif job.kind == "snapshot":
                value = client.snapshot(job.args["key"])
            elif job.kind == "catalogue":
                value = self._fetch_catalogue(force=bool(job.args.get("force")))
            elif job.kind == "call":
                value = client.request(job.args["cmd"], job.args["args"], on_event)
            elif job.kind == "fn":
                value = job.args["fn"](client, on_event)
            elif job.kind == "restart":
                client.restart()
                self._restart_requested = False
                self.engine_restarted.emit()
                value = client.ping()
                self.ping_ready.emit(dict(value))
            else:
                raise ValueError(f"unknown request kind {job.kind!r}")
        except EngineCrashed as exc:
            message = self.tr("The engine crashed during a {0} request.").format(job.name) + "\n" + _message(exc)
            self.engine_crashed.emit(message)
            job.failed.emit(message)
            self._confirm_engine_up()
            return
        except EngineError as exc:
            if self._put_off(job, _message(exc)):
                return
            job.failed.emit(_message(exc))
            return
        job.finished.emit(value)

    def _put_off(self, job: EngineRequest, message: str) -> bool:
        """A graph / text request for a module the engine does not hold (it was restarted: an edit or
        Stop killed a step) while a run is queued: that run makes the module again, so the request is
        served once more after it instead of failing now. True when put off (once per request)."""
        if job.kind not in ("graph", "prim_func", "snapshot") or job.args.get("put_off"):
            return False
        if "not in the engine's cache" not in message:
            return False
        with self._lock:
            if self._pending_run is None or self._stopping:
                return False
            job.args["put_off"] = True
            self._after_run.append(job)
        return True

    def _serve_run(self, job: RunRequest) -> None:
        from pipeline_model.engine.client import EngineCrashed, EngineError

        revision = job.revision
        if not self._is_current(revision):
            self._live.discard(job)
            return  # superseded before it started
        doc: PipelineDocument = job.args["doc"]
        until = job.args.get("until")
        self.state_changed.emit("busy", self.tr("Running pipeline…"))
        job.started.emit(until)
        running: dict[str, Any] = {"index": None, "uid": None}

        def on_event(name: str, data: dict) -> None:
            if name == "step_started":
                running["index"], running["uid"] = data.get("index"), data.get("uid")
            if not self._is_current(revision):
                return
            if name == "step_started":
                job.step_started.emit(int(data.get("index", -1)), str(data.get("uid", "")))
            elif name == "step_finished":
                step = data.get("step")
                job.step_finished.emit(step if isinstance(step, StepResult) else StepResult.from_json(step))
            elif name == "nested":
                nested = data.get("nested")
                if isinstance(nested, dict):
                    nested = NestedPassResult(**nested)
                job.nested_finished.emit(int(data.get("index", -1)), nested)
            else:
                job.event.emit(name, data)

        started = time.perf_counter()
        restarts_before = int(getattr(self._client, "restarts", 0))
        try:
            # Texts on demand: the step inspector asks ``submit_snapshot(key)`` for what it shows.
            result: RunResult = self._client.run(doc, until=until, on_event=on_event, scripts=False)
        except EngineCrashed as exc:
            message = self._crash_message(doc, running, _message(exc))
            result = RunResult(error=message, total_ms=(time.perf_counter() - started) * 1000,
                               cancelled=bool(getattr(exc, "cancelled", False)))
            if self._ended_on_purpose(job, result):
                self._quiet_restart(job)
            else:
                self.engine_crashed.emit(message)
                self._confirm_engine_up()
        except EngineError as exc:
            result = RunResult(error=_message(exc), total_ms=(time.perf_counter() - started) * 1000)
        else:
            if int(getattr(self._client, "restarts", 0)) > restarts_before:
                if self._ended_on_purpose(job, result):
                    self._quiet_restart(job)
                else:
                    # The client restarted the engine during this run: a step crashed or hung.
                    where = {"index": result.failed_index} if result.failed_index is not None else running
                    crash = self._crash_message(doc, where, _failed_step_error(result) or result.error
                                                or "the engine process died")
                    self.engine_crashed.emit(crash)
                    self._confirm_engine_up()
        if self._is_current(revision):
            job.finished.emit(result)
        else:
            self._live.discard(job)

    def _ended_on_purpose(self, job: RunRequest, result: RunResult) -> bool:
        """Whether the engine was killed because the run was meant to end: Stop (``job.cancelled``), an
        edit that superseded it (its revision is no longer the current one) or Restart Engine. Such a
        run is never reported as a crash."""
        superseded = not self._is_current(job.revision)
        return bool(result.cancelled and (job.cancelled or superseded)) or self._restart_requested

    def _quiet_restart(self, job: RunRequest) -> None:
        """Stop, an edit or Restart Engine had to kill a step that did not return: no crash, a fresh engine."""
        self._restart_requested = False
        self.engine_restarted.emit()
        if not self._is_current(job.revision) and not job.cancelled:
            self.state_changed.emit("starting", self.tr("Run superseded by an edit; engine restarted…"))
        self._confirm_engine_up(crashed=False)

    def _after_run_retry(self) -> None:
        """Queue again the requests put off until the run that was pending when they failed."""
        with self._lock:
            if self._after_run:
                self._jobs.extendleft(reversed(self._after_run))
                self._after_run.clear()
                self._lock.notify_all()

    def _crash_message(self, doc: PipelineDocument, running: dict, detail: str) -> str:
        """A crash report: its first line (translated) names the step that was running, the next lines
        hold the engine's own detail (English, technical)."""
        index = running.get("index")
        if index is not None and 0 <= int(index) < len(doc.steps):
            step = doc.steps[int(index)]
            head = self.tr("The engine crashed while running step {0} ({1}).").format(int(index) + 1, step.pass_id)
        else:
            head = self.tr("The engine crashed.")
        return f"{head}\n{detail}" if detail else head

    def _confirm_engine_up(self, crashed: bool = True) -> None:
        """After the client restarted a crashed engine: wait until the fresh one answers."""
        if crashed:
            self.engine_restarted.emit()
            self.state_changed.emit("crashed", self.tr("Engine crashed; restarted…"))
        else:
            self.state_changed.emit("starting", self.tr("Engine restarted…"))
        try:
            info = self._client.ping()
            self.tvm_version = str(info.get("tvm", self.tvm_version))
        except Exception as exc:  # noqa: BLE001
            self.state_changed.emit("crashed", self.tr("Engine restart failed: {error}").format(error=exc))


def _failed_step_error(result: RunResult) -> Optional[str]:
    """The error of the failed step of ``result`` (the client's crash message names the step)."""
    if result.failed_index is None:
        return None
    for step in result.steps:
        if step.index == result.failed_index and step.error:
            return step.error
    return None


def _message(exc: BaseException) -> str:
    return str(getattr(exc, "message", None) or exc)
