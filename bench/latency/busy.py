"""The bench's busy-machine mode (``--busy``, issue 35): a competing CPU-bound process pinned to one core while
the same interleaved measurement runs again, so the table shows every system with the machine to itself and
with one core kept busy (users run the app on laptops that do other things).

The competitor is a fresh Python interpreter running a busy loop on one core (``os.sched_setaffinity``); it is
ended when the measurement ends, also on an error or Ctrl-C (:func:`competitor` is a context manager), and it
ends itself when its parent is gone (a killed bench leaves nothing spinning).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from typing import Iterator, Optional

#: The competitor's program: pin to the core given, then spin until the parent (the bench) is gone.
_LOOP = """
import os, sys
os.sched_setaffinity(0, {int(sys.argv[1])})
parent, x = int(sys.argv[2]), 0
while True:
    for _ in range(200000):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    if os.getppid() != parent:
        break
"""


def busy_core() -> int:
    """The core the competitor is pinned to: the highest-numbered core this process may use."""
    return max(os.sched_getaffinity(0))


@contextlib.contextmanager
def competitor(core: Optional[int] = None) -> Iterator[subprocess.Popen]:
    """Run a busy loop pinned to ``core`` (default :func:`busy_core`) for the body of the ``with``; it is
    terminated (then killed) when the body ends, whichever way."""
    core = busy_core() if core is None else int(core)
    proc = subprocess.Popen([sys.executable, "-c", _LOOP, str(core), str(os.getpid())],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
