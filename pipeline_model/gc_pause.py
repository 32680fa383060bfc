"""A process-wide, nestable pause of Python's cyclic garbage collector (Qt-free, TVM-free).

Graph JSON of a large model is ~10^6 small Python objects (a 50,000-node function: ~20 MB of JSON). While such
a graph is built, encoded or decoded, the allocation counters trigger collections, and every full collection
walks the whole heap with the GIL held: decoding a 50k-node graph reply took 1.3 s with the collector on and
0.19 s with it paused, and the collections stalled the GUI thread for hundreds of milliseconds. Reference
counting still frees everything acyclic while the collector is paused.

:func:`paused` is safe to nest and to use from several threads at once (the engine client's reader thread,
the graph view's layout worker, the engine's graph handler): the collector is paused while any user holds
it and restored to what it was when the last one leaves. With ``freeze=True`` the objects alive at that
moment are moved to the permanent generation (:func:`gc.freeze`) before collection resumes: what a graph
request leaves behind is long-lived (caches), and the first collection after the pause would otherwise walk
all of it at once.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import sys
import threading
from typing import Any, Iterator

__all__ = ["paused", "is_paused", "release_free_memory"]

_lock = threading.Lock()
_depth = 0
_restore = False
_freeze = False


@contextlib.contextmanager
def paused(freeze: bool = False) -> Iterator[None]:
    """Pause the cyclic collector for the ``with`` block (see the module docstring)."""
    global _depth, _restore, _freeze
    with _lock:
        if _depth == 0:
            _restore = gc.isenabled()
            _freeze = False
            gc.disable()
        _depth += 1
        _freeze = _freeze or freeze
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                if _freeze:
                    gc.freeze()
                if _restore:
                    gc.enable()


def is_paused() -> bool:
    """True while some :func:`paused` block is active."""
    with _lock:
        return _depth > 0


_trim: Any = None


def release_free_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing elsewhere).

    A large graph's layout allocates and frees ~10^6 short-lived objects in a worker thread: glibc keeps
    the freed blocks in that thread's arena, so the process's resident memory stays at its peak (~100 MB
    more for a 50,000-node graph) although nothing uses it."""
    global _trim
    if _trim is None:
        _trim = False
        if sys.platform.startswith("linux"):
            try:
                _trim = ctypes.CDLL("libc.so.6").malloc_trim
                _trim.argtypes = [ctypes.c_size_t]
            except (OSError, AttributeError):  # not glibc (musl: no malloc_trim)
                _trim = False
    if _trim:
        _trim(0)
