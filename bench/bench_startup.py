"""Launch → first painted main window, target ≤ 0.5 s (issue 33; prints figures and the ratio to the target).

Runs ``python main.py`` in a fresh process several times with ``RPS_STARTUP_PROBE`` set (the app
writes the wall-clock time of the main window's first paint event and closes). Uses the X server in
``$DISPLAY`` when there is one (e.g. under ``xvfb-run``), else Qt's offscreen platform. Also reports
whether TVM was imported by the GUI process (it must not be). Compiled bytecode is used as an installed
app has it: ``PYTHONDONTWRITEBYTECODE`` is dropped for the launches and their ``.pyc`` files go to a
temporary ``PYTHONPYCACHEPREFIX`` (the warm-up launch writes them; nothing is written into the tree).
``BENCH_SOURCE_ONLY=1`` keeps compiling every module from source on each launch instead.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_S = 0.5


def one_launch(env: dict) -> float:
    """Seconds from spawning the process to the first paint of the main window."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "painted")
        env = dict(env, RPS_STARTUP_PROBE=probe, RPS_CONFIG_DIR=os.path.join(tmp, "cfg"))
        start = time.time()
        proc = subprocess.run([sys.executable, os.path.join(ROOT, "main.py")], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        if not os.path.exists(probe):
            raise SystemExit(f"the app did not report a first paint (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
        with open(probe, encoding="utf-8") as handle:
            painted = float(handle.read().split()[0])
        return painted - start


def main() -> int:
    """Run the benchmark and print the figures."""
    env = dict(os.environ)
    if not env.get("DISPLAY"):
        env["QT_QPA_PLATFORM"] = "offscreen"
    runs = int(os.environ.get("BENCH_RUNS", "5"))
    source_only = os.environ.get("BENCH_SOURCE_ONLY") == "1"
    with tempfile.TemporaryDirectory(prefix="bench_startup_pyc_") as pyc:
        if not source_only:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = pyc
        one_launch(env)  # warm the OS file cache (and write the bytecode)
        times = [one_launch(env) for _ in range(runs)]
    med = statistics.median(times)
    check = subprocess.run(
        [sys.executable, "-c", "import sys; sys.argv=['x']; import app.main_window, app.application; print('tvm' in sys.modules)"],
        env=dict(env, PYTHONPATH=ROOT), cwd=ROOT, capture_output=True, text=True,
    )
    platform = env.get("QT_QPA_PLATFORM") or f"xcb ({env.get('DISPLAY')})"
    load = " ".join(open("/proc/loadavg", encoding="ascii").read().split()[:3]) if os.path.exists("/proc/loadavg") else "n/a"
    print(f"platform: {platform}; runs: {runs}; bytecode: {'none (source only)' if source_only else 'cached'}; "
          f"cores: {os.cpu_count()}; loadavg at end: {load}")
    print("launch -> first paint (s): " + ", ".join(f"{t:.3f}" for t in times))
    print(f"median {med:.3f} s, min {min(times):.3f} s, max {max(times):.3f} s; target {TARGET_S} s")
    print(f"ratio median/target = {med / TARGET_S:.2f} ({'OK' if med <= TARGET_S else 'OVER TARGET'})")
    print(f"tvm imported by the GUI modules: {check.stdout.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
