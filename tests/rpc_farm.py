"""A device farm on loopback for tests and bench/bench_rpc.py: TVM's RPC tracker and ``servers`` RPC servers
(``python -m tvm.exec.rpc_tracker`` / ``rpc_server --tracker``), each in its own process group so that
everything it starts (the server's session workers) goes with it; always ended, also when starting fails.

The waits for the processes to come up are generous bounds (a loaded machine starts Python slowly); they end
a test only by raising, never by deciding what it asserts."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from typing import Iterator

from pipeline_model.scriptlib.rpc import tracker_devices

#: Seconds a process of the farm may take to come up (a bound, not a measurement).
START_BOUND_S = 180.0


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _end(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            continue
        if sig == signal.SIGTERM:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # what the leader left in its group
        return


def _wait_for(what: str, ready, proc_list: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + START_BOUND_S
    while True:
        try:
            if ready():
                return
        except OSError:
            pass
        dead = [p for p in proc_list if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not come up (exited: {[p.args for p in dead]})")
        time.sleep(0.3)


class Farm:
    """The running farm: ``port`` (the tracker's), ``key``, ``servers`` (their processes), :meth:`drop` one."""

    def __init__(self, port: int, key: str) -> None:
        self.port, self.key = port, key
        self.tracker: subprocess.Popen | None = None
        self.servers: list[subprocess.Popen] = []
        self.ghosts: list[socket.socket] = []

    @property
    def address(self) -> str:
        """``127.0.0.1:<port>``."""
        return f"127.0.0.1:{self.port}"

    def add_server(self, count: int = 1) -> None:
        """Start ``count`` more servers of :attr:`key` (at once) and wait until the tracker lists them."""
        want = len(self.servers) + count
        for _ in range(count):
            port = free_port()
            self.servers.append(_spawn("tvm.exec.rpc_server", "--tracker", self.address, "--key", self.key,
                                       "--host", "127.0.0.1", "--port", str(port), "--port-end", str(port + 1)))
        _wait_for(f"rpc_server {want}",
                  lambda: tracker_devices("127.0.0.1", self.port).get(self.key, {}).get("free", 0) >= want,
                  [self.tracker, *self.servers])

    def drop(self, index: int) -> None:
        """End server ``index`` (the device drops out)."""
        _end(self.servers.pop(index))

    def add_ghost(self) -> None:
        """Register a device of :attr:`key` that is gone: the tracker lists it as free and hands it out, and
        nothing listens at its address (a board that dropped out between its registration and its use)."""
        from tvm.rpc import base

        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        self.ghosts.append(sock)
        sock.sendall(struct.pack("<i", base.RPC_TRACKER_MAGIC))
        base.recvall(sock, 4)
        dead = free_port()  # nothing listens there
        base.sendjson(sock, [base.TrackerCode.UPDATE_INFO, {"key": f"server:{self.key}", "addr": ["127.0.0.1", dead]}])
        base.recvjson(sock)
        base.sendjson(sock, [base.TrackerCode.PUT, self.key, [dead, "ghost-matchkey"], "127.0.0.1"])
        base.recvjson(sock)


def _spawn(module: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", module, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


@contextlib.contextmanager
def local_farm(servers: int = 2, key: str = "local") -> Iterator[Farm]:
    """A tracker and ``servers`` servers of ``key`` on loopback, ended on leaving (also after an error)."""
    farm = Farm(free_port(), key)
    try:
        farm.tracker = _spawn("tvm.exec.rpc_tracker", "--host", "127.0.0.1", "--port", str(farm.port),
                              "--port-end", str(farm.port + 1))
        _wait_for("rpc_tracker", lambda: tracker_devices("127.0.0.1", farm.port) is not None, [farm.tracker])
        farm.add_server(servers)
        yield farm
    finally:
        for sock in farm.ghosts:
            sock.close()
        for proc in reversed(farm.servers):
            _end(proc)
        if farm.tracker is not None:
            _end(farm.tracker)
