"""Start-up (issue 33): what the first frame does not need waits for the window's first paint.

The real ``run_app`` runs in a subprocess; a spy on :func:`app.application.after_first_paint` notes, when the
first paint came, which modules were imported and whether the engine's thread had started, then closes the
window (the engine and the start-up document are never started). No timing is asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT
from tests.gui_process import gui_env

#: Modules the first frame does not need (each costs 0.1-0.5 s to import on a 2-core machine).
HEAVY = ("networkx", "numpy", "jsonschema", "psutil", "pygments.lexers.python", "tvm")

SPY = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from app import application

seen = {}
real = application.after_first_paint

def spy(window, callback, fallback_ms=2000):
    def at_first_paint():
        seen["modules"] = sorted(sys.modules)
        seen["engine_thread_started"] = window.worker.isRunning()
        window.close()
    real(window, at_first_paint, fallback_ms=600000)  # no fallback: wait for the real paint

application.after_first_paint = spy
code = application.run_app([])
print(json.dumps(dict(seen, exit=code)))
"""


def test_first_paint_imports_nothing_heavy_and_starts_no_engine(tmp_path):
    proc = subprocess.run([sys.executable, "-c", SPY, ROOT], env=gui_env(tmp_path), cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "modules" in seen, "the window was never painted"
    loaded = [name for name in HEAVY if name in seen["modules"]]
    assert loaded == [], f"imported before the first paint: {loaded}"
    assert seen["engine_thread_started"] is False  # the engine starts behind the painted window
    assert "app.main_window" in seen["modules"]
