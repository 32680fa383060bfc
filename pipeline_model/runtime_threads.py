"""How many threads TVM's CPU runtime uses, and making it use every core it may run on.

TVM's runtime thread pool (the one ``T.parallel`` loops of a compiled module run on) sizes itself once,
when the first parallel loop runs, from ``TVM_NUM_THREADS``, else ``OMP_NUM_THREADS``, else
``std::thread::hardware_concurrency() / 2`` on x86 — it assumes every core has a hyper-thread sibling.
On a 2-vCPU machine that is **one** thread: every parallel loop of a built model runs serially, while
PyTorch and ONNX Runtime use both cores. Measured on the bench MLP (tuned, 2 vCPUs): 24.5 µs per run with
the default, 14.2 µs with ``TVM_NUM_THREADS=2``; the pool cannot be grown afterwards
(``runtime.config_threadpool`` clamps to the size it started with).

So the engine process (and every process it starts: MetaSchedule's measuring workers inherit the
environment) sets ``TVM_NUM_THREADS`` to the number of cores it may run on before anything runs, unless
the user set ``TVM_NUM_THREADS`` or ``OMP_NUM_THREADS`` — an explicit choice always wins. It also makes the
pool's idle workers sleep at once instead of spinning and leaves them unpinned (``TVM_THREAD_POOL_SPIN_COUNT=0``,
``TVM_BIND_THREADS=0`` unless set: :func:`pipeline_model.scriptlib.threads.pool_settings` says why; a
spinning or pinned worker made every kernel wait for a time slice on a busy machine). Then it puts the app's
own pool in place of TVM's (:func:`pipeline_model.scriptlib.pool.use_app_pool`: the caller takes every part of
a loop no worker has taken, so a late worker costs no wake-up wait and no time slice), which must happen before
TVM's runtime library is loaded. Exported scripts contain the same code (:func:`script_lines`: the source of
:mod:`pipeline_model.scriptlib.threads` and :mod:`pipeline_model.scriptlib.pool`). This module imports neither
TVM nor Qt.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any, Optional

from pipeline_model import scriptlib
from pipeline_model.scriptlib.pool import APP_POOL, POOL_ENV_VAR, pool_counters, use_app_pool
from pipeline_model.scriptlib.threads import POOL_DEFAULTS, explicit_thread_count, pool_settings, use_every_core

_applied: "Optional[RuntimeThreads]" = None
_pool_answer: Optional[str] = None


@dataclass(frozen=True)
class RuntimeThreads:
    """The runtime's thread count and where it comes from (an environment variable or :data:`~pipeline_model.scriptlib.threads.SOURCE_CORES`)."""

    count: int
    source: str

    def to_json(self) -> dict[str, Any]:
        """``{"count": int, "source": str}``."""
        return {"count": self.count, "source": self.source}


def explicit_setting(environ: Optional[MutableMapping[str, str]] = None) -> Optional[RuntimeThreads]:
    """The thread count the user chose through ``TVM_NUM_THREADS`` / ``OMP_NUM_THREADS``, if any.

    A variable that is set but not a positive integer is ignored, as TVM ignores it.
    """
    chosen = explicit_thread_count(os.environ if environ is None else environ)
    return RuntimeThreads(*chosen) if chosen is not None else None


def ensure_runtime_threads(environ: Optional[MutableMapping[str, str]] = None,
                           cores: Optional[int] = None) -> RuntimeThreads:
    """Make TVM's runtime use every usable core unless the user chose a count; return the count in effect.

    Sets ``TVM_NUM_THREADS`` in ``environ`` (default ``os.environ``, which also updates the C environment
    TVM reads) to ``cores`` (default: the usable cores, :func:`pipeline_model.scriptlib.threads.usable_cores`)
    when neither ``TVM_NUM_THREADS`` nor ``OMP_NUM_THREADS`` holds a positive integer, and the pool's settings
    that the user did not set (:func:`~pipeline_model.scriptlib.threads.pool_settings`); for ``os.environ``
    also the app's thread pool (:func:`~pipeline_model.scriptlib.pool.use_app_pool`).
    Call it before ``import tvm`` (the app's pool) and before the first parallel loop of a compiled module runs
    in this process; processes started afterwards inherit the variables.
    """
    global _applied, _pool_answer
    env = os.environ if environ is None else environ
    pool_settings(env)
    chosen = RuntimeThreads(*use_every_core(env, cores))
    if environ is None:
        _applied = chosen
        _pool_answer = use_app_pool(env)
    return chosen


def in_effect() -> RuntimeThreads:
    """The thread count this process runs TVM with: what :func:`ensure_runtime_threads` chose for
    ``os.environ``, else the user's explicit setting, else TVM's own default (half the logical cores on
    x86, at least one)."""
    if _applied is not None:
        return _applied
    chosen = explicit_setting()
    if chosen is not None:
        return chosen
    import platform

    logical = os.cpu_count() or 1
    halved = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
    return RuntimeThreads(max(1, logical // 2 if halved else logical), "TVM default")


def pool_in_effect() -> dict[str, str]:
    """The pool variables of :data:`~pipeline_model.scriptlib.threads.POOL_DEFAULTS` as this process has them
    (``""``: unset, TVM's default: idle workers spin, workers pinned to cores)."""
    return {name: os.environ.get(name, "") for name, _value in POOL_DEFAULTS}


def thread_pool() -> dict[str, Any]:
    """Which pool runs this process's parallel loops: ``{"pool": "app" | "tvm", "why": str, "spin_us": int,
    "counters": {...}}`` — ``why`` says why TVM's pool runs (empty for the app's; "not set up" before
    :func:`ensure_runtime_threads`), ``counters`` are :func:`~pipeline_model.scriptlib.pool.pool_counters`."""
    answer = _pool_answer if _pool_answer is not None else "not set up"
    if answer == APP_POOL:
        counters = pool_counters()
        return {"pool": APP_POOL, "why": "", "spin_us": counters.get("spin_us", 0), "counters": counters}
    return {"pool": "tvm", "why": answer, "spin_us": 0, "counters": {}}


def describe(threads: RuntimeThreads) -> str:
    """One line for reports: ``"2 (usable cores)"`` or ``"4 (TVM_NUM_THREADS)"``."""
    return f"{threads.count} ({threads.source})"


def script_lines() -> list[str]:
    """Python lines for a generated script, placed before ``import tvm``: the engine's own rule, its code
    copied from :mod:`pipeline_model.scriptlib.threads`, then the call. They need only ``import os`` above them.
    """
    return [
        "# TVM's CPU runtime uses half the logical cores unless told otherwise (it assumes hyper-threading);",
        "# use every core this process may run on, as the app does, unless TVM_NUM_THREADS/OMP_NUM_THREADS is set,",
        "# and let its idle workers sleep instead of spinning, not pinned to cores (unless TVM_THREAD_POOL_SPIN_COUNT /",
        "# TVM_BIND_THREADS are set): a busy machine then does not make every parallel kernel wait for a time slice.",
        *scriptlib.module_source("threads", imports=False).splitlines(),
        "",
        "",
        "# Then run parallel loops on the app's thread pool instead of TVM's (before import tvm), as the app does:",
        f"# the caller takes every part of a loop no worker has taken yet ({POOL_ENV_VAR}=tvm keeps TVM's pool).",
        *scriptlib.module_source("pool", imports=False).splitlines(),
        "",
        "",
        "pool_settings(os.environ)",
        "use_every_core(os.environ)",
        "THREAD_POOL = use_app_pool(os.environ)",
    ]
