"""The suite leaves no process behind (issue 20).

At the start of the session every process the suite starts from then on inherits the environment variable
:data:`MARK` (a value unique to this session). At the end of the session, after a short grace period for
engines that are shutting down, any process still alive that carries the mark — a child, or a grandchild
reparented to init — is listed, killed, and the session fails.

TVM worker pools (MetaSchedule's builder and runner ``tvm.exec.popen_worker`` processes, started inside the
pytest process by the tests that tune in-process) are ended after each test that left some
(:func:`end_tvm_worker_pools`), as the app's engine ends them when a tuning step finishes.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest

#: Environment variable every process started by this test session inherits.
MARK = "RPS_TEST_SESSION_MARK"
#: Seconds the session waits at its end for marked processes to exit by themselves.
GRACE_S = 15.0


def _psutil():
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is a requirement
        return None
    return psutil


def marked_processes(mark: str) -> list:
    """Live processes (other than this one) whose environment holds ``MARK=mark``."""
    psutil = _psutil()
    if psutil is None:
        return []
    needle = f"{MARK}={mark}".encode()
    out = []
    for proc in psutil.process_iter(["pid"]):
        if proc.pid == os.getpid():
            continue
        try:
            with open(f"/proc/{proc.pid}/environ", "rb") as fh:
                env = fh.read()
        except OSError:
            continue
        if needle in env.split(b"\0") and proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
            out.append(proc)
    return out


def pytest_configure(config: pytest.Config) -> None:
    if MARK not in os.environ:
        os.environ[MARK] = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if hasattr(session.config, "workerinput"):  # pragma: no cover - xdist workers report to the controller
        return
    mark = os.environ.get(MARK)
    if not mark or mark.split("-", 1)[0] != str(os.getpid()):
        return
    _run_app_exit_handlers()
    deadline = time.monotonic() + GRACE_S
    left = marked_processes(mark)
    while left and time.monotonic() < deadline:
        time.sleep(0.25)
        left = marked_processes(mark)
    if not left:
        return
    lines = []
    for proc in left:
        try:
            lines.append(f"  pid {proc.pid}: {' '.join(proc.cmdline())[:200]}")
            proc.kill()
        except Exception:  # noqa: BLE001 - it may have exited meanwhile
            continue
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    message = "processes started by the test suite were still alive at its end (killed now):\n" + "\n".join(lines)
    if reporter is not None:
        reporter.write_line("")
        reporter.write_line(message, red=True)
    else:  # pragma: no cover
        print(message)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _run_app_exit_handlers() -> None:
    """What the app itself does at interpreter exit (``atexit``): the engine clients kill their engines, the
    shared diff process is closed. Processes those end were not left behind; the check runs after them."""
    import sys

    process = sys.modules.get("pipeline_model.engine.process")
    if process is not None:
        process._kill_all_at_exit()
    diff_process = sys.modules.get("pipeline_model.diff_process")
    if diff_process is not None:
        diff_process._close_all()


def _worker_pool_children() -> list:
    psutil = _psutil()
    if psutil is None:
        return []
    out = []
    for child in psutil.Process().children(recursive=False):
        try:
            if any("popen_worker" in part for part in child.cmdline()):
                out.append(child)
        except Exception:  # noqa: BLE001 - gone meanwhile
            continue
    return out


@pytest.fixture(autouse=True)
def end_tvm_worker_pools():
    """After a test: end the TVM worker-pool processes it started inside the pytest process (in-process
    MetaSchedule tuning); the app's own tuning runs in the engine, which ends them with the step."""
    yield
    children = _worker_pool_children()
    if not children:
        return
    psutil = _psutil()
    for child in children:
        try:
            child.terminate()
        except Exception:  # noqa: BLE001
            pass
    _gone, alive = psutil.wait_procs(children, timeout=5)
    for child in alive:
        try:
            child.kill()
        except Exception:  # noqa: BLE001
            pass
