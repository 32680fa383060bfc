"""Targeted MetaSchedule tuning: which PrimFuncs to tune and how many trials each (TVM-free).

A ``relax.MetaScheduleTuneTIR`` step normally tunes every PrimFunc with the same budget. With the
parameters of :data:`FOCUS_PARAMS` it tunes only the functions that hold most of the measured time:

* ``focus``: ``"all"`` (every PrimFunc, or those named in ``functions``), ``"top_k"`` (the ``top_k``
  PrimFuncs with the largest measured time) or ``"share"`` (every PrimFunc holding at least
  ``min_share`` of the measured time);
* ``functions``: PrimFunc names picked by hand (they are tuned whatever ``focus`` says);
* ``total_trials``: the budget of the step (0: ``max_trials_global`` × the number of chosen
  functions), split by share (:func:`allocate_trials`) with at least ``min_trials`` each;
* ``schedule_fn``: the user's own search space, Python source defining ``schedule(sch) -> None``
  (a stochastic schedule, as in TVM's tutorial), applied through ``ms.space_generator.ScheduleFn`` to
  the chosen functions instead of MetaSchedule's generated space. It is user code: it runs only when
  custom code is trusted.

The profile is the engine's profile of the step's input module (``{"entries": [{name, kind,
total_us, share}]}``, see ``pipeline_model.engine.build.measure.profile_vm``). The choice and the
allocation (``choose_tuning_functions``, ``allocate_trials``, ``plan_targeted_tuning``) and the loading of a
``schedule_fn`` live in :mod:`pipeline_model.passkinds.metaschedule.script` (their source is copied into
exported scripts), so a script computes the same plan as the engine from its own profile. This module
holds the parameters and their validation.
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model.passkinds.metaschedule.config import tuning_param as _param

#: Values of the ``focus`` parameter.
FOCUS_MODES = ("all", "top_k", "share")

#: Source of a new ``schedule_fn`` (the tutorial's stochastic matmul schedule, for a block "matmul").
SCHEDULE_FN_TEMPLATE = '''def schedule(sch):
    """A stochastic schedule: MetaSchedule samples the tile sizes (a search space of your own)."""
    block = sch.get_sblock("matmul", "main")
    i, j, k = sch.get_loops(block)
    i0, i1, i2, i3 = sch.split(i, factors=sch.sample_perfect_tile(i, n=4))
    j0, j1, j2, j3 = sch.split(j, factors=sch.sample_perfect_tile(j, n=4))
    k0, k1 = sch.split(k, factors=sch.sample_perfect_tile(k, n=2))
    sch.reorder(i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)
'''


#: Parameters of targeted tuning (``ParamSpec(**d)`` each), added to ``relax.MetaScheduleTuneTIR``.
FOCUS_PARAMS: list[dict] = [
    _param("focus", "choice", "all", "Which PrimFuncs to tune: all, the top_k by measured time, or those "
           "holding at least min_share of it (uses the engine's profile of the step's input).", list(FOCUS_MODES)),
    _param("top_k", "int", 3, "focus = top_k: how many PrimFuncs (largest measured time first)."),
    _param("min_share", "float", 0.1, "focus = share: smallest share of the measured time (0.1 = 10 %)."),
    _param("functions", "str_list", [], "PrimFuncs picked by hand (always tuned; with focus = all only these)."),
    _param("total_trials", "int", 0, "Trials for the whole step when targeted, split by time share "
           "(0: max_trials_global × the number of chosen PrimFuncs)."),
    _param("min_trials", "int", 2, "Fewest trials a chosen PrimFunc gets."),
    _param("time_budget_s", "float", 0.0, "Spend this many seconds of wall-clock time (0: off): every PrimFunc "
           "gets min_trials, the rest goes by FLOPs x calls, tasks continue in later rounds, and time left "
           "goes by the tuned profile. Replaces focus and total_trials."),
    _param("schedule_fn", "code", "", "Your own search space: Python defining schedule(sch) (a stochastic "
           "schedule, ms.space_generator.ScheduleFn) applied to the chosen PrimFuncs. User code: needs trust."),
]
#: Names of :data:`FOCUS_PARAMS`.
FOCUS_PARAM_NAMES = tuple(p["name"] for p in FOCUS_PARAMS)


class FocusError(ValueError):
    """Bad targeted-tuning parameters or functions that do not exist; the message says which."""


def focus_settings(params: dict[str, Any], where: str = "tuning step") -> dict[str, Any]:
    """The targeted-tuning settings of a step's ``params``, validated (defaults filled in).

    Returns ``{focus, top_k, min_share, functions, total_trials, min_trials, schedule_fn}``; raises
    :class:`FocusError` naming ``where`` and the parameter on a bad value."""
    out = {p["name"]: p["default"] for p in FOCUS_PARAMS}
    for name in FOCUS_PARAM_NAMES:
        if name in (params or {}) and params[name] is not None:
            out[name] = params[name]

    def bad(name: str, msg: str) -> FocusError:
        return FocusError(f"{where}: parameter '{name}' {msg}")

    if out["focus"] not in FOCUS_MODES:
        raise bad("focus", f"must be one of {list(FOCUS_MODES)}, not {out['focus']!r}")
    for name in ("top_k", "total_trials", "min_trials"):
        if isinstance(out[name], bool) or not isinstance(out[name], int):
            raise bad(name, f"must be an integer, not {out[name]!r}")
    if out["top_k"] < 1:
        raise bad("top_k", f"must be at least 1, not {out['top_k']}")
    if out["total_trials"] < 0:
        raise bad("total_trials", "must be 0 (per-function budget) or more")
    budget = out["time_budget_s"]
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget < 0:
        raise bad("time_budget_s", f"must be 0 (off) or a number of seconds, not {budget!r}")
    out["time_budget_s"] = float(budget)
    if out["time_budget_s"] > 0 and (out["focus"] != "all" or out["functions"] or str(out["schedule_fn"]).strip()):
        raise bad("time_budget_s", "tunes every PrimFunc: set focus to all, no functions and no schedule_fn")
    if out["min_trials"] < 1:
        raise bad("min_trials", f"must be at least 1, not {out['min_trials']}")
    share = out["min_share"]
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= float(share) <= 1.0:
        raise bad("min_share", f"must be a number from 0 to 1, not {share!r}")
    out["min_share"] = float(share)
    funcs = out["functions"]
    if not isinstance(funcs, list) or not all(isinstance(f, str) for f in funcs):
        raise bad("functions", f"must be a list of PrimFunc names, not {funcs!r}")
    out["functions"] = [f.strip() for f in funcs if f.strip()]
    if not isinstance(out["schedule_fn"], str):
        raise bad("schedule_fn", "must be Python source text")
    return out


def is_budgeted(params: dict[str, Any]) -> bool:
    """True when a ``relax.MetaScheduleTuneTIR`` step spends a wall-clock budget (``time_budget_s`` > 0,
    :mod:`pipeline_model.passkinds.metaschedule.plan`)."""
    value = (params or {}).get("time_budget_s") or 0
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value > 0


def is_targeted(params: dict[str, Any]) -> bool:
    """True when a tuning step tunes chosen PrimFuncs one by one (focus, hand-picked functions or a
    schedule function) instead of running TVM's stock pass over every PrimFunc."""
    params = params or {}
    return (str(params.get("focus") or "all") != "all" or bool(params.get("functions"))
            or bool(str(params.get("schedule_fn") or "").strip()))


def needs_profile(settings: dict[str, Any]) -> bool:
    """Whether choosing/allocating needs a measured profile (not for one hand-picked function)."""
    if settings["focus"] != "all":
        return True
    return len(settings["functions"]) != 1 if settings["functions"] else True


def shorten(text, limit=1200):
    """``text`` cut to ``limit`` characters (plus a note of how much was cut)."""
    text = str(text)
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n# ... {len(text) - limit} more characters"


def schedule_label(step_number: Optional[int]) -> str:
    """The pseudo file name of a step's schedule function (``<schedule_fn of step N>``)."""
    return f"<schedule_fn of step {step_number}>" if step_number else "<schedule_fn>"
