"""SIGTERM, SIGINT and SIGHUP keep unsaved edits (issue 20): the real window, in a subprocess, gets an edit
(its recovery copy is written), then the signal; the copy must survive the exit with the edit in it, and the
next start restores it. No wall-clock assertions: the time limits are generous guards only."""

from __future__ import annotations

import os
import signal
import time

import pytest

from pipeline_model import recovery
from tests.gui_process import gui_env, restored_document, start_gui, wait_for

pytestmark = pytest.mark.e2e


def _copies(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(recovery.SUFFIX)) if folder.is_dir() else []


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_signal_keeps_the_recovery_copy(tmp_path, signame):
    folder = tmp_path / "state" / "relax-pipeline-studio" / "recovery"
    proc = start_gui(gui_env(tmp_path, RPS_TEST_HOOK="edit"))
    try:
        assert wait_for(lambda: bool(_copies(folder))), "no recovery copy written after the edit"
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
    data = restored_document(tmp_path)
    assert data["steps"][-1] == "relax.FoldConstant", data
    assert data["modified"] is True
