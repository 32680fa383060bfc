"""Client of the engine process (TVM-free): start, talk to, watch over and restart the engine.

:class:`EngineClient` starts ``python -m pipeline_model.engine.worker`` with the same interpreter and
exchanges JSON lines with it (see :mod:`pipeline_model.engine.protocol`). One request runs at a time
(``request`` may be called from any thread; calls are serialised); :meth:`EngineClient.cancel` is
thread-safe and stops the request in flight between passes; :meth:`EngineClient.stop_tuning` (also
thread-safe) ends the tuning in flight early and lets the run go on with what was measured.

A watchdog guards each step of a run: a step that runs longer than ``step_timeout_s`` gets the engine
killed, and the run comes back with that step FAILED ("step N (pass) did not finish within X s; the engine
was restarted"). A process that dies during a step (segfault) gives that step FAILED ("the engine crashed
(signal SIGSEGV) while running step N (pass)"). Either way a fresh engine is started at once, and the
next request uses it. A crash outside a run raises :class:`EngineCrashed`. The engine's stderr is kept
in a bounded ring buffer whose tail goes into crash messages.

Every request is bounded (issue 9): loading a run's model is watched (``model_timeout_s``), other
requests may not stay silent longer than ``request_timeout_s``; :meth:`EngineClient.cancel` kills and
restarts an engine that has not stopped ``cancel_grace_s`` after the cancel (the run keeps its finished
steps; the running one is cancelled); a memory monitor kills an engine whose process tree passes
``memory_limit``; :meth:`EngineClient.close` never waits for a request in flight. The engine leads its own
process group and is killed as a group; its guardian process (see :func:`pipeline_model.engine.worker.
start_guardian`) ends the group when this process goes away, however it ends. Messages are the typed
dataclasses of :mod:`pipeline_model.engine.messages`.
"""

from __future__ import annotations

import atexit
import collections
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Optional

from pipeline_model.document import PipelineDocument
from pipeline_model.engine import messages, protocol
from pipeline_model.engine.results import CANCELLED, FAILED, NOT_RUN, RunResult, StepResult

EventCallback = Callable[[str, dict], None]

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_EOF = object()
_LIVE: "set[subprocess.Popen]" = set()


def _kill_all_at_exit() -> None:
    for proc in list(_LIVE):
        try:
            proc.kill()
        except OSError:
            pass


atexit.register(_kill_all_at_exit)


class EngineError(Exception):
    """A request failed inside the engine (a handler raised); ``traceback`` is the engine's."""

    def __init__(self, message: str, traceback: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.traceback = traceback


class EngineCrashed(EngineError):
    """The engine process died (e.g. a segfault) or the watchdog killed it.

    ``exit_code`` is the process's exit status (negative: killed by that signal), ``last_step`` the
    ``step_started`` data of the step that was running (``None`` outside a step), ``timed_out`` true
    when the watchdog killed it.
    """

    def __init__(self, message: str, exit_code: Optional[int] = None, last_step: Optional[dict] = None,
                 stderr_tail: str = "", timed_out: bool = False, cancelled: bool = False,
                 out_of_memory: bool = False) -> None:
        super().__init__(message, stderr_tail)
        self.exit_code = exit_code
        self.last_step = last_step
        self.stderr_tail = stderr_tail
        self.timed_out = timed_out
        self.cancelled = cancelled
        self.out_of_memory = out_of_memory


class EngineUnavailable(EngineError):
    """The engine refused to start (e.g. a tvm_ffi version known to crash), could not be started, or
    the client was closed while a request was waiting."""


class ConsentRequired(EngineError):
    """The request would execute code the user has not consented to (nothing ran); ``files`` lists
    ``{"path", "sha256", "kind", "reason"}`` of each such file (see :mod:`pipeline_model.consent`)."""

    def __init__(self, message: str, files: Optional[list] = None) -> None:
        super().__init__(message)
        self.files = list(files or [])


def signal_name(exit_code: Optional[int]) -> str:
    """``SIGSEGV`` for exit code -11, ``exit code 3`` for 3, ``unknown`` for None."""
    if exit_code is None:
        return "unknown"
    if exit_code < 0:
        try:
            return signal.Signals(-exit_code).name
        except ValueError:
            return f"signal {-exit_code}"
    return f"exit code {exit_code}"


class _Engine:
    """One engine process (leader of its own process group) with its reader and monitor threads."""

    def __init__(self, cmd: list[str], env: dict[str, str], stderr_lines: int, echo_stderr: bool,
                 memory_limit: Optional[int] = None) -> None:
        self.inbox: "queue.Queue[Any]" = queue.Queue()
        self.stderr: "collections.deque[str]" = collections.deque(maxlen=stderr_lines)
        self.ready: Optional[dict] = None
        #: Why the client killed this engine: "timeout", "cancel", "memory", "close", "restart" or None.
        self.kill_reason: Optional[str] = None
        self.memory_limit = memory_limit
        self.peak_rss = 0
        own_group = os.name == "posix"
        if own_group:
            env = dict(env, RPS_ENGINE_OWN_GROUP="1")
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, bufsize=-1,
            start_new_session=own_group,
        )
        self.own_group = own_group
        _LIVE.add(self.proc)
        self._echo = echo_stderr
        self._out_thread = threading.Thread(target=self._read_stdout, name="engine-stdout", daemon=True)
        self._err_thread = threading.Thread(target=self._read_stderr, name="engine-stderr", daemon=True)
        self._out_thread.start()
        self._err_thread.start()
        if memory_limit:
            threading.Thread(target=self._watch_memory, name="engine-memory", daemon=True).start()

    def _read_stdout(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        try:
            for raw in iter(stream.readline, b""):
                try:
                    self.inbox.put(protocol.decode_engine(raw))
                except protocol.ProtocolError as exc:
                    self.stderr.append(f"[client] {exc}")
        except (OSError, ValueError):
            pass
        self.inbox.put(_EOF)

    def _read_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        try:
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.stderr.append(line)
                if self._echo:
                    print(line, file=sys.stderr)
        except (OSError, ValueError):
            pass

    def tree_rss(self) -> int:
        """Resident memory of the engine and all its descendants, in bytes (0 when unknown)."""
        try:
            import psutil
        except ImportError:
            return 0
        try:
            root = psutil.Process(self.proc.pid)
            procs = [root, *root.children(recursive=True)]
        except (psutil.Error, OSError):
            return 0
        total = 0
        for proc in procs:
            try:
                total += int(proc.memory_info().rss)
            except (psutil.Error, OSError):
                continue
        return total

    def _watch_memory(self) -> None:
        """Kill the engine's process group when its tree's RSS passes the limit."""
        try:
            import psutil  # noqa: F401
        except ImportError:
            return
        while self.alive():
            rss = self.tree_rss()
            self.peak_rss = max(self.peak_rss, rss)
            if self.memory_limit and rss > self.memory_limit:
                self.kill(reason="memory")
                return
            time.sleep(0.1)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def write(self, message: Any) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write(protocol.encode(message))
        stdin.flush()

    def stderr_tail(self, lines: int = 30) -> str:
        self._err_thread.join(timeout=1.0)
        return "\n".join(list(self.stderr)[-lines:])

    def wait(self, timeout: float = 5.0) -> Optional[int]:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self, reason: Optional[str] = None, wait_s: float = 3.0) -> Optional[int]:
        """SIGKILL the engine's whole process group (the engine and every child of user code)."""
        if reason and self.kill_reason is None:
            self.kill_reason = reason
        if self.own_group and hasattr(os, "killpg"):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            self.proc.kill()
        except OSError:
            pass
        code = self.wait(wait_s)
        self.close_pipes()
        return code

    def close_pipes(self) -> None:
        _LIVE.discard(self.proc)
        for stream in (self.proc.stdin,):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass


def default_memory_limit(share: float = 0.6) -> Optional[int]:
    """``share`` of this machine's RAM in bytes (``None`` when psutil is missing)."""
    try:
        import psutil
    except ImportError:
        return None
    return int(psutil.virtual_memory().total * share)


def _mib(value: int) -> str:
    return f"{value / (1024 * 1024):.0f} MiB"


class EngineClient:
    """Starts and talks to the engine process; see the module docstring.

    ``env`` entries are added to the engine's environment. ``step_timeout_s`` is the watchdog limit of
    one step (overridable per run); ``model_timeout_s`` the limit of loading a run's model;
    ``request_timeout_s`` (default: ``step_timeout_s``) the longest silence of any other request.
    ``memory_limit`` (bytes; default 60 % of RAM, ``0`` for none) caps the RSS of the engine's process
    tree. ``cancel_grace_s``: after :meth:`cancel`, a request still running this long later gets the
    engine killed (and restarted).
    """

    def __init__(self, step_timeout_s: float = 600.0, env: Optional[dict] = None, python: Optional[str] = None,
                 stderr_lines: int = 400, echo_stderr: bool = False, *, model_timeout_s: float = 300.0,
                 request_timeout_s: Optional[float] = None, memory_limit: Optional[int] = None,
                 cancel_grace_s: float = 1.0) -> None:
        self.step_timeout_s = float(step_timeout_s)
        self.model_timeout_s = float(model_timeout_s)
        self.request_timeout_s = float(request_timeout_s) if request_timeout_s is not None else None
        self.memory_limit = default_memory_limit() if memory_limit is None else (int(memory_limit) or None)
        self.cancel_grace_s = float(cancel_grace_s)
        self._env = dict(env or {})
        self._python = python or sys.executable
        self._stderr_lines = stderr_lines
        self._echo_stderr = echo_stderr or bool(os.environ.get("RPS_ENGINE_ECHO_STDERR"))
        self._lock = threading.RLock()  # one request at a time
        self._write_lock = threading.Lock()
        self._engine: Optional[_Engine] = None
        self._closed = False
        self._next_id = 1
        self._current_id: Optional[int] = None
        self._last_message_at = 0.0  # monotonic time of the last message of the request in flight
        self._catalogue: Optional[dict] = None
        self.restarts = 0
        # Scripts received, by snapshot key (keys are content hashes, valid across engine restarts):
        # the engine does not send them again.
        self._scripts: "collections.OrderedDict[str, str]" = collections.OrderedDict()
        self._scripts_bytes = 0
        self.script_cache_bytes = 256 * 1024 * 1024

    # ------------------------------------------------------------------ process management
    def _spawn(self) -> _Engine:
        env = dict(os.environ)
        env.update({str(k): str(v) for k, v in self._env.items()})
        env["PYTHONPATH"] = _ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("PYTHONUNBUFFERED", "1")
        cmd = [self._python, "-m", "pipeline_model.engine.worker"]
        try:
            return _Engine(cmd, env, self._stderr_lines, self._echo_stderr, self.memory_limit)
        except OSError as exc:
            raise EngineUnavailable(f"could not start the engine ({' '.join(cmd)}): {exc}") from None

    def _ensure_engine(self) -> _Engine:
        self._closed = False
        engine = self._engine
        if engine is not None and not engine.alive():
            # Died while idle (nothing was running): start a fresh one silently.
            engine.kill()
            engine = self._engine = None
            self.restarts += 1
        if engine is None:
            engine = self._engine = self._spawn()
        return engine

    def _discard_engine(self, restart: bool, engine: Optional[_Engine] = None) -> None:
        """Kill ``engine`` (default: the current one); start a fresh one unless the client was closed."""
        if engine is None or engine is self._engine:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.kill()
        if restart and not self._closed and self._engine is None:
            self.restarts += 1
            try:
                self._engine = self._spawn()  # boots while the caller reads the message
            except EngineUnavailable:
                self._engine = None

    @property
    def pid(self) -> Optional[int]:
        """Pid of the current engine process (``None`` when none is running)."""
        engine = self._engine
        return engine.proc.pid if engine is not None and engine.alive() else None

    def engine_rss(self) -> int:
        """Resident memory of the engine's process tree in bytes (0 when none or unknown)."""
        engine = self._engine
        return engine.tree_rss() if engine is not None and engine.alive() else 0

    def stderr_tail(self, lines: int = 30) -> str:
        """Last lines the engine wrote to stderr."""
        engine = self._engine
        return engine.stderr_tail(lines) if engine is not None else ""

    # ------------------------------------------------------------------ requests
    def request(self, cmd: str, args: Optional[dict] = None, on_event: Optional[EventCallback] = None) -> dict:
        """Send one request and wait for its reply; events go to ``on_event(name, data)``.

        Raises :class:`EngineError` when the handler failed, :class:`EngineCrashed` when the engine died,
        the watchdog or the memory monitor killed it or a cancel had to kill it (a fresh engine is then
        started), :class:`EngineUnavailable` when the engine refuses to start or the client was closed.
        """
        return self._request(cmd, args or {}, on_event, self.step_timeout_s)

    def _request(self, cmd: str, args: dict, on_event: Optional[EventCallback], step_timeout_s: float) -> dict:
        with self._lock:
            engine = self._ensure_engine()
            req_id = self._next_id
            self._next_id += 1
            message = messages.Request(req_id, cmd, dict(args))
            try:
                with self._write_lock:
                    engine.write(message)
                    self._current_id = req_id
            except (BrokenPipeError, OSError, ValueError):
                # The process died before we could talk to it; one fresh try.
                self._discard_engine(restart=False, engine=engine)
                engine = self._ensure_engine()
                with self._write_lock:
                    engine.write(message)
                    self._current_id = req_id
            try:
                return self._wait_reply(engine, req_id, cmd, args, on_event, step_timeout_s)
            finally:
                with self._write_lock:
                    self._current_id = None

    def _wait_reply(self, engine: _Engine, req_id: int, cmd: str, args: dict, on_event: Optional[EventCallback],
                    step_timeout_s: float) -> dict:
        step: Optional[dict] = None
        idle_limit = self.request_timeout_s if self.request_timeout_s is not None else step_timeout_s
        loading = cmd == messages.CMD_RUN
        limit = self.model_timeout_s if loading else idle_limit
        deadline: float = time.monotonic() + limit
        while True:
            wait = max(0.0, min(0.25, deadline - time.monotonic()))
            try:
                message = engine.inbox.get(timeout=wait)
            except queue.Empty:
                if self._closed and self._engine is not engine:
                    raise EngineUnavailable("the engine was closed while the request was running") from None
                if time.monotonic() >= deadline:
                    tail = engine.stderr_tail()
                    code = engine.kill(reason="timeout")
                    self._discard_engine(restart=True, engine=engine)
                    if step is not None:
                        what = (f"step {int(step.get('index', 0)) + 1} ({step.get('pass_id')}) did not finish "
                                f"within {limit:g} s")
                    elif loading:
                        what = f"model {args.get('model')!r} did not finish loading within {limit:g} s"
                    else:
                        what = f"the {cmd!r} request did not answer within {limit:g} s"
                    raise EngineCrashed(f"{what}; the engine was restarted", exit_code=code, last_step=step,
                                        stderr_tail=tail, timed_out=True) from None
                continue
            if message is _EOF:
                raise self._engine_ended(engine, cmd, args, step, loading)
            if isinstance(message, messages.Notification) and message.id is None:
                event = message.event
                if isinstance(event, messages.Ready):
                    engine.ready = event.to_data()
                elif isinstance(event, messages.Fatal):
                    engine.wait(5.0)
                    self._discard_engine(restart=False, engine=engine)
                    raise EngineUnavailable(event.message or "the engine refused to start")
                continue
            if message.id != req_id:
                continue  # a late message of an earlier, abandoned request
            self._last_message_at = time.monotonic()
            if isinstance(message, messages.Notification):
                event = message.event
                data = event.to_data()
                if isinstance(event, messages.StepStarted):
                    step = data
                    limit = float(event.timeout_s or step_timeout_s)
                    deadline = time.monotonic() + limit
                    loading = False
                elif isinstance(event, messages.ModelLoaded):
                    loading = False
                    limit, deadline = idle_limit, time.monotonic() + idle_limit
                elif isinstance(event, messages.StepFinished):
                    step = None
                    limit, deadline = idle_limit, time.monotonic() + idle_limit
                elif step is not None and isinstance(event, messages.TuningProgressEvent):
                    # A tuning step that reports progress is alive: each round restarts its limit.
                    deadline = time.monotonic() + limit
                elif step is None and not loading:
                    deadline = time.monotonic() + limit  # any sign of life restarts a request's limit
                if on_event is not None:
                    try:
                        on_event(event.name, data)
                    except Exception as exc:  # noqa: BLE001 - a listener must not break the request
                        print(f"engine client: event listener failed on {event.name!r}: {exc}", file=sys.stderr)
                continue
            if isinstance(message, messages.Reply):
                return dict(message.result)
            if isinstance(message, messages.ErrorReply):
                err = message.error
                if err.code == messages.CONSENT_REQUIRED:
                    raise ConsentRequired(err.message, list(err.data.get("files") or []))
                raise EngineError(err.message or "engine error", err.traceback)

    def _engine_ended(self, engine: _Engine, cmd: str, args: dict, step: Optional[dict], loading: bool) -> EngineError:
        """The error for an engine that ended during a request (and a fresh engine unless closed)."""
        code = engine.wait(5.0)
        tail = engine.stderr_tail()
        reason = engine.kill_reason
        if reason == "close" or (self._closed and self._engine is not engine):
            return EngineUnavailable("the engine was closed while the request was running")
        self._discard_engine(restart=True, engine=engine)
        if step is not None:
            what = f"step {int(step.get('index', 0)) + 1} ({step.get('pass_id')})"
        elif loading:
            what = f"loading model {args.get('model')!r} in the {cmd!r} request"
        else:
            what = f"the {cmd!r} request"
        if reason == "cancel":
            return EngineCrashed(f"{what} was stopped (the engine did not stop in time and was restarted)",
                                 exit_code=code, last_step=step, stderr_tail=tail, cancelled=True)
        if reason == "memory":
            return EngineCrashed(
                f"{what} used more memory than the engine's limit of {_mib(engine.memory_limit or 0)}; "
                f"the engine was stopped and restarted", exit_code=code, last_step=step, stderr_tail=tail,
                out_of_memory=True)
        if reason == "restart":
            return EngineCrashed(f"the engine was restarted during {what}", exit_code=code, last_step=step,
                                 stderr_tail=tail)
        how = f"signal {signal_name(code)}" if code is not None and code < 0 else signal_name(code)
        where = f"while running {what}" if step is not None else f"during {what}"
        msg = f"the engine crashed ({how}) {where}; it was restarted"
        return EngineCrashed(msg + (f"\nengine stderr (last lines):\n{tail}" if tail else ""),
                             exit_code=code, last_step=step, stderr_tail=tail)

    def cancel(self) -> None:
        """Stop the request in flight (thread-safe; no-op when idle): the engine stops between passes;
        a request still running ``cancel_grace_s`` later gets the engine killed and restarted (the run
        keeps every step that finished; the step that was running becomes cancelled)."""
        req_id = self._send_control(messages.CMD_CANCEL)
        if req_id is None:
            return
        engine = self._engine
        sent = time.monotonic()

        def enforce(since: float, tries: int) -> None:
            if not (self._current_id == req_id and self._engine is engine and engine is not None and engine.alive()):
                return
            if self._last_message_at > since and tries < 20:
                # The engine is still talking (a step finished on its way to the next pass boundary):
                # give it another grace period before killing it.
                arm(time.monotonic(), tries + 1)
                return
            engine.kill(reason="cancel", wait_s=1.0)

        def arm(since: float, tries: int) -> None:
            timer = threading.Timer(self.cancel_grace_s, enforce, (since, tries))
            timer.daemon = True
            timer.start()

        arm(sent, 0)

    def stop_tuning(self) -> None:
        """End the MetaSchedule tuning in flight early (thread-safe; no-op when idle).

        Unlike :meth:`cancel` the request goes on: the tuning step ends within a few seconds as a
        successful step with what was measured (its report says it stopped early), and later steps
        (``MetaScheduleApplyDatabase``) run and use those records.
        """
        self._send_control(messages.CMD_STOP_TUNING)

    def _send_control(self, method: str) -> Optional[int]:
        if not self._write_lock.acquire(timeout=1.0):
            return None
        try:
            engine, req_id = self._engine, self._current_id
            if engine is None or req_id is None:
                return None
            try:
                engine.write(messages.Control(req_id, method))
            except (BrokenPipeError, OSError, ValueError):
                pass
            return req_id
        finally:
            self._write_lock.release()

    # ------------------------------------------------------------------ typed wrappers
    def ping(self) -> dict:
        """``{"tvm": version, "tvm_ffi": version, "pid": int, ...}``."""
        return self.request(protocol.CMD_PING, {})

    def catalogue(self) -> dict:
        """The pass catalogue JSON (``Catalogue.to_json()``); fetched once per client."""
        if self._catalogue is None:
            self._catalogue = self.request(protocol.CMD_CATALOGUE, {})
        return self._catalogue

    def snapshot(self, key: str) -> str:
        """TVMScript of a cached module (a ``snapshot_key``/``input_key`` from a run); the engine prints
        it on demand. Texts already received (by key: keys are content hashes) come back without a
        request, and a fetched text is remembered the same way."""
        known = self._fill(key, None)
        if known is not None:
            return known
        text = str(self.request(protocol.CMD_SNAPSHOT, {"key": key})["script"])
        self._fill(key, text)
        return text

    def graph(self, key: str, function: Optional[str] = None) -> dict:
        """Graph JSON of a Relax function of a cached module (handler in ``handlers_graph``)."""
        from pipeline_model import gc_pause
        from pipeline_model.engine import graph_parts

        parts, on_event = graph_parts.collector()  # bounded lines: no long GIL hold in the reader thread
        # The reader thread decodes the parts meanwhile: ~10^6 objects for a 50k-node graph, decoded in
        # 0.19 s with the collector paused and 1.3 s (GUI stalls included) with it running; the graph is
        # kept (caches), so it is frozen out of later collections.
        with gc_pause.paused(freeze=True):
            reply = self.request("graph", {"key": key, "function": function, "parts": True}, on_event=on_event)
            reply["graph"] = graph_parts.assemble(reply.get("graph"), parts)
        return reply

    def prim_func(self, key: str, name: str) -> str:
        """TensorIR text of PrimFunc ``name`` of a cached module (handler in ``handlers_graph``)."""
        reply = self.request("prim_func", {"key": key, "name": name})
        for field_name in ("text", "script", "value"):
            if field_name in reply:
                return str(reply[field_name])
        raise EngineError(f"prim_func reply without text: {sorted(reply)}")

    def run(self, doc: PipelineDocument, until: Optional[int] = None, trust_custom_code: bool = False,
            on_event: Optional[EventCallback] = None, step_timeout_s: Optional[float] = None,
            trusted_hashes: Optional[list[str]] = None, scripts: bool = True) -> RunResult:
        """Run ``doc`` (steps up to index ``until`` inclusive); a crash or hang in a step fails that step.

        ``scripts``: the engine prints and sends every step's TVMScript (``StepResult.script``,
        ``RunResult.input_script``). With ``False`` it prints nothing for successful steps (change
        detection is structural); the texts are ``None`` unless already received, and
        :meth:`snapshot` fetches one by its key when it is needed (a failed run's
        ``last_good_script`` is always sent).

        Consent (:mod:`pipeline_model.consent`): ``trust_custom_code`` consents to all code the run
        executes; ``trusted_hashes`` to the code with those content hashes only."""
        args = self.run_args(doc, until=until, trust_custom_code=trust_custom_code, scripts=scripts)
        if trusted_hashes:
            args["trusted_hashes"] = list(trusted_hashes)
        args["known_keys"] = list(self._scripts)[-4000:]
        seen: dict[str, Any] = {"finished": {}, "input_script": None, "input_key": None}

        def listen(name: str, data: dict) -> None:
            if name == protocol.EV_MODEL_LOADED:
                data["input_script"] = self._fill(data.get("input_key"), data.get("input_script"))
                seen["input_script"], seen["input_key"] = data.get("input_script"), data.get("input_key")
            elif name == protocol.EV_STEP_FINISHED:
                step = data.get("step") or {}
                self._fill_step(step)
                seen["finished"][int(step.get("index", -1))] = step
            if on_event is not None:
                on_event(name, data)

        timeout = self.step_timeout_s if step_timeout_s is None else float(step_timeout_s)
        started = time.perf_counter()
        try:
            reply = self._request(protocol.CMD_RUN, args, listen, timeout)
        except EngineCrashed as exc:
            result = self._crashed_run(doc, exc, seen)
            if (not scripts and result.failed_index is not None and result.last_good_script is None
                    and not getattr(self, "_recovering", False)):
                result.last_good_script = self._recover_last_good(doc, result.failed_index, trust_custom_code,
                                                                  trusted_hashes, timeout)
            result.total_ms = (time.perf_counter() - started) * 1000.0
            if on_event is not None and exc.last_step is not None:
                index = result.failed_index
                if index is None and exc.cancelled and exc.last_step is not None:
                    index = int(exc.last_step.get("index", -1))
                failed = result.steps[index] if index is not None and 0 <= index < len(result.steps) else None
                if failed is not None:
                    try:
                        on_event(protocol.EV_STEP_FINISHED, {"step": failed.to_json()})
                    except Exception:  # noqa: BLE001
                        pass
            return result
        reply["input_script"] = self._fill(reply.get("input_key"), reply.get("input_script"))
        for step in reply.get("steps") or []:
            self._fill_step(step)
        return RunResult.from_json(reply)

    def _recover_last_good(self, doc: PipelineDocument, failed_index: int, trust_custom_code: bool,
                           trusted_hashes: Optional[list[str]], timeout: float) -> Optional[str]:
        """After a step crashed the engine in a run without texts: run the steps before it again on the
        restarted engine (its cache died with the old one), so the last good module is cached there
        (graph, snapshot) and its text can be shown with the error. ``None`` when that fails too."""
        self._recovering = True
        try:
            prefix = self.run(doc, until=failed_index - 1, trust_custom_code=trust_custom_code,
                              trusted_hashes=trusted_hashes, step_timeout_s=timeout, scripts=False)
            if prefix.failed_index is not None or prefix.error or prefix.cancelled:
                return None
            key = prefix.input_key
            for step in prefix.steps[:failed_index]:
                if step.snapshot_key and step.state in ("changed", "unchanged", "skipped"):
                    key = step.snapshot_key
            return self.snapshot(key) if key else None
        except EngineError:
            return None
        finally:
            self._recovering = False

    def _fill(self, key: Optional[str], script: Optional[str]) -> Optional[str]:
        """Remember a received script, or supply the one the engine left out because we have it."""
        if not key:
            return script
        if script is not None:
            if key not in self._scripts:
                self._scripts[key] = script
                self._scripts_bytes += len(script)
                while self._scripts_bytes > self.script_cache_bytes and len(self._scripts) > 1:
                    _old, text = self._scripts.popitem(last=False)
                    self._scripts_bytes -= len(text)
            else:
                self._scripts.move_to_end(key)
            return script
        known = self._scripts.get(key)
        if known is not None:
            self._scripts.move_to_end(key)
        return known

    def forget_scripts(self, keys: Optional[list[str]] = None) -> None:
        """Forget received scripts (all, or those of ``keys``), so the engine sends them again."""
        for key in list(self._scripts) if keys is None else keys:
            text = self._scripts.pop(key, None)
            if text is not None:
                self._scripts_bytes -= len(text)

    def _fill_step(self, step: dict) -> None:
        if step.get("state") in ("changed", "unchanged", "skipped"):
            step["script"] = self._fill(step.get("snapshot_key"), step.get("script"))
        for item in step.get("nested") or []:
            if item.get("changed"):
                item["script"] = self._fill(item.get("snapshot_key"), item.get("script"))

    @staticmethod
    def run_args(doc: PipelineDocument, until: Optional[int] = None, trust_custom_code: bool = False,
                 scripts: bool = True) -> dict:
        """The ``run`` request arguments for a document (``scripts``: print and send every step's text;
        the build requests turn it off for the runs they make, which need modules, not texts)."""
        base_dir = doc.model_path_base()
        steps = []
        for step in doc.steps:
            item = step.to_dict()
            item["placeholder"] = step.placeholder
            steps.append(item)
        return {
            "model": doc.model,
            "base_dir": base_dir,
            "target": dict(doc.target),
            "steps": steps,
            "until": until,
            "trust_custom_code": bool(trust_custom_code),
            "trust_all": bool(trust_custom_code),
            "pipeline_path": os.path.abspath(doc.path) if doc.path else None,
            "work_dir": EngineClient.tuning_work_dir(doc),
            "pass_context": dict(doc.pass_context or {}),
            "scripts": bool(scripts),
        }

    @staticmethod
    def tuning_work_dir(doc: PipelineDocument) -> str:
        """The default tuning work directory of ``doc``'s MetaSchedule steps: ``build.work_dir`` (relative
        to the pipeline file's folder), else :func:`pipeline_model.passkinds.metaschedule.config.default_work_dir` —
        ``<pipeline stem>.tuning`` next to the file, so a re-run reuses its database."""
        from pipeline_model.passkinds.metaschedule.config import document_work_dir

        return document_work_dir(doc)

    def _crashed_run(self, doc: PipelineDocument, exc: EngineCrashed, seen: dict) -> RunResult:
        result = RunResult(input_script=seen["input_script"], input_key=seen["input_key"])
        titles = self._titles()
        failed_index = None
        if exc.last_step is not None:
            try:
                failed_index = int(exc.last_step.get("index"))  # type: ignore[arg-type]  # None: TypeError below
            except (TypeError, ValueError):
                failed_index = None
        last_good = seen["input_script"]
        for i, step in enumerate(doc.steps):
            data = seen["finished"].get(i)
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

    def _titles(self) -> dict[str, str]:
        if not self._catalogue:
            return {}
        titles = {}
        for item in self._catalogue.get("passes", []) if isinstance(self._catalogue.get("passes"), list) else []:
            if isinstance(item, dict) and "id" in item:
                titles[str(item["id"])] = str(item.get("title") or item["id"])
        return titles

    # ------------------------------------------------------------------ lifecycle
    def restart(self) -> None:
        """Kill the engine (if any) and start a fresh one (a request in flight ends as a crash)."""
        engine = self._engine
        if self._current_id is not None and engine is not None:
            engine.kill(reason="restart")  # the waiting request sees the process end and restarts it
            return
        with self._lock:
            self._discard_engine(restart=True)

    def close(self) -> None:
        """Stop the engine process and its process group; never blocks more than ~3 s, also while
        another thread is waiting in a request (that request then raises :class:`EngineUnavailable`)."""
        self._closed = True
        engine, self._engine = self._engine, None
        if engine is None:
            return
        if self._write_lock.acquire(timeout=0.5):
            try:
                if self._current_id is None:
                    engine.write(messages.Control(None, messages.CMD_SHUTDOWN))
                engine.proc.stdin.close()  # type: ignore[union-attr]  # EOF: the engine's guardian ends it
            except (BrokenPipeError, OSError, ValueError):
                pass
            finally:
                self._write_lock.release()
        if engine.wait(1.0) is None:  # an engine still importing TVM reads stdin only later
            engine.kill(reason="close", wait_s=1.0)
        elif engine.own_group:
            engine.kill(reason="close", wait_s=0.5)  # children of user code, if any
        engine.close_pipes()

    def __enter__(self) -> "EngineClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
