"""A fresh virtual environment for installing wheels offline (tests of the app's package and of plug-ins).

The environment has no pip and no packages of its own: a ``.pth`` file gives it this interpreter's site-packages
(TVM, PySide6, numpy ...), and wheels are installed into it with this interpreter's pip (``--python``), offline
(``--no-index --no-deps``). Wheels are built without build isolation (setuptools is in the shared venv)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import sysconfig


def run_ok(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    """Run ``cmd`` (a guard of 240 s against hangs); assert it succeeded, showing its output when not."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240, **kwargs)
    assert proc.returncode == 0, f"{cmd}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    return proc


def build_wheel(src: str, out: str, pattern: str) -> str:
    """The wheel built from the project at ``src`` into ``out`` (the one file matching ``pattern``)."""
    run_ok([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-index", "--no-build-isolation", src,
            "-w", out])
    (wheel,) = glob.glob(os.path.join(out, pattern))
    return wheel


def fresh_venv(path: str) -> tuple[str, str]:
    """``(python, purelib)`` of a new virtual environment at ``path`` that sees this interpreter's packages."""
    run_ok([sys.executable, "-m", "venv", "--without-pip", path])
    python = os.path.join(path, "bin", "python")
    purelib = run_ok([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    deps = {os.path.realpath(sysconfig.get_paths()[key]) for key in ("purelib", "platlib")}
    with open(os.path.join(purelib, "project_dependencies.pth"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(sorted(deps)) + "\n")
    return python, purelib


def install(python: str, *wheels: str) -> None:
    """Install ``wheels`` into the environment of ``python``, offline and without dependencies."""
    run_ok([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index", *wheels])


def isolated_env(base: str) -> dict[str, str]:
    """``os.environ`` without ``PYTHON*``/``RPS_*`` variables, with a private home, cache, config and state
    folder under ``base`` and offscreen Qt."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "RPS_"))}
    env.update(HOME=os.path.join(base, "home"), XDG_CACHE_HOME=os.path.join(base, "cache"),
               XDG_CONFIG_HOME=os.path.join(base, "config"), XDG_STATE_HOME=os.path.join(base, "state"),
               QT_QPA_PLATFORM="offscreen")
    return env
