"""How TVM's CPU runtime thread pool runs: on every core this process may run on, its idle workers asleep at
once and free to move between cores, unless the user chose otherwise.

The engine (:func:`pipeline_model.runtime_threads.ensure_runtime_threads`), the environment report, the bench's
app column and exported scripts (this module's code, before ``import tvm``) share these functions. Standard
library only; its code needs nothing but ``import os`` above it.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

#: Environment variables TVM's runtime reads for its thread count, in the order it reads them.
THREAD_ENV_VARS = ("TVM_NUM_THREADS", "OMP_NUM_THREADS")
#: Where the thread count came from when it was not the user's choice.
SOURCE_CORES = "usable cores"
#: TVM's pool variable: how many times an idle worker calls ``sched_yield`` looking for its next task before it
#: sleeps (TVM's default 300000, read once when the pool starts).
SPIN_ENV_VAR = "TVM_THREAD_POOL_SPIN_COUNT"
#: TVM's pool variable: ``1`` (TVM's default) pins worker ``i`` to core ``i`` when the pool starts; ``0`` leaves
#: them where the scheduler puts them.
BIND_ENV_VAR = "TVM_BIND_THREADS"
#: What the app sets these to unless the user set them (:func:`pool_settings`).
POOL_DEFAULTS = ((SPIN_ENV_VAR, "0"), (BIND_ENV_VAR, "0"))


def usable_cores() -> int:
    """The number of CPUs this process may run on (its affinity mask; ``os.cpu_count()`` where there is none)."""
    if hasattr(os, "sched_getaffinity"):
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except OSError:
            pass
    return max(1, os.cpu_count() or 1)


def explicit_thread_count(environ: "MutableMapping[str, str]") -> "tuple[int, str] | None":
    """``(count, variable)`` the user chose through ``TVM_NUM_THREADS`` / ``OMP_NUM_THREADS``, if any.

    A variable that is set but not a positive integer is ignored, as TVM ignores it.
    """
    for name in THREAD_ENV_VARS:
        try:
            value = int(str(environ.get(name)).strip())
        except (TypeError, ValueError):
            continue
        if value > 0:
            return value, name
    return None


def use_every_core(environ: "MutableMapping[str, str]", cores: "int | None" = None) -> "tuple[int, str]":
    """Set ``TVM_NUM_THREADS`` in ``environ`` to ``cores`` (default :func:`usable_cores`) unless the user
    chose a count; return ``(count in effect, where it comes from)`` (a variable name or :data:`SOURCE_CORES`)."""
    chosen = explicit_thread_count(environ)
    if chosen is not None:
        return chosen
    count = max(1, int(cores if cores is not None else usable_cores()))
    environ["TVM_NUM_THREADS"] = str(count)
    return count, SOURCE_CORES


def pool_settings(environ: "MutableMapping[str, str]") -> "dict[str, str]":
    """Set :data:`POOL_DEFAULTS` in ``environ`` (idle workers sleep, workers not pinned) where the user set no
    value; return each variable's value in effect.

    TVM's pool splits each parallel loop statically, one part per thread, and the caller waits for every part.
    A worker that spins between loops yields its core on every turn: when another process shares that core,
    each yield hands it the core for a whole time slice, and every parallel kernel waits for it (issue 35: with
    one core kept busy GPT-2 took 19 ms instead of 0.5). A sleeping worker is woken when its part arrives and,
    having used little CPU, runs at once. A worker pinned to a core that another process keeps busy cannot
    move to a free one (MobileNetV3-small on the shared 2-core machine at load 4.4-5.5: 15-24 ms with TVM's
    defaults, 5.5-13 ms sleeping but pinned, 2.2-4.3 ms with both settings).
    docs/PERFORMANCE.md "One core kept busy" has the figures.
    """
    chosen = {}
    for name, value in POOL_DEFAULTS:
        current = environ.get(name)
        if current is None or not str(current).strip():
            environ[name] = current = value
        chosen[name] = str(current)
    return chosen
