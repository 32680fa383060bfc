"""The real window in a subprocess (end-to-end tests): an isolated environment, start, wait."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from tests.conftest import ROOT


def gui_env(tmp_path, **extra):
    """``os.environ`` with a private home, state, config and cache folder under ``tmp_path``, offscreen Qt, no
    test hooks of the caller's, plus ``extra``."""
    env = dict(os.environ)
    for key in ("RPS_CONFIG_DIR", "RPS_CACHE_DIR", "RPS_TEST_HOOK", "RPS_RECOVERY_ANSWER"):
        env.pop(key, None)
    env.update({"HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "state"),
                "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
                "QT_QPA_PLATFORM": "offscreen"})
    env.update(extra)
    return env


def start_gui(env, *args):
    """``main.py`` (the window) started with ``env`` and ``args``; stdout dropped, stderr kept."""
    return subprocess.Popen([sys.executable, os.path.join(ROOT, "main.py"), *args], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_for(cond, guard_s=120.0):
    """Poll ``cond`` until it holds or ``guard_s`` passed (a guard against hangs, not a timing assertion)."""
    deadline = time.monotonic() + guard_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def restored_document(tmp_path) -> dict:
    """Start the window again in ``tmp_path``'s environment, answer "Restore" to the recovery offer and return the
    restored document as the ``report`` test hook writes it (``steps``, ``path``, ``modified``, ``pid``)."""
    report = tmp_path / "report.json"
    second = start_gui(gui_env(tmp_path, RPS_RECOVERY_ANSWER="restore", RPS_TEST_HOOK=f"report={report}"))
    try:
        second.wait(120)
    finally:
        if second.poll() is None:
            second.kill()
    return json.loads(report.read_text())
