"""Supervision of the engine process (TVM-free): start it, watch it, kill it, start it again.

:class:`EngineProcess` is one ``python -m pipeline_model.engine.worker`` process, the leader of its own
process group (so a kill takes every child of user code with it; the engine's guardian, see
:func:`pipeline_model.engine.worker.start_guardian`, ends the group when this process goes away), with
a reader thread per pipe (protocol messages into :attr:`EngineProcess.inbox`, stderr into a bounded ring
buffer) and a memory monitor that kills the group when its tree's RSS passes ``memory_limit``.

:class:`EngineSupervisor` holds the current process for one :class:`~pipeline_model.engine.client.
EngineClient`: starts one on demand (again after it died while idle), replaces one that was killed, and
turns a process that ended during a request into the error that says why (crash with its signal and
stderr tail, memory limit, cancel, restart, close): crash detection.
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
from typing import Any, Optional

from pipeline_model import child_process
from pipeline_model.engine import protocol
from pipeline_model.engine.errors import EngineCrashed, EngineError, EngineUnavailable, signal_name

#: What :attr:`EngineProcess.inbox` yields once the engine's stdout ended.
EOF = object()
_LIVE: "set[subprocess.Popen]" = set()


def _kill_all_at_exit() -> None:
    for proc in list(_LIVE):
        try:
            proc.kill()
        except OSError:
            pass


atexit.register(_kill_all_at_exit)


def default_memory_limit(share: float = 0.6) -> Optional[int]:
    """``share`` of this machine's RAM in bytes (``None`` when psutil is missing)."""
    try:
        import psutil
    except ImportError:
        return None
    return int(psutil.virtual_memory().total * share)


def _mib(value: int) -> str:
    return f"{value / (1024 * 1024):.0f} MiB"


class EngineProcess:
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
        self.inbox.put(EOF)

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
        """True while the process runs."""
        return self.proc.poll() is None

    def write(self, message: Any) -> None:
        """Send one message (a :mod:`pipeline_model.engine.messages` dataclass) on the engine's stdin."""
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write(protocol.encode(message))
        stdin.flush()

    def stderr_tail(self, lines: int = 30) -> str:
        """The last ``lines`` the engine wrote to stderr."""
        self._err_thread.join(timeout=1.0)
        return "\n".join(list(self.stderr)[-lines:])

    def wait(self, timeout: float = 5.0) -> Optional[int]:
        """The exit status, or ``None`` when still running after ``timeout`` seconds."""
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
        """Forget the process (no kill at exit) and close its stdin."""
        _LIVE.discard(self.proc)
        for stream in (self.proc.stdin,):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass


class EngineSupervisor:
    """The engine process of one client: started on demand, replaced when killed or dead (see the
    module docstring). ``memory_limit`` applies from the next start; ``restarts`` counts replacements."""

    def __init__(self, python: str, env: dict[str, Any], stderr_lines: int, echo_stderr: bool,
                 memory_limit: Optional[int]) -> None:
        self.python = python
        self.env = dict(env)
        self.stderr_lines = stderr_lines
        self.echo_stderr = echo_stderr
        self.memory_limit = memory_limit
        self.engine: Optional[EngineProcess] = None
        self.closed = False
        self.restarts = 0

    def spawn(self) -> EngineProcess:
        """Start a new engine process (raises :class:`EngineUnavailable` when it cannot be started)."""
        base = dict(os.environ)
        base.update({str(k): str(v) for k, v in self.env.items()})
        # -P, PYTHONSAFEPATH and the app's folder first: nothing is imported from the folder the app runs from
        # (a planted numpy.py), also in TVM's worker processes, which inherit the variable.
        env = child_process.child_env(base)
        env.setdefault("PYTHONUNBUFFERED", "1")
        cmd = child_process.python_command("pipeline_model.engine.worker", python=self.python)
        try:
            return EngineProcess(cmd, env, self.stderr_lines, self.echo_stderr, self.memory_limit)
        except OSError as exc:
            raise EngineUnavailable(f"could not start the engine ({' '.join(cmd)}): {exc}") from None

    def ensure(self) -> EngineProcess:
        """The running engine; a fresh one when there is none or it died while idle."""
        self.closed = False
        engine = self.engine
        if engine is not None and not engine.alive():
            # Died while idle (nothing was running): start a fresh one silently.
            engine.kill()
            engine = self.engine = None
            self.restarts += 1
        if engine is None:
            engine = self.engine = self.spawn()
        return engine

    def discard(self, restart: bool, engine: Optional[EngineProcess] = None) -> None:
        """Kill ``engine`` (default: the current one); start a fresh one unless the client was closed."""
        if engine is None or engine is self.engine:
            engine, self.engine = self.engine, None
        if engine is not None:
            engine.kill()
        if restart and not self.closed and self.engine is None:
            self.restarts += 1
            try:
                self.engine = self.spawn()  # boots while the caller reads the message
            except EngineUnavailable:
                self.engine = None

    def abandoned(self, engine: EngineProcess) -> bool:
        """True when the client was closed and ``engine`` is no longer its engine."""
        return self.closed and self.engine is not engine

    def overrun(self, engine: EngineProcess, what: str, last_step: Optional[dict]) -> EngineCrashed:
        """Kill ``engine`` whose request ran past its deadline (``what`` says which), start a fresh one
        and return the error."""
        tail = engine.stderr_tail()
        code = engine.kill(reason="timeout")
        self.discard(restart=True, engine=engine)
        return EngineCrashed(f"{what}; the engine was restarted", exit_code=code, last_step=last_step,
                             stderr_tail=tail, timed_out=True)

    def ended(self, engine: EngineProcess, what: str, last_step: Optional[dict]) -> EngineError:
        """The error for an engine that ended during a request about ``what`` (``step 2 (pass)``, ``the
        'graph' request``, ...), with a fresh engine started unless the client was closed."""
        code = engine.wait(5.0)
        tail = engine.stderr_tail()
        reason = engine.kill_reason
        if reason == "close" or self.abandoned(engine):
            return EngineUnavailable("the engine was closed while the request was running")
        self.discard(restart=True, engine=engine)
        if reason == "cancel":
            return EngineCrashed(f"{what} was stopped (the engine did not stop in time and was restarted)",
                                 exit_code=code, last_step=last_step, stderr_tail=tail, cancelled=True)
        if reason == "memory":
            return EngineCrashed(
                f"{what} used more memory than the engine's limit of {_mib(engine.memory_limit or 0)}; "
                f"the engine was stopped and restarted", exit_code=code, last_step=last_step, stderr_tail=tail,
                out_of_memory=True)
        if reason == "restart":
            return EngineCrashed(f"the engine was restarted during {what}", exit_code=code, last_step=last_step,
                                 stderr_tail=tail)
        how = f"signal {signal_name(code)}" if code is not None and code < 0 else signal_name(code)
        where = f"while running {what}" if last_step is not None else f"during {what}"
        msg = f"the engine crashed ({how}) {where}; it was restarted"
        return EngineCrashed(msg + (f"\nengine stderr (last lines):\n{tail}" if tail else ""),
                             exit_code=code, last_step=last_step, stderr_tail=tail)

    def detach(self) -> Optional[EngineProcess]:
        """Mark the client closed and hand over its engine (``None`` when none runs) for shutting down."""
        self.closed = True
        engine, self.engine = self.engine, None
        return engine

    @staticmethod
    def reap(engine: EngineProcess) -> None:
        """End an engine told to shut down: killed when still running after 1 s (an engine still
        importing TVM reads stdin only later), its process group killed in any case."""
        if engine.wait(1.0) is None:
            engine.kill(reason="close", wait_s=1.0)
        elif engine.own_group:
            engine.kill(reason="close", wait_s=0.5)  # children of user code, if any
        engine.close_pipes()
