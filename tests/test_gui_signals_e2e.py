"""SIGTERM, SIGINT and SIGHUP keep unsaved edits (issue 20): the real window, in a subprocess, gets an edit
(its recovery copy is written), then the signal; the copy must survive the exit with the edit in it, and the
next start restores it. No wall-clock assertions: the time limits are generous guards only."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from pipeline_model import recovery
from tests.conftest import ROOT

pytestmark = pytest.mark.e2e


def _env(tmp_path, **extra):
    env = dict(os.environ)
    for key in ("RPS_CONFIG_DIR", "RPS_CACHE_DIR", "RPS_TEST_HOOK", "RPS_RECOVERY_ANSWER"):
        env.pop(key, None)
    env.update({"HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "state"),
                "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
                "QT_QPA_PLATFORM": "offscreen"})
    env.update(extra)
    return env


def _start(env):
    return subprocess.Popen([sys.executable, os.path.join(ROOT, "main.py")], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_for(cond, guard_s=120.0):
    deadline = time.monotonic() + guard_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def _copies(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(recovery.SUFFIX)) if folder.is_dir() else []


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_signal_keeps_the_recovery_copy(tmp_path, signame):
    folder = tmp_path / "state" / "relax-pipeline-studio" / "recovery"
    proc = _start(_env(tmp_path, RPS_TEST_HOOK="edit"))
    try:
        assert _wait_for(lambda: bool(_copies(folder))), "no recovery copy written after the edit"
        time.sleep(0.5)  # let the event loop settle after the hook
        proc.send_signal(getattr(signal, signame))
        code = proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    stderr = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    assert "Traceback" not in stderr, stderr
    assert code == 0, (code, stderr[-2000:])
    found, problems = recovery.find_recoveries(str(folder))
    assert not problems
    assert len(found) == 1, f"{signame} lost the recovery copy: {_copies(folder)}"
    assert found[0].document.steps[-1].pass_id == "relax.FoldConstant"
    if signame != "SIGTERM":
        return
    report = tmp_path / "report.json"
    second = _start(_env(tmp_path, RPS_RECOVERY_ANSWER="restore", RPS_TEST_HOOK=f"report={report}"))
    try:
        second.wait(120)
    finally:
        if second.poll() is None:
            second.kill()
    data = json.loads(report.read_text())
    assert data["steps"][-1] == "relax.FoldConstant", data
    assert data["modified"] is True
