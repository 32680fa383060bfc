"""Client of the engine process (TVM-free): the public face of the engine for the GUI, the CLI and tests.

:class:`EngineClient` starts ``python -m pipeline_model.engine.worker`` with the same interpreter and
exchanges JSON lines with it (see :mod:`pipeline_model.engine.protocol`). One request runs at a time
(``request`` may be called from any thread; calls are serialised); :meth:`EngineClient.cancel` is
thread-safe and stops the request in flight between passes; :meth:`EngineClient.stop_tuning` (also
thread-safe) ends the tuning in flight early and lets the run go on with what was measured.

The client is three concerns, each in its module:

- process supervision (:mod:`pipeline_model.engine.process`): start, kill and restart the engine
  process, its memory monitor, crash detection (a crash message names the signal and the step, with
  the tail of the engine's stderr);
- the request loop (:mod:`pipeline_model.engine.request_loop`): one :class:`~pipeline_model.engine.
  request_loop.Deadline` per request — loading a run's model (``model_timeout_s``), each step
  (``step_timeout_s``, restarted by tuning progress) and any other silence (``request_timeout_s``) — whose
  overrun kills and restarts the engine;
- the ``run`` call (:mod:`pipeline_model.engine.run_call`): its arguments, the texts kept by snapshot key,
  the result of a run whose engine crashed (that step FAILED, "the engine crashed (signal SIGSEGV) while
  running step N (pass)"; the next request uses a fresh engine).

A crash outside a run raises :class:`EngineCrashed`. :meth:`EngineClient.cancel` kills and restarts an
engine that has not stopped ``cancel_grace_s`` after the cancel (the run keeps its finished steps; the
running one is cancelled); :meth:`EngineClient.close` never waits for a request in flight.

**Consent** travels with the client: :attr:`EngineClient.consent` (a :class:`pipeline_model.consent.Consent`:
everything, or content hashes) is attached as ``trust_all``/``trusted_hashes`` to every request that may
execute code that came with a file (all but :data:`pipeline_model.engine.messages.CODE_FREE_METHODS`);
:meth:`EngineClient.consented` swaps it for a block (one CLI command on a shared client).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import Any, Iterator, Optional

from pipeline_model.consent import Consent
from pipeline_model.document import PipelineDocument
from pipeline_model.engine import messages, protocol, run_call
from pipeline_model.engine.errors import (ConsentRequired, EngineCrashed, EngineError, EngineUnavailable,
                                          signal_name)
from pipeline_model.engine.process import EngineProcess, EngineSupervisor, default_memory_limit
from pipeline_model.engine.request_loop import Deadline, EventCallback, Limits, wait_reply
from pipeline_model.engine.results import RunResult

__all__ = ["ConsentRequired", "EngineClient", "EngineCrashed", "EngineError", "EngineUnavailable", "EventCallback",
           "default_memory_limit", "signal_name"]


class EngineClient:
    """Starts and talks to the engine process; see the module docstring.

    ``env`` entries are added to the engine's environment. ``step_timeout_s`` is the watchdog limit of
    one step (overridable per run); ``model_timeout_s`` the limit of loading a run's model;
    ``request_timeout_s`` (default: ``step_timeout_s``) the longest silence of any other request.
    ``memory_limit`` (bytes; default 60 % of RAM, ``0`` for none) caps the RSS of the engine's process
    tree. ``cancel_grace_s``: after :meth:`cancel`, a request still running this long later gets the
    engine killed (and restarted). ``consent``: what the user consented to (default: nothing).
    """

    def __init__(self, step_timeout_s: float = 600.0, env: Optional[dict] = None, python: Optional[str] = None,
                 stderr_lines: int = 400, echo_stderr: bool = False, *, model_timeout_s: float = 300.0,
                 request_timeout_s: Optional[float] = None, memory_limit: Optional[int] = None,
                 cancel_grace_s: float = 1.0, consent: Optional[Consent] = None) -> None:
        self.step_timeout_s = float(step_timeout_s)
        self.model_timeout_s = float(model_timeout_s)
        self.request_timeout_s = float(request_timeout_s) if request_timeout_s is not None else None
        self.cancel_grace_s = float(cancel_grace_s)
        #: What the user consented to; attached to every request that may execute code.
        self.consent = consent if consent is not None else Consent()
        self._supervisor = EngineSupervisor(
            python or sys.executable, dict(env or {}), stderr_lines,
            echo_stderr or bool(os.environ.get("RPS_ENGINE_ECHO_STDERR")),
            default_memory_limit() if memory_limit is None else (int(memory_limit) or None))
        self._lock = threading.RLock()  # one request at a time
        self._write_lock = threading.Lock()
        self._next_id = 1
        self._current_id: Optional[int] = None
        self._last_message_at = 0.0  # monotonic time of the last message of the request in flight
        self._catalogue: Optional[dict] = None
        self._recovering = False
        self._scripts = run_call.ScriptCache()

    # ------------------------------------------------------------------ process
    @property
    def memory_limit(self) -> Optional[int]:
        """Cap of the engine tree's RSS in bytes (``None``: none); applies from the next engine start."""
        return self._supervisor.memory_limit

    @memory_limit.setter
    def memory_limit(self, value: Optional[int]) -> None:
        self._supervisor.memory_limit = value

    @property
    def restarts(self) -> int:
        """How many times the engine was replaced (crash, kill, died while idle)."""
        return self._supervisor.restarts

    @property
    def script_cache_bytes(self) -> int:
        """Most bytes of TVMScript text kept by snapshot key."""
        return self._scripts.max_bytes

    @script_cache_bytes.setter
    def script_cache_bytes(self, value: int) -> None:
        self._scripts.max_bytes = int(value)

    @property
    def pid(self) -> Optional[int]:
        """Pid of the current engine process (``None`` when none is running)."""
        engine = self._supervisor.engine
        return engine.proc.pid if engine is not None and engine.alive() else None

    def engine_rss(self) -> int:
        """Resident memory of the engine's process tree in bytes (0 when none or unknown)."""
        engine = self._supervisor.engine
        return engine.tree_rss() if engine is not None and engine.alive() else 0

    def stderr_tail(self, lines: int = 30) -> str:
        """Last lines the engine wrote to stderr."""
        engine = self._supervisor.engine
        return engine.stderr_tail(lines) if engine is not None else ""

    # ------------------------------------------------------------------ consent
    @contextlib.contextmanager
    def consented(self, consent: Consent) -> Iterator["EngineClient"]:
        """Use ``consent`` for the requests made in the ``with`` block (then the previous one again)."""
        saved, self.consent = self.consent, consent
        try:
            yield self
        finally:
            self.consent = saved

    def _with_consent(self, cmd: str, args: dict) -> dict:
        """``args`` with the client's consent fields when ``cmd`` may execute code."""
        if cmd in messages.CODE_FREE_METHODS:
            return dict(args)
        return {**args, **self.consent.fields()}

    # ------------------------------------------------------------------ requests
    def request(self, cmd: str, args: Optional[dict] = None, on_event: Optional[EventCallback] = None) -> dict:
        """Send one request and wait for its reply; events go to ``on_event(name, data)``.

        Raises :class:`EngineError` when the handler failed, :class:`ConsentRequired` when it would run
        code without consent, :class:`EngineCrashed` when the engine died, the deadline or the memory
        monitor killed it or a cancel had to kill it (a fresh engine is then started),
        :class:`EngineUnavailable` when the engine refuses to start or the client was closed.
        """
        return self._request(cmd, args or {}, on_event, self.step_timeout_s)

    def _request(self, cmd: str, args: dict, on_event: Optional[EventCallback], step_timeout_s: float) -> dict:
        with self._lock:
            engine = self._supervisor.ensure()
            req_id = self._next_id
            self._next_id += 1
            message = messages.Request(req_id, cmd, self._with_consent(cmd, args))
            try:
                self._send(engine, message)
            except (BrokenPipeError, OSError, ValueError):
                # The process died before we could talk to it; one fresh try.
                self._supervisor.discard(restart=False, engine=engine)
                engine = self._supervisor.ensure()
                self._send(engine, message)
            silence = self.request_timeout_s if self.request_timeout_s is not None else step_timeout_s
            deadline = Deadline(cmd, args, Limits(self.model_timeout_s, step_timeout_s, silence))
            try:
                return wait_reply(self._supervisor, engine, req_id, deadline, on_event, self._heard)
            finally:
                with self._write_lock:
                    self._current_id = None

    def _send(self, engine: EngineProcess, message: messages.Request) -> None:
        with self._write_lock:
            engine.write(message)
            self._current_id = message.id

    def _heard(self) -> None:
        self._last_message_at = time.monotonic()

    def cancel(self) -> None:
        """Stop the request in flight (thread-safe; no-op when idle): the engine stops between passes;
        a request still running ``cancel_grace_s`` later gets the engine killed and restarted (the run
        keeps every step that finished; the step that was running becomes cancelled)."""
        req_id = self._send_control(messages.CMD_CANCEL)
        if req_id is None:
            return
        engine = self._supervisor.engine

        def enforce(since: float, tries: int) -> None:
            if not (self._current_id == req_id and self._supervisor.engine is engine and engine is not None
                    and engine.alive()):
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

        arm(time.monotonic(), 0)

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
            engine, req_id = self._supervisor.engine, self._current_id
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
        known = self._scripts.fill(key, None)
        if known is not None:
            return known
        text = str(self.request(protocol.CMD_SNAPSHOT, {"key": key})["script"])
        self._scripts.fill(key, text)
        return text

    def graph(self, key: str, function: Optional[str] = None, collapsed: bool = False,
              before: Optional[str] = None, have: Optional[list[str]] = None) -> dict:
        """Graph JSON of a Relax function of a cached module (handler in ``handlers_graph``). With
        ``collapsed``, a large function comes as its collapsed view (``reply["collapsed"]``, see
        :mod:`pipeline_model.graph_collapsed`; changes against module ``before``) and ``graph`` is None.
        ``have``: the ``graph_token`` of graphs the caller holds; one of those comes back as its token only
        (``graph_held``, ``graph`` None)."""
        from pipeline_model import gc_pause
        from pipeline_model.engine import graph_parts

        parts, on_event = graph_parts.collector()  # bounded lines: no long GIL hold in the reader thread
        # The reader thread decodes the parts meanwhile: ~10^6 objects for a 50k-node graph, decoded in
        # 0.19 s with the collector paused and 1.3 s (GUI stalls included) with it running; the graph is
        # kept (caches), so it is frozen out of later collections.
        with gc_pause.paused(freeze=True):
            args: dict[str, Any] = {"key": key, "function": function, "parts": True}
            if collapsed:
                args.update(collapsed=True, before=before)
            if have:
                args["have"] = list(have)
            reply = self.request("graph", args, on_event=on_event)
            reply["graph"] = graph_parts.assemble(reply.get("graph"), parts)
        return reply

    def prim_func(self, key: str, name: str) -> str:
        """TensorIR text of PrimFunc ``name`` of a cached module (handler in ``handlers_graph``)."""
        reply = self.request("prim_func", {"key": key, "name": name})
        for field_name in ("text", "script", "value"):
            if field_name in reply:
                return str(reply[field_name])
        raise EngineError(f"prim_func reply without text: {sorted(reply)}")

    def run(self, doc: PipelineDocument, until: Optional[int] = None, on_event: Optional[EventCallback] = None,
            step_timeout_s: Optional[float] = None, scripts: bool = True) -> RunResult:
        """Run ``doc`` (steps up to index ``until`` inclusive); a crash or hang in a step fails that step.

        ``scripts``: the engine prints and sends every step's TVMScript (``StepResult.script``,
        ``RunResult.input_script``). With ``False`` it prints nothing for successful steps (change
        detection is structural); the texts are ``None`` unless already received, and
        :meth:`snapshot` fetches one by its key when it is needed (a failed run's
        ``last_good_script`` is always sent). Code that came with a file runs only with the client's
        :attr:`consent` (:mod:`pipeline_model.consent`)."""
        args = run_call.run_args(doc, until=until, scripts=scripts)
        args["known_keys"] = self._scripts.known_keys()
        seen = run_call.RunProgress(self._scripts, on_event)
        timeout = self.step_timeout_s if step_timeout_s is None else float(step_timeout_s)
        started = time.perf_counter()
        try:
            reply = self._request(protocol.CMD_RUN, args, seen.listen, timeout)
        except EngineCrashed as exc:
            result = run_call.crashed_run(doc, exc, seen, run_call.catalogue_titles(self._catalogue))
            if (not scripts and result.failed_index is not None and result.last_good_script is None
                    and not self._recovering):
                result.last_good_script = self._recover_last_good(doc, result.failed_index, timeout)
            result.total_ms = (time.perf_counter() - started) * 1000.0
            seen.report_failed_step(result, exc)
            return result
        return self._scripts.fill_reply(reply)

    def _recover_last_good(self, doc: PipelineDocument, failed_index: int, timeout: float) -> Optional[str]:
        """After a step crashed the engine in a run without texts: run the steps before it again on the
        restarted engine (its cache died with the old one), so the last good module is cached there
        (graph, snapshot) and its text can be shown with the error. ``None`` when that fails too."""
        self._recovering = True
        try:
            prefix = self.run(doc, until=failed_index - 1, step_timeout_s=timeout, scripts=False)
            if prefix.failed_index is not None or prefix.error or prefix.cancelled:
                return None
            key = run_call.last_good_key(prefix, failed_index)
            return self.snapshot(key) if key else None
        except EngineError:
            return None
        finally:
            self._recovering = False

    def forget_scripts(self, keys: Optional[list[str]] = None) -> None:
        """Forget received scripts (all, or those of ``keys``), so the engine sends them again."""
        self._scripts.forget(keys)

    #: The ``run`` request arguments of a document (see :func:`pipeline_model.engine.run_call.run_args`).
    run_args = staticmethod(run_call.run_args)
    #: The default tuning work directory of a document (see :func:`pipeline_model.engine.run_call.tuning_work_dir`).
    tuning_work_dir = staticmethod(run_call.tuning_work_dir)

    # ------------------------------------------------------------------ lifecycle
    def restart(self) -> None:
        """Kill the engine (if any) and start a fresh one (a request in flight ends as a crash)."""
        engine = self._supervisor.engine
        if self._current_id is not None and engine is not None:
            engine.kill(reason="restart")  # the waiting request sees the process end and restarts it
            return
        with self._lock:
            self._supervisor.discard(restart=True)

    def close(self) -> None:
        """Stop the engine process and its process group; never blocks more than ~3 s, also while
        another thread is waiting in a request (that request then raises :class:`EngineUnavailable`)."""
        engine = self._supervisor.detach()
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
        self._supervisor.reap(engine)

    def __enter__(self) -> "EngineClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
