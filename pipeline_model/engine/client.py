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
from pipeline_model.engine import protocol
from pipeline_model.engine.results import FAILED, NOT_RUN, RunResult, StepResult

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
                 stderr_tail: str = "", timed_out: bool = False) -> None:
        super().__init__(message, stderr_tail)
        self.exit_code = exit_code
        self.last_step = last_step
        self.stderr_tail = stderr_tail
        self.timed_out = timed_out


class EngineUnavailable(EngineError):
    """The engine refused to start (e.g. a tvm_ffi version known to crash) or could not be started."""


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
    """One engine process with its reader threads."""

    def __init__(self, cmd: list[str], env: dict[str, str], stderr_lines: int, echo_stderr: bool) -> None:
        self.inbox: "queue.Queue[Any]" = queue.Queue()
        self.stderr: "collections.deque[str]" = collections.deque(maxlen=stderr_lines)
        self.ready: Optional[dict] = None
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, bufsize=-1
        )
        _LIVE.add(self.proc)
        self._echo = echo_stderr
        self._out_thread = threading.Thread(target=self._read_stdout, name="engine-stdout", daemon=True)
        self._err_thread = threading.Thread(target=self._read_stderr, name="engine-stderr", daemon=True)
        self._out_thread.start()
        self._err_thread.start()

    def _read_stdout(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        try:
            for raw in iter(stream.readline, b""):
                try:
                    self.inbox.put(protocol.decode(raw))
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

    def alive(self) -> bool:
        return self.proc.poll() is None

    def write(self, message: dict) -> None:
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

    def kill(self) -> Optional[int]:
        try:
            self.proc.kill()
        except OSError:
            pass
        code = self.wait(5.0)
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


class EngineClient:
    """Starts and talks to the engine process; see the module docstring.

    ``env`` entries are added to the engine's environment. ``step_timeout_s`` is the watchdog limit of
    one step (overridable per run).
    """

    def __init__(self, step_timeout_s: float = 600.0, env: Optional[dict] = None, python: Optional[str] = None,
                 stderr_lines: int = 400, echo_stderr: bool = False) -> None:
        self.step_timeout_s = float(step_timeout_s)
        self._env = dict(env or {})
        self._python = python or sys.executable
        self._stderr_lines = stderr_lines
        self._echo_stderr = echo_stderr or bool(os.environ.get("RPS_ENGINE_ECHO_STDERR"))
        self._lock = threading.RLock()  # one request at a time
        self._write_lock = threading.Lock()
        self._engine: Optional[_Engine] = None
        self._next_id = 1
        self._current_id: Optional[int] = None
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
            return _Engine(cmd, env, self._stderr_lines, self._echo_stderr)
        except OSError as exc:
            raise EngineUnavailable(f"could not start the engine ({' '.join(cmd)}): {exc}") from None

    def _ensure_engine(self) -> _Engine:
        engine = self._engine
        if engine is not None and not engine.alive():
            # Died while idle (nothing was running): start a fresh one silently.
            engine.kill()
            engine = self._engine = None
            self.restarts += 1
        if engine is None:
            engine = self._engine = self._spawn()
        return engine

    def _discard_engine(self, restart: bool) -> None:
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.kill()
        if restart:
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

    def stderr_tail(self, lines: int = 30) -> str:
        """Last lines the engine wrote to stderr."""
        engine = self._engine
        return engine.stderr_tail(lines) if engine is not None else ""

    # ------------------------------------------------------------------ requests
    def request(self, cmd: str, args: Optional[dict] = None, on_event: Optional[EventCallback] = None) -> dict:
        """Send one request and wait for its reply; events go to ``on_event(name, data)``.

        Raises :class:`EngineError` when the handler failed, :class:`EngineCrashed` when the engine died
        or the watchdog killed it (a fresh engine is then started), :class:`EngineUnavailable` when the
        engine refuses to start.
        """
        return self._request(cmd, args or {}, on_event, self.step_timeout_s)

    def _request(self, cmd: str, args: dict, on_event: Optional[EventCallback], step_timeout_s: float) -> dict:
        with self._lock:
            engine = self._ensure_engine()
            req_id = self._next_id
            self._next_id += 1
            try:
                with self._write_lock:
                    engine.write(protocol.request(req_id, cmd, args))
                    self._current_id = req_id
            except (BrokenPipeError, OSError):
                # The process died before we could talk to it; one fresh try.
                self._discard_engine(restart=False)
                engine = self._ensure_engine()
                with self._write_lock:
                    engine.write(protocol.request(req_id, cmd, args))
                    self._current_id = req_id
            try:
                return self._wait_reply(engine, req_id, cmd, on_event, step_timeout_s)
            finally:
                with self._write_lock:
                    self._current_id = None

    def _wait_reply(self, engine: _Engine, req_id: int, cmd: str, on_event: Optional[EventCallback],
                    step_timeout_s: float) -> dict:
        deadline: Optional[float] = None
        step: Optional[dict] = None
        while True:
            wait = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
            try:
                message = engine.inbox.get(timeout=wait)
            except queue.Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    tail = engine.stderr_tail()
                    code = engine.kill()
                    self._discard_engine(restart=True)
                    raise EngineCrashed(
                        f"step {int((step or {}).get('index', 0)) + 1} ({(step or {}).get('pass_id')}) did not finish within "
                        f"{step_timeout_s:g} s; the engine was restarted",
                        exit_code=code, last_step=step, stderr_tail=tail, timed_out=True,
                    ) from None
                continue
            if message is _EOF:
                code = engine.wait(5.0)
                tail = engine.stderr_tail()
                self._discard_engine(restart=True)
                if step is not None:
                    what = f"while running step {int(step.get('index', 0)) + 1} ({step.get('pass_id')})"
                else:
                    what = f"during the {cmd!r} request"
                how = f"signal {signal_name(code)}" if code is not None and code < 0 else signal_name(code)
                msg = f"the engine crashed ({how}) {what}; it was restarted"
                raise EngineCrashed(msg + (f"\nengine stderr (last lines):\n{tail}" if tail else ""),
                                    exit_code=code, last_step=step, stderr_tail=tail)
            mid = message.get("id")
            if mid is None:
                name = message.get(protocol.KEY_EVENT)
                data = message.get("data") or {}
                if name == protocol.EV_READY:
                    engine.ready = data
                elif name == protocol.EV_FATAL:
                    engine.wait(5.0)
                    self._discard_engine(restart=False)
                    raise EngineUnavailable(str(data.get("message") or "the engine refused to start"))
                continue
            if mid != req_id:
                continue  # a late message of an earlier, abandoned request
            if protocol.KEY_EVENT in message:
                name = str(message[protocol.KEY_EVENT])
                data = message.get("data") or {}
                if name == protocol.EV_STEP_STARTED:
                    step = data
                    limit = data.get("timeout_s") or step_timeout_s
                    deadline = time.monotonic() + float(limit)
                elif name == protocol.EV_STEP_FINISHED:
                    step, deadline = None, None
                elif name == protocol.EV_TUNING_PROGRESS and step is not None:
                    # A tuning step that reports progress is alive: each round restarts its limit.
                    limit = step.get("timeout_s") or step_timeout_s
                    deadline = time.monotonic() + float(limit)
                if on_event is not None:
                    try:
                        on_event(name, data)
                    except Exception as exc:  # noqa: BLE001 - a listener must not break the request
                        print(f"engine client: event listener failed on {name!r}: {exc}", file=sys.stderr)
                continue
            if protocol.KEY_REPLY in message:
                return dict(message[protocol.KEY_REPLY] or {})
            if protocol.KEY_ERROR in message:
                err = message[protocol.KEY_ERROR] or {}
                raise EngineError(str(err.get("message") or "engine error"), str(err.get("traceback") or ""))

    def cancel(self) -> None:
        """Ask the engine to stop the request in flight between passes (thread-safe; no-op when idle)."""
        self._send_control(protocol.cancel)

    def stop_tuning(self) -> None:
        """End the MetaSchedule tuning in flight early (thread-safe; no-op when idle).

        Unlike :meth:`cancel` the request goes on: the tuning step ends within a few seconds as a
        successful step with what was measured (its report says it stopped early), and later steps
        (``MetaScheduleApplyDatabase``) run and use those records.
        """
        self._send_control(protocol.stop_tuning)

    def _send_control(self, make: Callable[[int], dict]) -> None:
        with self._write_lock:
            engine, req_id = self._engine, self._current_id
            if engine is None or req_id is None:
                return
            try:
                engine.write(make(req_id))
            except (BrokenPipeError, OSError):
                pass

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
        """TVMScript of a cached module (a ``snapshot_key``/``input_key`` from a run)."""
        return str(self.request(protocol.CMD_SNAPSHOT, {"key": key})["script"])

    def graph(self, key: str, function: Optional[str] = None) -> dict:
        """Graph JSON of a Relax function of a cached module (handler in ``handlers_graph``)."""
        from pipeline_model.engine import graph_parts

        parts, on_event = graph_parts.collector()  # bounded lines: no long GIL hold in the reader thread
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
            on_event: Optional[EventCallback] = None, step_timeout_s: Optional[float] = None) -> RunResult:
        """Run ``doc`` (steps up to index ``until`` inclusive); a crash or hang in a step fails that step."""
        args = self.run_args(doc, until=until, trust_custom_code=trust_custom_code)
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
            result.total_ms = (time.perf_counter() - started) * 1000.0
            if on_event is not None and exc.last_step is not None:
                failed = result.steps[result.failed_index] if result.failed_index is not None else None
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
    def run_args(doc: PipelineDocument, until: Optional[int] = None, trust_custom_code: bool = False) -> dict:
        """The ``run`` request arguments for a document."""
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
            "pipeline_path": os.path.abspath(doc.path) if doc.path else None,
            "work_dir": EngineClient.tuning_work_dir(doc),
            "pass_context": dict(doc.pass_context or {}),
        }

    @staticmethod
    def tuning_work_dir(doc: PipelineDocument) -> str:
        """The default tuning work directory of ``doc``'s MetaSchedule steps: ``build.work_dir`` (relative
        to the pipeline file's folder), else :func:`pipeline_model.tuning.default_work_dir` —
        ``<pipeline stem>.tuning`` next to the file, so a re-run reuses its database."""
        from pipeline_model.tuning import document_work_dir

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
            if i == failed_index:
                res.state = FAILED
                res.error = str(exc.message).split("\nengine stderr", 1)[0]
                res.traceback = f"engine stderr (last lines):\n{exc.stderr_tail}" if exc.stderr_tail else None
                result.failed_index = i
                result.last_good_script = last_good
            result.steps.append(res)
        if failed_index is None:
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
            engine.kill()  # the waiting request sees the process end and restarts it
            return
        with self._lock:
            self._discard_engine(restart=True)

    def close(self) -> None:
        """Stop the engine process."""
        with self._lock:
            engine, self._engine = self._engine, None
            if engine is None:
                return
            try:
                with self._write_lock:
                    engine.write({"cmd": protocol.CMD_SHUTDOWN})
                    engine.proc.stdin.close()  # type: ignore[union-attr]
            except (BrokenPipeError, OSError, ValueError):
                pass
            if engine.wait(1.0) is None:  # an engine still importing TVM reads stdin only later
                engine.kill()
            engine.close_pipes()

    def __enter__(self) -> "EngineClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
