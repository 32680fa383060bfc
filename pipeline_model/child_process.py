"""How the app starts its own Python child processes (engine, diff process) without importing the user's files.

``python -m pkg.mod`` puts the *current folder* first on ``sys.path``, so a ``numpy.py``, ``tvm.py`` or
``json.py`` in the folder the user runs the app from (or a folder full of downloaded files) would be imported
by the child instead of the library (issue 20). The rule, used by every child the app starts:

* the interpreter runs with ``-P`` and ``PYTHONSAFEPATH=1`` — neither the current folder nor a script's folder
  is put on ``sys.path``; the variable is inherited by the grandchildren TVM starts (MetaSchedule's builder
  and runner workers ``python -m tvm.exec.popen_worker``, RPC helpers), so they are safe too;
* ``PYTHONPATH`` holds the app's own folder (:data:`APP_ROOT`, where ``pipeline_model`` is) followed by the
  user's absolute entries; relative entries (``""``, ``"."``, ``"src"``: resolved against the current folder)
  are dropped;
* ``-I``/``-E`` are not used: the user's environment (``TVM_NUM_THREADS``, proxies, ``LD_LIBRARY_PATH``) stays.

TVM-free and Qt-free.
"""

from __future__ import annotations

import os
import sys
from typing import Mapping, Optional

#: The folder holding the ``pipeline_model`` package (the checkout, or site-packages when installed).
APP_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def safe_pythonpath(current: Optional[str]) -> str:
    """``PYTHONPATH`` for a child: :data:`APP_ROOT`, then the absolute entries of ``current`` (no duplicates)."""
    entries = [APP_ROOT]
    for entry in (current or "").split(os.pathsep):
        if entry and os.path.isabs(entry) and entry not in entries:
            entries.append(entry)
    return os.pathsep.join(entries)


def child_env(base: Optional[Mapping[str, str]] = None, **extra: str) -> dict[str, str]:
    """The environment of a child process: ``base`` (default ``os.environ``) with the safe-path rule and
    ``extra`` variables applied."""
    env = dict(os.environ if base is None else base)
    env["PYTHONSAFEPATH"] = "1"
    env["PYTHONPATH"] = safe_pythonpath(env.get("PYTHONPATH"))
    env.update(extra)
    return env


def python_command(module: str, *args: str, python: Optional[str] = None) -> list[str]:
    """``[python, "-P", "-m", module, *args]`` (``python`` defaults to this interpreter)."""
    return [python or sys.executable, "-P", "-m", module, *args]
