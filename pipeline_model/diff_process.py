"""Diffs of large module texts in a separate process (Qt-free, TVM-free).

A diff of two ~50,000-line TVMScript modules is ~0.15 s of Python and C string work (splitting, comparing
and hashing lines). In a worker *thread* of the GUI process it holds the GIL the GUI thread needs: each C
call (``splitlines``, list comparisons, dict building) holds it for milliseconds to tens of milliseconds, and
every Qt call the GUI thread makes from Python waits for it again. :class:`DiffProcess` runs
:func:`pipeline_model.diff.diff_structure` in a child process instead (``python -m
pipeline_model.diff_process``, which imports only this module and :mod:`pipeline_model.diff`) and assembles
the :class:`~pipeline_model.diff.ModuleDiff` where the texts are (:func:`pipeline_model.diff.assemble_diff`).

What crosses the pipes is cheap on the caller's side: the two texts as UTF-8 bytes (one ``encode`` each,
written with the GIL released) and back a pickled :class:`~pipeline_model.diff.DiffStructure` (a few
thousand opcode tuples, tens of kB: well under a millisecond to unpickle), never ~10^5 row objects.

The child is started on the first :meth:`DiffProcess.diff`, serves one request at a time for as long as it
lives, and is started again when it has died (it also leaves by itself after a request that left it above
``max_rss_mb``, which bounds its memory). A request that fails (the child crashed, hung past ``timeout_s``,
or answered nonsense) kills the child and raises :class:`DiffProcessError`: the caller then diffs in its own
thread (same result). After :data:`MAX_FAILURES` failures in a row :attr:`DiffProcess.usable` turns false.
The child ends when its stdin closes (the caller closed it, or exited or was killed) and, on Linux, when
its parent dies (``PR_SET_PDEATHSIG``); :func:`shared` instances are closed at interpreter exit.

Frames: a request is 16 bytes (two signed 64-bit lengths of the UTF-8 texts, -1 for ``None``, -2 for "after"
is the same text as "before") and the texts;
an answer is an unsigned 64-bit length and a pickle of ``("ok", DiffStructure, leaving)`` or ``("error",
message, leaving)`` (``leaving``: the child ends after this answer).
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
import weakref
from typing import Optional

from pipeline_model import child_process
from pipeline_model import diff as D

__all__ = ["DiffProcess", "DiffProcessError", "MAX_FAILURES", "shared"]

_REQUEST = struct.Struct("<qq")
_SAME = -2  # the "after" length of a request whose two texts are the same (sent once)
_ANSWER = struct.Struct("<Q")
#: Failed requests in a row after which a :class:`DiffProcess` is no longer used (``usable`` is false).
MAX_FAILURES = 3
#: Largest answer accepted (a DiffStructure is tens of kB; anything near this is not one).
_MAX_ANSWER = 512 * 1024 * 1024
_CHUNK = 1 << 20


class DiffProcessError(RuntimeError):
    """The diff process could not answer (not started, crashed, timed out, closed, or a bad answer)."""


def _encode(text: Optional[str]) -> bytes:
    return b"" if text is None else text.encode("utf-8", "surrogatepass")


def _decode(data: bytes, length: int) -> Optional[str]:
    return None if length < 0 else data.decode("utf-8", "surrogatepass")


def _write_all(fd: int, data: bytes, deadline: Optional[float]) -> None:
    """Write ``data`` to the non-blocking ``fd`` (the GIL is released in ``os.write`` and ``select``)."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view[:_CHUNK])
        except BlockingIOError:
            n = 0
        view = view[n:]
        if view and n == 0:
            timeout = None if deadline is None else deadline - time.monotonic()
            if timeout is not None and timeout <= 0:
                raise TimeoutError("writing to the diff process timed out")
            select.select([], [fd], [], timeout)


def _read_exact(fd: int, n: int, deadline: Optional[float]) -> bytes:
    """Read exactly ``n`` bytes from the non-blocking ``fd`` (``EOFError`` if it closes first)."""
    parts: list[bytes] = []
    left = n
    while left:
        try:
            chunk = os.read(fd, min(left, _CHUNK))
        except BlockingIOError:
            timeout = None if deadline is None else deadline - time.monotonic()
            if timeout is not None and timeout <= 0:
                raise TimeoutError("the diff process did not answer in time") from None
            select.select([fd], [], [], timeout)
            continue
        if not chunk:
            raise EOFError("the diff process closed its pipe")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


class DiffProcess:
    """A persistent child process that diffs module texts (see the module docstring). Thread-safe: requests
    from several threads are served one after the other.

    ``command`` replaces the child's command line (tests use it to stand in a worker that crashes or
    hangs); ``timeout_s`` bounds one request, start included; ``max_rss_mb`` is the child's memory after a
    request above which it leaves (the next request starts a fresh one)."""

    def __init__(self, command: Optional[list[str]] = None, timeout_s: float = 120.0,
                 max_rss_mb: float = 768.0) -> None:
        self.command = command
        self.timeout_s = timeout_s
        self.max_rss_mb = max_rss_mb
        self.requests_started = 0  # requests sent to a child
        self.requests_done = 0  # requests answered by a child
        self.starts = 0  # children started
        self.failures = 0  # failed requests in a row
        self.last_error = ""
        self._proc: Optional[subprocess.Popen] = None
        self._request_lock = threading.Lock()  # one request at a time
        self._state_lock = threading.Lock()  # the child handle (close() may come from another thread)
        self._closed = False
        _instances.add(self)

    # -- state -----------------------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        """True after :meth:`close` (requests raise :class:`DiffProcessError`)."""
        return self._closed

    @property
    def usable(self) -> bool:
        """False once closed or after :data:`MAX_FAILURES` failed requests in a row."""
        return not self._closed and self.failures < MAX_FAILURES

    @property
    def pid(self) -> Optional[int]:
        """The running child's process id (``None`` when none runs)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def is_running(self) -> bool:
        """True while a child process is alive."""
        return self.pid is not None

    # -- requests --------------------------------------------------------------------------------------
    def diff(self, before: Optional[str], after: Optional[str]) -> D.ModuleDiff:
        """``diff_snapshots(before, after)`` computed in the child (blocks the calling thread, GIL released
        while waiting). Raises :class:`DiffProcessError` when the child cannot answer."""
        structure = self.structure(before, after)
        return D.assemble_diff(before, after, structure)

    def structure(self, before: Optional[str], after: Optional[str]) -> D.DiffStructure:
        """``diff_structure(before, after)`` computed in the child (see :meth:`diff`)."""
        if not self.usable:
            raise DiffProcessError("the diff process is closed" if self._closed else
                                   f"the diff process failed {self.failures} times: {self.last_error}")
        same = before is not None and before == after  # the model input shown as its own diff: sent once
        a, b = _encode(before), (b"" if same else _encode(after))
        header = _REQUEST.pack(-1 if before is None else len(a), _SAME if same else (-1 if after is None else len(b)))
        with self._request_lock:
            deadline = time.monotonic() + self.timeout_s
            try:
                proc = self._ensure_started()
                self.requests_started += 1
                assert proc.stdin is not None and proc.stdout is not None
                out_fd, in_fd = proc.stdin.fileno(), proc.stdout.fileno()
                _write_all(out_fd, header, deadline)
                _write_all(out_fd, a, deadline)
                _write_all(out_fd, b, deadline)
                del a, b
                (size,) = _ANSWER.unpack(_read_exact(in_fd, _ANSWER.size, deadline))
                if size > _MAX_ANSWER:
                    raise ValueError(f"answer of {size} bytes")
                status, value, leaving = pickle.loads(_read_exact(in_fd, size, deadline))
            except (OSError, EOFError, TimeoutError, ValueError, pickle.UnpicklingError, TypeError) as exc:
                return self._fail(f"{type(exc).__name__}: {exc}")
            self.requests_done += 1
            if leaving:
                self._reap()
            if status != "ok" or not isinstance(value, D.DiffStructure):
                return self._fail(f"the diff process answered {status}: {value}")
            self.failures = 0
            return value

    def _fail(self, message: str) -> D.DiffStructure:
        self.failures += 1
        self.last_error = message
        self._kill()
        raise DiffProcessError(message)

    def _ensure_started(self) -> subprocess.Popen:
        with self._state_lock:
            if self._closed:
                raise OSError("closed")
            proc = self._proc
            if proc is not None and proc.poll() is None:
                return proc
            if proc is not None:
                _close_pipes(proc)
            env = child_process.child_env()  # never imports from the current folder (planted numpy.py & co.)
            command = self.command or child_process.python_command("pipeline_model.diff_process",
                                                                   "--max-rss-mb", str(self.max_rss_mb))
            proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                    close_fds=True)
            assert proc.stdin is not None and proc.stdout is not None
            os.set_blocking(proc.stdin.fileno(), False)
            os.set_blocking(proc.stdout.fileno(), False)
            self._proc = proc
            self.starts += 1
            return proc

    def _reap(self) -> None:
        """The child said it leaves after this answer (it grew past ``max_rss_mb``): collect it."""
        with self._state_lock:
            proc, self._proc = self._proc, None
        if proc is not None:
            _stop(proc, grace_s=5.0)

    def _kill(self) -> None:
        with self._state_lock:
            proc, self._proc = self._proc, None
        if proc is not None:
            _stop(proc, grace_s=0.0)

    def close(self) -> None:
        """Stop the child (it leaves at the end of its stdin; killed if it has not after a moment). A
        request in flight in another thread fails. Requests after this raise :class:`DiffProcessError`."""
        self._closed = True
        with self._state_lock:
            proc, self._proc = self._proc, None
        if proc is not None:
            _stop(proc, grace_s=1.0)


def _close_pipes(proc: subprocess.Popen) -> None:
    for pipe in (proc.stdin, proc.stdout):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass


def _stop(proc: subprocess.Popen, grace_s: float) -> None:
    """End the child: close its stdin (it leaves), then kill it if it is still there after ``grace_s``."""
    _close_pipes(proc)
    try:
        proc.wait(grace_s) if grace_s > 0 else None
    except subprocess.TimeoutExpired:
        pass
    if proc.poll() is None:
        proc.kill()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:  # pragma: no cover - a killed process is reaped at once
            pass


_instances: "weakref.WeakSet[DiffProcess]" = weakref.WeakSet()
_shared: Optional[DiffProcess] = None
_shared_lock = threading.Lock()


def shared() -> DiffProcess:
    """The process-wide :class:`DiffProcess` (created on first use; a closed one is replaced). Nothing is
    started until its first diff."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared.closed:
            _shared = DiffProcess()
        return _shared


@atexit.register
def _close_all() -> None:
    for instance in list(_instances):
        instance.close()


# -- the child ---------------------------------------------------------------------------------------------
def _rss_mb() -> float:
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except (OSError, ValueError, IndexError):
        return 0.0


def _die_with_parent() -> None:
    """On Linux, have the kernel kill this process when its parent dies."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _serve(in_fd: int, out_fd: int, max_rss_mb: float) -> int:
    while True:
        try:
            header = _read_exact(in_fd, _REQUEST.size, None)
        except EOFError:
            return 0
        nb, na = _REQUEST.unpack(header)
        before = _decode(_read_exact(in_fd, max(nb, 0), None), nb)
        after = before if na == _SAME else _decode(_read_exact(in_fd, max(na, 0), None), na)
        value: object
        try:
            status, value = "ok", D.diff_structure(before, after)
        except Exception as exc:  # noqa: BLE001 - reported to the caller, which diffs in its own thread
            status, value = "error", f"{type(exc).__name__}: {exc}"
        del before, after
        # Leaving after a request that left this process big (the caller starts a fresh one next time).
        leaving = max_rss_mb > 0 and _rss_mb() > max_rss_mb
        data = pickle.dumps((status, value, leaving), protocol=pickle.HIGHEST_PROTOCOL)
        del value
        _write_all(out_fd, _ANSWER.pack(len(data)) + data, None)
        if leaving:
            return 0


def main(argv: Optional[list[str]] = None) -> int:
    """Serve diff requests on stdin/stdout until stdin closes (see the module docstring)."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m pipeline_model.diff_process")
    ap.add_argument("--max-rss-mb", type=float, default=0.0, help="leave after a request that left RSS above this")
    args = ap.parse_args(argv)
    _die_with_parent()
    # Answers go to a private copy of stdout; anything printed by mistake goes to stderr instead.
    out_fd = os.dup(1)
    os.dup2(2, 1)
    in_fd = os.dup(0)
    os.set_blocking(in_fd, True)
    os.set_blocking(out_fd, True)
    try:
        return _serve(in_fd, out_fd, args.max_rss_mb)
    except (BrokenPipeError, EOFError):
        return 0


if __name__ == "__main__":
    sys.exit(main())
