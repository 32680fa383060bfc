"""Engine command ``env``: what this TVM installation is made of (imports TVM).

Reply (see :mod:`pipeline_model.env_report` for how it is shown)::

    {"tvm": {"version", "path"}, "tvm_ffi": {"version", "path"}, "llvm_version": str | None,
     "libinfo": {"USE_LLVM": "ON", "USE_CUDA": ...}, "devices": [DeviceInfo JSON],
     "codegens": {"cublas": bool, ...}, "pattern_tables": {prefix: {"patterns", "codegen", "message"}},
     "pass_configs": {"relax.FuseOps.max_depth": "int", ...},
     "runtime_threads": {"count": int, "source": "usable cores" | "TVM_NUM_THREADS" | ...},
     "runtime_pool": {"TVM_THREAD_POOL_SPIN_COUNT": str, "TVM_BIND_THREADS": str} ("" when unset),
     "thread_pool": {"pool": "app" | "tvm", "why": str, "spin_us": int, "counters": {...}}
                    (pipeline_model.runtime_threads.thread_pool),
     "plugins": {"plugins": [...], "failures": [...]}}  (pipeline_model.plugins.report, every group loaded)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pipeline_model import plugins, runtime_threads
from pipeline_model.engine.build.devices import detect_devices
from pipeline_model.engine.handler_registry import handler

if TYPE_CHECKING:  # the worker imports this module; only type checkers import it back
    from pipeline_model.engine.context import WorkerContext

#: Codegens looked up as ``relax.ext.<name>``.
CODEGENS = ("cublas", "cudnn", "cutlass", "tensorrt", "hipblas", "coreml", "nnapi", "clml", "dnnl")


def _llvm_version() -> Any:
    try:
        import tvm

        return int(tvm.target.codegen.llvm_version_major())
    except Exception:  # noqa: BLE001 - a build without LLVM
        return None


def _pattern_tables() -> dict[str, Any]:
    """The ``pattern_tables`` the pass kinds report (:meth:`~pipeline_model.passkinds.base.PassKind.environment`)."""
    try:
        from pipeline_model.passkinds.registry import all_kinds

        tables: dict[str, Any] = {}
        for kind in all_kinds():
            tables.update(kind.environment().get("pattern_tables") or {})
        return tables
    except Exception as exc:  # noqa: BLE001 - reported, never fatal
        return {"(error)": {"patterns": 0, "codegen": False, "message": f"{type(exc).__name__}: {exc}"}}


def pass_configs() -> dict[str, str]:
    """``tvm.transform.PassContext.list_configs()`` as ``{key: type name}``, sorted by key."""
    from pipeline_model.engine.pass_context_tvm import known_configs  # imports TVM: only when asked


    return dict(sorted(known_configs().items()))


@handler("env")
def handle_env(args: dict, ctx: WorkerContext) -> dict:
    """Versions, paths, build flags, devices, codegens, pattern tables and pass configs of this engine."""
    import tvm
    import tvm_ffi

    tables = _pattern_tables()  # imports the backends, which registers their codegens
    names = sorted(set(CODEGENS) | {k for k in tables if not k.startswith("(")})
    return {
        "tvm": {"version": str(tvm.__version__), "path": os.path.dirname(os.path.abspath(tvm.__file__))},
        "tvm_ffi": {"version": str(tvm_ffi.__version__), "path": os.path.dirname(os.path.abspath(tvm_ffi.__file__))},
        "llvm_version": _llvm_version(),
        "libinfo": {str(k): str(v) for k, v in tvm.support.libinfo().items()},
        "devices": detect_devices(),
        "codegens": {name: tvm.get_global_func(f"relax.ext.{name}", True) is not None for name in names},
        "pattern_tables": tables,
        "pass_configs": pass_configs(),
        "runtime_threads": runtime_threads.in_effect().to_json(),
        "runtime_pool": runtime_threads.pool_in_effect(),
        "thread_pool": runtime_threads.thread_pool(),
        "plugins": engine_plugins(),
    }


def engine_plugins() -> dict[str, Any]:
    """The plug-ins of every group as this engine loaded them (:func:`pipeline_model.plugins.report`; asked after
    the kinds' ``environment()``, in which the DLight kind imports every rule class, so a rule whose module
    fails is named)."""
    from pipeline_model.importers.registry import FORMATS

    FORMATS.load()
    return plugins.report()
