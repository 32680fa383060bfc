"""Engine commands that find what breaks a model (issue 21): ``bisect``, ``save_reproducer``.

``bisect`` args: ``run`` (the ``run`` request arguments of the pipeline, ``EngineClient.run_args(doc)``),
``inputs`` (``{"seed"}`` or ``{"path"}``), ``check`` (``{"rtol", "atol"}``), ``check_against`` (``tvm`` or
``framework``), ``function``. Reply: :class:`pipeline_model.debugging.bisect.BisectReport` as JSON. Events:
``bisect_progress`` (``message``, ``builds``, ``budget``, ``tested``, ``step``) and ``build_progress``.
Stoppable between two builds (cancel): the reply then has ``cancelled`` and what was found so far.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline_model.engine.handler_registry import handler

if TYPE_CHECKING:  # the worker imports this module; only type checkers import it back
    from pipeline_model.engine.worker import WorkerContext


@handler("bisect")
def handle_bisect(args: dict, ctx: "WorkerContext") -> dict:
    """Find the first step after which the pipeline's module is wrong (see the module docstring)."""
    from pipeline_model.engine.debugging.bisect_tvm import Bisection

    return Bisection(args, ctx).run()


@handler("save_reproducer")
def handle_save_reproducer(args: dict, ctx: "WorkerContext") -> dict:
    """Write a reproducer folder for a failing step (:mod:`pipeline_model.debugging.reproducer`).

    args: ``run`` (run arguments), ``step_index`` (0-based, the failing step), ``kind`` (``exception``,
    ``crash``, ``hang``, ``numeric``, ``build``), ``error``, ``traceback``, ``timeout_s`` (hang), ``check``,
    ``inputs``, ``function`` (numeric/build), ``out_dir`` (absolute; written with ``safe_write``).
    The failing step itself is not run. Reply: ``folder``, ``files``, ``kind``, ``bindings``, ``note``.
    """
    from pipeline_model.engine.debugging.reproducer_tvm import save

    return save(args, ctx)
